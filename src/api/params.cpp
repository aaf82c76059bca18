#include "api/params.h"

namespace flashcute {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

void fill_common(const ProblemDesc& p, const AttentionOptions& o, FwdParams* f) {
  f->batch = static_cast<int>(p.batch);
  f->heads_q = static_cast<int>(p.heads_q);
  f->heads_kv = static_cast<int>(p.heads_kv);
  f->head_ratio = static_cast<int>(p.heads_q / p.heads_kv);
  f->seqlen_q = p.seqlen_q;
  f->seqlen_k = p.seqlen_k;
  f->head_dim = static_cast<int>(p.head_dim);
  f->head_dim_v = static_cast<int>(p.head_dim_v);
  f->softmax_scale = p.softmax_scale;
  f->softcap = p.softcap;
  f->window = p.window;
  f->transform_scores = p.softcap > 0.0f || p.has_alibi;
  f->score_log2_mult = f->transform_scores ? kLog2e : p.softmax_scale * kLog2e;
  if (p.has_alibi) {
    f->alibi_slopes = static_cast<const float*>(o.alibi_slopes.data);
    f->alibi_batch_stride = p.alibi_per_batch ? o.alibi_slopes.stride[0] : 0;
  }
}

}  // namespace

FwdParams make_fwd_params(const FwdArgs& a, const ProblemDesc& p) {
  FwdParams f;
  f.q = a.q.data;
  f.k = a.k.data;
  f.v = a.v.data;
  f.out = a.out.data;
  f.lse = p.has_lse ? static_cast<float*>(a.lse.data) : nullptr;
  f.q_batch_stride = a.q.stride[0], f.q_row_stride = a.q.stride[1], f.q_head_stride = a.q.stride[2];
  f.k_batch_stride = a.k.stride[0], f.k_row_stride = a.k.stride[1], f.k_head_stride = a.k.stride[2];
  f.v_batch_stride = a.v.stride[0], f.v_row_stride = a.v.stride[1], f.v_head_stride = a.v.stride[2];
  f.o_batch_stride = a.out.stride[0], f.o_row_stride = a.out.stride[1], f.o_head_stride = a.out.stride[2];
  f.lse_batch_stride = p.heads_q * p.seqlen_q;
  f.lse_head_stride = p.seqlen_q;
  fill_common(p, a.options, &f);
  return f;
}

FwdParams make_fwd_params(const VarlenFwdArgs& a, const ProblemDesc& p) {
  FwdParams f;
  f.q = a.q.data;
  f.k = a.k.data;
  f.v = a.v.data;
  f.out = a.out.data;
  f.lse = p.has_lse ? static_cast<float*>(a.lse.data) : nullptr;
  f.q_row_stride = a.q.stride[0], f.q_head_stride = a.q.stride[1];
  f.k_row_stride = a.k.stride[0], f.k_head_stride = a.k.stride[1];
  f.v_row_stride = a.v.stride[0], f.v_head_stride = a.v.stride[1];
  f.o_row_stride = a.out.stride[0], f.o_head_stride = a.out.stride[1];
  f.lse_head_stride = p.total_q;
  f.cu_seqlens_q = static_cast<const int32_t*>(a.cu_seqlens_q.data);
  f.cu_seqlens_k = static_cast<const int32_t*>(a.cu_seqlens_k.data);
  fill_common(p, a.options, &f);
  return f;
}

}  // namespace flashcute
