#pragma once
// FwdParams: the forward's device-side parameters, built once from the validated host arguments
// (src/api/params.cpp) and passed to every forward kernel as a __grid_constant__. Plain data only:
// no CuTe, no CUDA types, 64-bit strides and offsets everywhere.

#include <cstddef>
#include <cstdint>

#include "common/mask.h"

namespace flashcute {

// Bytes of the forward's optional workspace (fwd_workspace_size): the SM90 persistent kernel's tile
// counter, one int, with room to spare.
inline constexpr size_t kFwdWorkspaceBytes = 16;

struct FwdParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  float* lse = nullptr;  // may be null: the caller did not ask for it

  // Strides in elements. Varlen tensors have no batch stride (rows are offset by cu_seqlens).
  int64_t q_batch_stride = 0, q_row_stride = 0, q_head_stride = 0;
  int64_t k_batch_stride = 0, k_row_stride = 0, k_head_stride = 0;
  int64_t v_batch_stride = 0, v_row_stride = 0, v_head_stride = 0;
  int64_t o_batch_stride = 0, o_row_stride = 0, o_head_stride = 0;
  // LSE element (b, h, i): dense (batch, heads, seqlen_q) or varlen (heads, total_q) with i offset
  // by cu_seqlens_q[b]; rows are contiguous in both.
  int64_t lse_batch_stride = 0, lse_head_stride = 0;

  const int32_t* cu_seqlens_q = nullptr;  // null: dense
  const int32_t* cu_seqlens_k = nullptr;

  int batch = 0;
  int heads_q = 0;
  int heads_kv = 0;
  int head_ratio = 1;    // heads_q / heads_kv: q head h reads kv head h / head_ratio
  int64_t seqlen_q = 0;  // dense length, or max_seqlen_q (sizes the grid) for varlen
  int64_t seqlen_k = 0;
  // Rows of q and k/v in memory: varlen packed totals, dense batch * seqlen (the SM90 path's TMA
  // descriptors cover exactly these rows).
  int64_t total_rows_q = 0;
  int64_t total_rows_k = 0;
  int head_dim = 0;      // d of q and k (<= the kernel's bucket)
  int head_dim_v = 0;    // d of v and out

  float softmax_scale = 0.0f;
  float softcap = 0.0f;  // 0 = off
  float softcap_scale = 0.0f;  // softmax_scale / softcap (softcap on): tanh's argument multiplier
  // exp2 multiplier of the scores the softmax sees: scale*log2(e) for raw scores, log2(e) when a
  // score transform (softcap, ALiBi) has already applied the scale.
  float score_log2_mult = 0.0f;
  bool transform_scores = false;  // softcap or ALiBi on
  Window window;

  const float* alibi_slopes = nullptr;  // null: off
  int64_t alibi_batch_stride = 0;       // 0: per head; heads_q: per (batch, head)

  // The caller's forward workspace (fwd_workspace_size bytes, 256-byte aligned), or null when the
  // call came without one (it is optional). The SM90 persistent kernel keeps its dynamic tile
  // counter there.
  void* workspace = nullptr;
  // The caller promised the workspace is zero (Workspace::zeroed): no counter reset before the launch.
  bool workspace_zeroed = false;
};

}  // namespace flashcute
