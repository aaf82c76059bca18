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
// total_q / total_k: batch * seqlen (dense) or the rows of the varlen tensors; seqlen_q is
// max_seqlen_q for varlen. Rows are not padded (every kernel predicates its rows), except in
// dq_accum: bucket = the backward kernel's head-dim bucket, and sequence b's tiles start at row
// first_row(b) + b * block_m, so that its last, partial tile ends before the next sequence's first:
// dq_rows = total_q + batch * block_m.

#include <cstddef>
#include <cstdint>

#include "api/problem.h"
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
  size_t bytes = 0;  // total
};

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
  w.bytes = at;
  return w;
}

inline size_t bwd_workspace_bytes(const ProblemDesc& p) {
  return bwd_workspace_layout(p).bytes;
}

}  // namespace flashcute::sm80
