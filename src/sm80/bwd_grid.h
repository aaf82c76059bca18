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

}  // namespace flashcute::sm80
