#pragma once
// The SM90 persistent forward's tile order (fwd_kernel.cuh), host-usable so that its decodes can be
// checked on the CPU (tests/cpu/test_sm90_tile_order.cpp).

#include <cutlass/cutlass.h>  // CUTLASS_HOST_DEVICE

namespace flashcute::sm90 {

// The persistent kernel's tile order. Tiles are (query block, batch x head) pairs; batch x head
// indices are cut into groups of `group` (sized by the launcher so that a group's K and V fit in
// half of L2), and inside a group the query blocks go from the last to the first, each over all the
// group's heads. Under a causal mask (or any window reaching to the end) the last query blocks see
// the most keys, so within a group the longest tiles come first and the short ones make the tail
// (longest-processing-time-first for the static round-robin), while the CTAs running at the same
// time read the K/V of a few heads that stay in L2. Non-causal, only the L2 grouping matters.
struct TileOrder {
  int m_blocks, heads, batch_heads, group;
  CUTLASS_HOST_DEVICE void decode(int t, int* m_block, int* head, int* batch) const {
    const int per_group = group * m_blocks;
    const int g0 = (t / per_group) * group;  // first batch x head index of t's group
    const int in_group = t % per_group;
    const int size = batch_heads - g0 < group ? batch_heads - g0 : group;
    *m_block = m_blocks - 1 - in_group / size;
    const int bh = g0 + in_group % size;
    *head = bh % heads;
    *batch = bh / heads;
  }
  // decode() with the launcher's fast divisions (cutlass::FastDivmod of per_group = group x m_blocks,
  // of group and of heads: a multiply-high and a shift each, where decode() runs three integer
  // divisions); the last group, when it holds fewer than `group` indices, divides by its size.
  template <class Div>
  CUTLASS_HOST_DEVICE void decode_fast(int t, const Div& per_group, const Div& by_group, const Div& by_heads,
                                       int* m_block, int* head, int* batch) const {
    int gi, in_group, mq, mr;
    per_group(gi, in_group, t);
    const int g0 = gi * group;
    const int size = batch_heads - g0 < group ? batch_heads - g0 : group;
    if (size == group) {
      by_group(mq, mr, in_group);
    } else {
      mq = in_group / size;
      mr = in_group % size;
    }
    *m_block = m_blocks - 1 - mq;
    by_heads(*batch, *head, g0 + mr);
  }
};

}  // namespace flashcute::sm90
