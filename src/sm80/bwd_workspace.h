#pragma once
// The SM80 backward's workspace: how many bytes bwd_workspace_size() reports, and where each array
// lies inside the caller's buffer. Host only; one formula for sizing (src/api/api.cpp) and carving
// (src/api/params.cpp), so the two can never disagree. The library allocates nothing.
//
// Arrays (fp32 unless said otherwise), each starting on a 256-byte boundary:
//   dq_accum   (heads_q, dq_rows, bucket)       dQ summed over key blocks (cleared by the preprocess),
//                                               in tiles of block_m rows (bwd_traits.cuh, BwdDqTile)
//   softmax_d  (heads_q, total_q)               D = rowsum(dO * O)
//   lse_log2   (heads_q, total_q)               the forward's LSE in log2 units, +inf for -inf
//   dk_accum   (heads_q, total_k, head_dim)     GQA/MQA only: dK of each q head, summed over the group
//   dv_accum   (heads_q, total_k, head_dim_v)   GQA/MQA only: dV of each q head        by the postprocess
//   semaphore  int32 (batch, heads_q, ceil(seqlen_q / kBwdMinBlockM))
//                                               deterministic only: per query block, how many key
//                                               blocks have added their dQ so far
//   dkv_split  (split_slots, 2, block_n, bucket) where bwd_split_eligible: the split units' dK and dV
//                                               sums, each in the order of the dK/dV fragments
//                                               (bwd_grid.h, bwd_kernel.cuh); cleared by the preprocess
//   split_count int32 (split_slots)             how many pieces of each split unit have added theirs
// total_q / total_k: batch * seqlen (dense) or the rows of the varlen tensors; seqlen_q is
// max_seqlen_q for varlen. Rows are not padded (every kernel predicates its rows), except in
// dq_accum: bucket = the backward kernel's head-dim bucket, and sequence b's tiles start at row
// first_row(b) + b * block_m, so that its last, partial tile ends before the next sequence's first:
// dq_rows = total_q + batch * block_m.

#include <cstddef>
#include <cstdint>

#include "api/problem.h"
#include "sm80/bwd_grid.h"
#include "sm80/bwd_tile_config.h"

namespace flashcute::sm80 {

struct BwdWorkspaceLayout {
  // Byte offsets from the start of the workspace; `none` where the array is not needed.
  static constexpr size_t kNone = ~size_t{0};
  size_t dq_accum = kNone;
  size_t softmax_d = kNone;
  size_t lse_log2 = kNone;
  size_t dk_accum = kNone;
  size_t dv_accum = kNone;
  size_t semaphore = kNone;
  int64_t dq_rows = 0;  // rows of dq_accum per q head
  int64_t semaphore_m_blocks = 0;
  size_t dkv_split = kNone;
  size_t split_count = kNone;
  int64_t split_slots = 0;  // split units the workspace has room for (0: the grid is never split)
  size_t bytes = 0;         // total
};

// Whether the main kernel's last wave may be split (bwd_grid.h): every CTA then has the same work
// (no mask but the sequence ends, fixed lengths), the mode allows atomics, and the scores need no
// transform (the split runs the plain kernel only, bwd_kernel.cuh).
inline bool bwd_split_eligible(const ProblemDesc& p) {
  return !p.deterministic && !p.varlen && p.window.left < 0 && p.window.right < 0 && p.softcap <= 0.0f &&
         !p.has_alibi;
}

inline BwdWorkspaceLayout bwd_workspace_layout(const ProblemDesc& p) {
  BwdWorkspaceLayout w;
  size_t at = 0;
  auto take = [&at](size_t bytes) {
    const size_t offset = at;
    at += (bytes + 255) / 256 * 256;
    return offset;
  };
  const auto n = [](int64_t x) { return static_cast<size_t>(x < 0 ? 0 : x); };
  constexpr size_t kF = sizeof(float);
  const int32_t bucket = p.bwd_bucket;
  const int block_m = bwd_tile_config(bucket).block_m;
  w.dq_rows = p.total_q + p.batch * block_m;
  w.dq_accum = take(n(p.heads_q) * n(w.dq_rows) * n(bucket) * kF);
  w.softmax_d = take(n(p.heads_q) * n(p.total_q) * kF);
  w.lse_log2 = take(n(p.heads_q) * n(p.total_q) * kF);
  if (p.heads_q != p.heads_kv) {
    w.dk_accum = take(n(p.heads_q) * n(p.total_k) * n(p.head_dim) * kF);
    w.dv_accum = take(n(p.heads_q) * n(p.total_k) * n(p.head_dim_v) * kF);
  }
  if (p.deterministic) {
    w.semaphore_m_blocks = (p.seqlen_q + kBwdMinBlockM - 1) / kBwdMinBlockM;
    w.semaphore = take(n(p.batch) * n(p.heads_q) * n(w.semaphore_m_blocks) * sizeof(int32_t));
  }
  if (const BwdTileConfig c = bwd_tile_config(bucket); c.block_n > 0 && bwd_split_eligible(p)) {
    const int64_t units = int64_t(p.heads_q) * p.batch * ((p.seqlen_k + c.block_n - 1) / c.block_n);
    w.split_slots = units < kBwdMaxSplitUnits ? units : kBwdMaxSplitUnits;
    if (w.split_slots > 0) {
      w.dkv_split = take(n(w.split_slots) * 2 * n(c.block_n) * n(bucket) * kF);
      w.split_count = take(n(w.split_slots) * sizeof(int32_t));
    } else {
      w.split_slots = 0;
    }
  }
  w.bytes = at;
  return w;
}

inline size_t bwd_workspace_bytes(const ProblemDesc& p) {
  return bwd_workspace_layout(p).bytes;
}

}  // namespace flashcute::sm80
