#pragma once
// The SM80 backward main kernel's grid order (host and device; CPU-tested in tests/cpu/test_bwd_grid.cpp).
//
// The grid is one dimension, dispatched in index order: groups of `group` (batch, q head) pairs, head
// fastest, and within a group the first key block of every pair, then the second, and so on. Under a
// causal mask (or a window) the key blocks near the start see the most query blocks, so each group
// is a longest-first list: the long CTAs start early and the short ones fill the last wave's tail,
// where one pair's key blocks after another's (FlashAttention-2's order) starts long CTAs last. The
// groups are sized so that the pairs running at once keep their Q, dO and dQ accumulator in L2. The
// deterministic mode's waits point at smaller key blocks of the same pair: smaller indices,
// dispatched earlier (bwd_kernel.cuh).
//
// The last wave's split (bwd_split_plan): where every CTA has the same work (no causal mask or window,
// no varlen, not deterministic), `units` CTAs on `slots` resident ones leave the last wave
// `units % slots` CTAs long with the rest of the GPU idle (FlashAttention-2's grid has the same tail:
// 4096 CTAs at d 64 on 132 SMs is 31 waves and 4 CTAs). The plan runs the last `tail` units each as
// `pieces` CTAs, which walk disjoint runs of the unit's query blocks; each piece adds its dK and dV
// into a per-unit fp32 slot of the workspace, and the piece that arrives last (a counter per unit)
// reads the sum back and writes the unit's dK and dV as a whole unit would (bwd_kernel.cuh).

#include <cstdint>

#include "common/host_device.h"

namespace flashcute::sm80 {

// (batch, q head) pairs per group: the largest power of two whose Q, dO (16-bit) and dQ accumulator
// (fp32), 8 bytes per element together, fit 16 MiB (a third of an H100's L2, 40% of an A100's),
// capped at `pairs` (then one group: a longest-first list of the whole grid). Measured against one
// pair after another in docs/perf-notes.md (session 17).
inline int bwd_cta_group(int64_t seqlen_q, int head_dim, int64_t pairs) {
  const int64_t per_pair = (seqlen_q > 0 ? seqlen_q : 1) * head_dim * 8;
  int64_t group = 1;
  while (group * 2 * per_pair <= (int64_t(16) << 20)) group *= 2;
  return static_cast<int>(group < pairs ? group : (pairs > 0 ? pairs : 1));
}

struct BwdCta {
  int n_block, head, batch;
};

// CTA `idx` of the grid of n_blocks x heads_q x batch CTAs (idx < that product < 2^31).
FC_HOST_DEVICE BwdCta bwd_cta(int idx, int heads_q, int batch, int group, int n_blocks) {
  const int pairs = heads_q * batch;
  const int per_group = group * n_blocks;
  const int g = idx / per_group;
  const int in_group = idx - g * per_group;
  const int left = pairs - g * group;
  const int group_pairs = left < group ? left : group;  // the last group may be short
  const int n_block = in_group / group_pairs;
  const int pair = g * group + (in_group - n_block * group_pairs);
  const int b = pair / heads_q;
  return {n_block, pair - b * heads_q, b};
}

// The split of the grid's last units (see the top). pieces == 1: none.
struct BwdSplit {
  int tail = 0;    // the last `tail` units of the grid are split
  int pieces = 1;  // CTAs per split unit
};

inline constexpr int kBwdMaxPieces = 16;       // CTAs per split unit, at most
inline constexpr int kBwdMaxSplitUnits = 256;  // split units, at most (sizes the workspace's slots)

// The plan for `units` CTAs of `m_steps` query blocks each on `slots` resident CTAs, at most
// `max_tail` split units. A list-scheduling model in query-block steps: a unit costs m_steps + 1 (its
// prologue and epilogue count as about one step), a piece ceil(m_steps / pieces) + 2 (the same plus
// adding its dK and dV into the slot and, for the last, reading them back). The full units run in whole
// waves, then the pieces; tail is the last wave's units (or that plus one wave), pieces the count
// that minimizes the modeled time, kept only when it beats the unsplit grid by more than 1%.
inline BwdSplit bwd_split_plan(int64_t units, int64_t m_steps, int64_t slots, int64_t max_tail) {
  BwdSplit best;
  if (units <= 0 || m_steps < 2 || slots <= 0 || max_tail <= 0) return best;
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t unsplit = ceil_div(units, slots) * (m_steps + 1);
  int64_t best_cost = unsplit - unsplit / 100 - 1;  // must beat the unsplit grid by more than 1%
  const int64_t rest = units % slots;
  for (int64_t tail = rest; tail <= rest + slots; tail += slots) {
    if (tail == 0 || tail > units || tail > max_tail) continue;
    const int64_t waves = (units - tail) / slots;
    for (int64_t k = 2; k <= kBwdMaxPieces && k <= m_steps; ++k) {
      const int64_t cost = waves * (m_steps + 1) + ceil_div(tail * k, slots) * (ceil_div(m_steps, k) + 2);
      if (cost < best_cost) {
        best_cost = cost;
        best.tail = static_cast<int>(tail);
        best.pieces = static_cast<int>(k);
      }
    }
  }
  return best;
}

struct BwdUnitPiece {
  int unit;   // the unsplit grid's index (bwd_cta's idx)
  int piece;  // which piece of a split unit; -1 for a whole unit
};

// CTA `idx` of the split grid: units [0, split_first) one CTA each, then `pieces` consecutive CTAs per
// unit from split_first on (split_first = units - tail).
FC_HOST_DEVICE BwdUnitPiece bwd_split_cta(int idx, int split_first, int pieces) {
  if (pieces <= 1 || idx < split_first) return {idx, -1};
  const int j = idx - split_first;
  const int u = j / pieces;
  return {split_first + u, j - u * pieces};
}

// The query blocks [*lo, *hi) of piece `piece` of `pieces` over [m_begin, m_end): consecutive, disjoint,
// covering the range, sizes within one of each other.
FC_HOST_DEVICE void bwd_piece_range(int m_begin, int m_end, int piece, int pieces, int* lo, int* hi) {
  const int n = m_end - m_begin;
  *lo = m_begin + n * piece / pieces;
  *hi = m_begin + n * (piece + 1) / pieces;
}

}  // namespace flashcute::sm80
