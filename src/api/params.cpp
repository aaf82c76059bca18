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
  f->total_rows_q = p.total_q;
  f->total_rows_k = p.total_k;
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
  b->dq_accum_rows = w.dq_rows;
  b->softmax_d = reinterpret_cast<float*>(at(w.softmax_d));
  b->lse_log2 = reinterpret_cast<float*>(at(w.lse_log2));
  b->dk_accum = reinterpret_cast<float*>(at(w.dk_accum));
  b->dv_accum = reinterpret_cast<float*>(at(w.dv_accum));
  b->dq_semaphore = reinterpret_cast<int*>(at(w.semaphore));
  b->semaphore_m_blocks = static_cast<int>(w.semaphore_m_blocks);
  b->dkv_split = reinterpret_cast<float*>(at(w.dkv_split));
  b->split_count = reinterpret_cast<int*>(at(w.split_count));
  b->split_slots = b->dkv_split != nullptr ? static_cast<int>(w.split_slots) : 0;
}

}  // namespace

namespace {

// (batch, row, head) strides of a dense (rank 4) or varlen (rank 3: no batch stride) tensor.
void set_strides(const TensorDesc& t, int64_t* batch, int64_t* row, int64_t* head) {
  const int o = t.rank == 4 ? 1 : 0;
  *batch = t.rank == 4 ? t.stride[0] : 0;
  *row = t.stride[o];
  *head = t.stride[o + 1];
}

// The fields the forward and backward share: q/k/v/out/lse, their strides, cu_seqlens, options.
template <class Args>
void fill_io(const Args& a, const ProblemDesc& p, FwdParams* f) {
  f->q = a.q.data;
  f->k = a.k.data;
  f->v = a.v.data;
  f->out = a.out.data;
  f->lse = p.has_lse ? static_cast<float*>(a.lse.data) : nullptr;
  set_strides(a.q, &f->q_batch_stride, &f->q_row_stride, &f->q_head_stride);
  set_strides(a.k, &f->k_batch_stride, &f->k_row_stride, &f->k_head_stride);
  set_strides(a.v, &f->v_batch_stride, &f->v_row_stride, &f->v_head_stride);
  set_strides(a.out, &f->o_batch_stride, &f->o_row_stride, &f->o_head_stride);
  if constexpr (requires { a.cu_seqlens_q; }) {  // the varlen argument structs
    f->lse_head_stride = p.total_q;
    f->cu_seqlens_q = static_cast<const int32_t*>(a.cu_seqlens_q.data);
    f->cu_seqlens_k = static_cast<const int32_t*>(a.cu_seqlens_k.data);
  } else {
    f->lse_batch_stride = p.heads_q * p.seqlen_q;
    f->lse_head_stride = p.seqlen_q;
  }
  fill_common(p, a.options, f);
}

template <class Args>
BwdParams bwd_params(const Args& a, const ProblemDesc& p) {
  BwdParams b;
  fill_io(a, p, &b);
  b.dout = a.dout.data;
  b.dq = a.dq.data;
  b.dk = a.dk.data;
  b.dv = a.dv.data;
  set_strides(a.dout, &b.do_batch_stride, &b.do_row_stride, &b.do_head_stride);
  set_strides(a.dq, &b.dq_batch_stride, &b.dq_row_stride, &b.dq_head_stride);
  set_strides(a.dk, &b.dk_batch_stride, &b.dk_row_stride, &b.dk_head_stride);
  set_strides(a.dv, &b.dv_batch_stride, &b.dv_row_stride, &b.dv_head_stride);
  fill_bwd(p, a.workspace, &b);
  return b;
}

// The forward's params: tensors, options and the optional workspace (null when none was given).
template <class Args>
FwdParams fwd_params(const Args& a, const ProblemDesc& p) {
  FwdParams f;
  fill_io(a, p, &f);
  f.workspace = a.workspace.bytes >= kFwdWorkspaceBytes ? a.workspace.data : nullptr;
  f.workspace_zeroed = f.workspace != nullptr && a.workspace.zeroed;
  return f;
}

}  // namespace

FwdParams make_fwd_params(const FwdArgs& a, const ProblemDesc& p) { return fwd_params(a, p); }
FwdParams make_fwd_params(const VarlenFwdArgs& a, const ProblemDesc& p) { return fwd_params(a, p); }

BwdParams make_bwd_params(const BwdArgs& a, const ProblemDesc& p) { return bwd_params(a, p); }
BwdParams make_bwd_params(const VarlenBwdArgs& a, const ProblemDesc& p) { return bwd_params(a, p); }

}  // namespace flashcute
