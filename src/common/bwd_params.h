#pragma once
// BwdParams: the backward's device-side parameters (built in src/api/params.cpp from validated
// arguments). It extends the forward's (same q/k/v/out pointers, strides, mask, softcap, ALiBi) with
// dout, the forward's LSE, the gradients, and the caller's workspace carved as bwd_workspace.h says.

#include <cstdint>

#include "common/fwd_params.h"

namespace flashcute {

struct BwdParams : FwdParams {
  const void* dout = nullptr;
  int64_t do_batch_stride = 0, do_row_stride = 0, do_head_stride = 0;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  int64_t dq_batch_stride = 0, dq_row_stride = 0, dq_head_stride = 0;
  int64_t dk_batch_stride = 0, dk_row_stride = 0, dk_head_stride = 0;
  int64_t dv_batch_stride = 0, dv_row_stride = 0, dv_head_stride = 0;
  // `lse` (inherited, never null here) is the forward's LSE, same layout as the forward writes it.

  bool deterministic = false;

  // Rows of q / k over all sequences: batch * seqlen (dense) or the varlen totals. The fp32
  // workspace arrays below but dq_accum are indexed (head, row, column) with row = first row of the
  // sequence (b * seqlen, or cu_seqlens[b]) + row within it, and a row of head_dim (dk) or head_dim_v
  // (dv) floats: the element (h, r, c) is at (h * total + r) * dim + c.
  int64_t total_q = 0;
  int64_t total_k = 0;

  // Workspace (caller-owned, sized by bwd_workspace_size; carved in src/api/params.cpp).
  float* dq_accum = nullptr;    // (heads_q, dq_accum_rows, bucket) in query-block tiles (sm80/bwd_workspace.h):
                                // dQ / softmax_scale, summed over key blocks
  int64_t dq_accum_rows = 0;    // total_q + batch * block_m
  float* softmax_d = nullptr;   // (heads_q, total_q): D = rowsum(dO * O)
  float* lse_log2 = nullptr;    // (heads_q, total_q): lse * log2(e); +inf where lse is -inf (P = 0)
  float* dk_accum = nullptr;    // GQA only (else null): (heads_q, total_k, head_dim) per-q-head dK
  float* dv_accum = nullptr;    // GQA only (else null): (heads_q, total_k, head_dim_v) per-q-head dV
  int* dq_semaphore = nullptr;  // deterministic only: (batch, heads_q, semaphore_m_blocks) turn counters
  int semaphore_m_blocks = 0;   // counters per (batch, head): ceil(seqlen_q / kBwdMinBlockM)
  float* dkv_split = nullptr;   // (split_slots, 2, block_n, bucket): the split units' dK and dV sums
  int* split_count = nullptr;   // (split_slots): pieces of each split unit that have added theirs
  int split_slots = 0;          // 0: this problem's grid is never split (sm80/bwd_workspace.h)

  // Set by the SM80 launcher (sm80/bwd.cuh): the main kernel's one-dimensional grid walks groups of
  // this many (batch, q head) pairs, key blocks outermost within a group (sm80/bwd_grid.h).
  int cta_group = 1;
  // Set by the SM80 launcher: units [split_first, split_first + split_tail) of that grid run as
  // split_pieces CTAs each (sm80/bwd_grid.h's bwd_split_plan); split_pieces 1 = no split.
  int split_first = 0;
  int split_tail = 0;
  int split_pieces = 1;
};

}  // namespace flashcute
