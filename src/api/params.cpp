#include "api/params.h"

#include "sm80/bwd_workspace.h"

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
  f->softcap_scale = p.softcap > 0.0f ? p.softmax_scale / p.softcap : 0.0f;
  f->window = p.window;
  f->transform_scores = p.softcap > 0.0f || p.has_alibi;
  f->score_log2_mult = f->transform_scores ? kLog2e : p.softmax_scale * kLog2e;
  if (p.has_alibi) {
    f->alibi_slopes = static_cast<const float*>(o.alibi_slopes.data);
    f->alibi_batch_stride = p.alibi_per_batch ? o.alibi_slopes.stride[0] : 0;
  }
}

// The backward's own fields shared by the dense and varlen forms: workspace carving, totals, mode.
void fill_bwd(const ProblemDesc& p, const Workspace& ws, BwdParams* b) {
  b->deterministic = p.deterministic;
  b->total_q = p.total_q;
  b->total_k = p.total_k;
  const sm80::BwdWorkspaceLayout w = sm80::bwd_workspace_layout(p);
  char* base = static_cast<char*>(ws.data);
  const auto at = [base](size_t offset) {
    return offset == sm80::BwdWorkspaceLayout::kNone || base == nullptr ? nullptr : base + offset;
  };
  b->dq_accum = reinterpret_cast<float*>(at(w.dq_accum));
  b->softmax_d = reinterpret_cast<float*>(at(w.softmax_d));
  b->lse_log2 = reinterpret_cast<float*>(at(w.lse_log2));
  b->dk_accum = reinterpret_cast<float*>(at(w.dk_accum));
  b->dv_accum = reinterpret_cast<float*>(at(w.dv_accum));
  b->dq_semaphore = reinterpret_cast<int*>(at(w.semaphore));
  b->semaphore_m_blocks = static_cast<int>(w.semaphore_m_blocks);
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

BwdParams make_bwd_params(const BwdArgs& a, const ProblemDesc& p) {
  BwdParams b;
  b.q = a.q.data;
  b.k = a.k.data;
  b.v = a.v.data;
  b.out = a.out.data;
  b.dout = a.dout.data;
  b.lse = static_cast<float*>(a.lse.data);
  b.dq = a.dq.data;
  b.dk = a.dk.data;
  b.dv = a.dv.data;
  b.q_batch_stride = a.q.stride[0], b.q_row_stride = a.q.stride[1], b.q_head_stride = a.q.stride[2];
  b.k_batch_stride = a.k.stride[0], b.k_row_stride = a.k.stride[1], b.k_head_stride = a.k.stride[2];
  b.v_batch_stride = a.v.stride[0], b.v_row_stride = a.v.stride[1], b.v_head_stride = a.v.stride[2];
  b.o_batch_stride = a.out.stride[0], b.o_row_stride = a.out.stride[1], b.o_head_stride = a.out.stride[2];
  b.do_batch_stride = a.dout.stride[0], b.do_row_stride = a.dout.stride[1], b.do_head_stride = a.dout.stride[2];
  b.dq_batch_stride = a.dq.stride[0], b.dq_row_stride = a.dq.stride[1], b.dq_head_stride = a.dq.stride[2];
  b.dk_batch_stride = a.dk.stride[0], b.dk_row_stride = a.dk.stride[1], b.dk_head_stride = a.dk.stride[2];
  b.dv_batch_stride = a.dv.stride[0], b.dv_row_stride = a.dv.stride[1], b.dv_head_stride = a.dv.stride[2];
  b.lse_batch_stride = p.heads_q * p.seqlen_q;
  b.lse_head_stride = p.seqlen_q;
  fill_common(p, a.options, &b);
  fill_bwd(p, a.workspace, &b);
  return b;
}

BwdParams make_bwd_params(const VarlenBwdArgs& a, const ProblemDesc& p) {
  BwdParams b;
  b.q = a.q.data;
  b.k = a.k.data;
  b.v = a.v.data;
  b.out = a.out.data;
  b.dout = a.dout.data;
  b.lse = static_cast<float*>(a.lse.data);
  b.dq = a.dq.data;
  b.dk = a.dk.data;
  b.dv = a.dv.data;
  b.q_row_stride = a.q.stride[0], b.q_head_stride = a.q.stride[1];
  b.k_row_stride = a.k.stride[0], b.k_head_stride = a.k.stride[1];
  b.v_row_stride = a.v.stride[0], b.v_head_stride = a.v.stride[1];
  b.o_row_stride = a.out.stride[0], b.o_head_stride = a.out.stride[1];
  b.do_row_stride = a.dout.stride[0], b.do_head_stride = a.dout.stride[1];
  b.dq_row_stride = a.dq.stride[0], b.dq_head_stride = a.dq.stride[1];
  b.dk_row_stride = a.dk.stride[0], b.dk_head_stride = a.dk.stride[1];
  b.dv_row_stride = a.dv.stride[0], b.dv_head_stride = a.dv.stride[1];
  b.lse_head_stride = p.total_q;
  b.cu_seqlens_q = static_cast<const int32_t*>(a.cu_seqlens_q.data);
  b.cu_seqlens_k = static_cast<const int32_t*>(a.cu_seqlens_k.data);
  fill_common(p, a.options, &b);
  fill_bwd(p, a.workspace, &b);
  return b;
}

}  // namespace flashcute
