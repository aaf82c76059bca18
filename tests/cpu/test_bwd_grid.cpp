// The SM80 backward's grid order (src/sm80/bwd_grid.h): every index maps to a distinct (key block,
// q head, batch), all of them are covered, a pair's key blocks come in ascending index order (the
// deterministic mode's waits rely on it), and within a group every pair's key block j comes before
// any pair's key block j + 1 (the longest-first order under a causal mask).
// Also the split of the grid's last wave: the plan, the pieces' decode and query ranges, and the
// workspace's slots.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sm80/bwd_grid.h"
#include "sm80/bwd_workspace.h"

namespace flashcute::sm80 {
namespace {

void check_order(int heads_q, int batch, int group, int n_blocks) {
  SCOPED_TRACE(::testing::Message() << "heads_q " << heads_q << " batch " << batch << " group " << group
                                    << " n_blocks " << n_blocks);
  const int pairs = heads_q * batch;
  const int total = pairs * n_blocks;
  std::vector<int> seen(total, -1);   // (pair, n_block) -> index
  std::vector<int> last(pairs, -1);   // the last key block seen of each pair
  std::vector<int> level(pairs, -1);  // per group: the key block being dealt
  for (int idx = 0; idx < total; ++idx) {
    const BwdCta c = bwd_cta(idx, heads_q, batch, group, n_blocks);
    ASSERT_GE(c.n_block, 0);
    ASSERT_LT(c.n_block, n_blocks);
    ASSERT_GE(c.head, 0);
    ASSERT_LT(c.head, heads_q);
    ASSERT_GE(c.batch, 0);
    ASSERT_LT(c.batch, batch);
    const int pair = c.batch * heads_q + c.head;
    const int slot = pair * n_blocks + c.n_block;
    ASSERT_EQ(seen[slot], -1) << "index " << idx << " repeats the CTA of index " << seen[slot];
    seen[slot] = idx;
    ASSERT_EQ(c.n_block, last[pair] + 1) << "index " << idx << ": a pair's key blocks out of order";
    last[pair] = c.n_block;
    // Groups are consecutive ranges of indices and of pairs; inside one, key blocks never go back.
    const int g = pair / group;
    ASSERT_GE(c.n_block, level[g]) << "index " << idx;
    level[g] = c.n_block;
    ASSERT_EQ(g, idx / (group * n_blocks)) << "index " << idx << " outside its pair's group";
  }
  for (int slot = 0; slot < total; ++slot) ASSERT_NE(seen[slot], -1);
}

TEST(BwdGrid, BijectiveAndOrdered) {
  for (int heads_q : {1, 2, 3, 5, 16})
    for (int batch : {1, 2, 3, 7})
      for (int n_blocks : {1, 2, 3, 16})
        for (int group = 1; group <= heads_q * batch; ++group) check_order(heads_q, batch, group, n_blocks);
}

TEST(BwdGrid, GroupSize) {
  // 16 MiB / (seqlen_q * head_dim * 8 bytes), rounded down to a power of two, capped at the pairs.
  EXPECT_EQ(bwd_cta_group(2048, 128, 128), 8);
  EXPECT_EQ(bwd_cta_group(4096, 128, 64), 4);
  EXPECT_EQ(bwd_cta_group(8192, 128, 32), 2);
  EXPECT_EQ(bwd_cta_group(16384, 128, 16), 1);
  EXPECT_EQ(bwd_cta_group(32768, 128, 16), 1);  // one pair is more than the budget: still 1
  EXPECT_EQ(bwd_cta_group(2048, 64, 256), 16);
  EXPECT_EQ(bwd_cta_group(2048, 64, 6), 6);  // fewer pairs than the budget allows: one group
  EXPECT_EQ(bwd_cta_group(0, 64, 4), 4);
  EXPECT_EQ(bwd_cta_group(1, 256, 1 << 20), 8192);
}

// The model's cost of a plan, as bwd_split_plan computes it (checked against brute force below).
int64_t plan_cost(int64_t units, int64_t m, int64_t slots, const BwdSplit& s) {
  const auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  if (s.pieces <= 1) return cdiv(units, slots) * (m + 1);
  return (units - s.tail) / slots * (m + 1) + cdiv(int64_t(s.tail) * s.pieces, slots) * (cdiv(m, s.pieces) + 2);
}

TEST(BwdSplitPlan, BenchmarkShapes) {
  // d 64: 16k tokens x 32 heads / 128 keys = 4096 CTAs on 132 SMs: 31 waves and 4 CTAs. The 4 run as
  // 16 pieces each (query blocks: 2k / 128 = 16).
  BwdSplit s = bwd_split_plan(4096, 16, 132, 256);
  EXPECT_EQ(s.tail, 4);
  EXPECT_EQ(s.pieces, 16);
  s = bwd_split_plan(4096, 64, 132, 256);  // 8k
  EXPECT_EQ(s.tail, 4);
  EXPECT_EQ(s.pieces, 16);
  // d 128: 2048 CTAs = 15 waves and 68; 68 x 3 pieces fill two rounds of a third of a unit each.
  s = bwd_split_plan(2048, 32, 132, 256);
  EXPECT_EQ(s.tail, 68);
  EXPECT_EQ(s.pieces, 3);
  EXPECT_LT(plan_cost(2048, 32, 132, s), plan_cost(2048, 32, 132, BwdSplit{}));
}

TEST(BwdSplitPlan, NoSplitWhereItCannotPay) {
  EXPECT_EQ(bwd_split_plan(264, 32, 132, 256).pieces, 1);  // whole waves
  EXPECT_EQ(bwd_split_plan(133, 1, 132, 256).pieces, 1);   // one query block per unit: nothing to split
  EXPECT_EQ(bwd_split_plan(133, 16, 132, 0).pieces, 1);    // no slots in the workspace
  EXPECT_EQ(bwd_split_plan(133, 16, 0, 256).pieces, 1);    // no SM count
  EXPECT_EQ(bwd_split_plan(0, 16, 132, 256).pieces, 1);
  // The tail beyond the workspace's slots is not split.
  EXPECT_EQ(bwd_split_plan(131, 16, 132, 130).pieces, 1);
}

TEST(BwdSplitPlan, SmallProblemsSpreadOverTheGpu) {
  BwdSplit s = bwd_split_plan(1, 8, 132, 1);
  EXPECT_EQ(s.tail, 1);
  EXPECT_EQ(s.pieces, 8);  // one query block per piece
  s = bwd_split_plan(16, 64, 132, 16);
  EXPECT_EQ(s.tail, 16);
  EXPECT_EQ(s.pieces, 8);  // 128 pieces <= 132 SMs
}

TEST(BwdSplitPlan, BestOfItsCandidatesAndWithinBounds) {
  for (int64_t slots : {1, 7, 108, 132})
    for (int64_t units : {1, 5, 100, 131, 133, 263, 1000, 4096})
      for (int64_t m : {2, 3, 16, 33, 128}) {
        SCOPED_TRACE(::testing::Message() << "units " << units << " m " << m << " slots " << slots);
        const BwdSplit s = bwd_split_plan(units, m, slots, kBwdMaxSplitUnits);
        const int64_t unsplit = plan_cost(units, m, slots, BwdSplit{});
        if (s.pieces == 1) {
          EXPECT_EQ(s.tail, 0);
        } else {
          EXPECT_GE(s.pieces, 2);
          EXPECT_LE(s.pieces, kBwdMaxPieces);
          EXPECT_LE(s.pieces, m);
          EXPECT_GT(s.tail, 0);
          EXPECT_LE(s.tail, units);
          EXPECT_LE(s.tail, kBwdMaxSplitUnits);
          EXPECT_EQ((units - s.tail) % slots, 0) << "full units must be whole waves";
          EXPECT_LT(plan_cost(units, m, slots, s) * 100, unsplit * 99 + 100) << "kept a split that gains < 1%";
        }
        // No candidate of the model's family is better than the one chosen.
        const int64_t chosen = plan_cost(units, m, slots, s);
        for (int64_t tail = units % slots; tail <= units % slots + slots; tail += slots) {
          if (tail == 0 || tail > units || tail > kBwdMaxSplitUnits) continue;
          for (int k = 2; k <= kBwdMaxPieces && k <= m; ++k) {
            const int64_t cost = plan_cost(units, m, slots, BwdSplit{int(tail), k});
            if (cost < unsplit - unsplit / 100 - 1) EXPECT_LE(chosen, cost) << "tail " << tail << " pieces " << k;
          }
        }
      }
}

TEST(BwdSplitPlan, PiecesCoverEachSplitUnitOnce) {
  for (int units : {1, 5, 40})
    for (int tail : {0, 1, 3})
      for (int pieces : {1, 2, 5, 16}) {
        if (tail > units) continue;
        const int first = units - tail;
        const int ctas = first + tail * (pieces > 1 ? pieces : 1);
        std::vector<std::vector<int>> got(units);
        for (int idx = 0; idx < ctas; ++idx) {
          const BwdUnitPiece up = bwd_split_cta(idx, first, pieces);
          ASSERT_GE(up.unit, 0);
          ASSERT_LT(up.unit, units);
          got[up.unit].push_back(up.piece);
        }
        for (int u = 0; u < units; ++u) {
          SCOPED_TRACE(::testing::Message()
                       << "units " << units << " tail " << tail << " pieces " << pieces << " unit " << u);
          if (u < first || pieces <= 1) {
            EXPECT_EQ(got[u], std::vector<int>{-1});
          } else {
            std::vector<int> want(pieces);
            for (int j = 0; j < pieces; ++j) want[j] = j;
            EXPECT_EQ(got[u], want);
          }
        }
      }
}

TEST(BwdSplitPlan, PieceRangesPartitionTheWalk) {
  for (int begin : {0, 3})
    for (int n : {1, 2, 7, 16, 17})
      for (int pieces = 1; pieces <= 16; ++pieces) {
        int next = begin, smallest = n, largest = 0;
        for (int j = 0; j < pieces; ++j) {
          int lo, hi;
          bwd_piece_range(begin, begin + n, j, pieces, &lo, &hi);
          EXPECT_EQ(lo, next);
          EXPECT_GE(hi, lo);
          next = hi;
          smallest = std::min(smallest, hi - lo);
          largest = std::max(largest, hi - lo);
        }
        EXPECT_EQ(next, begin + n);
        EXPECT_LE(largest - smallest, 1);
      }
}

TEST(BwdSplitWorkspace, SlotsOnlyWhereTheGridMaySplit) {
  ProblemDesc p;
  p.batch = 2, p.seqlen_q = 1000, p.seqlen_k = 1000, p.total_q = 2000, p.total_k = 2000;
  p.heads_q = 4, p.heads_kv = 4, p.head_dim = 64, p.head_dim_v = 64, p.bwd_bucket = 64;
  BwdWorkspaceLayout w = bwd_workspace_layout(p);
  // 2 x 4 x ceil(1000 / 128) = 64 units, each 2 x 128 x 64 floats.
  EXPECT_EQ(w.split_slots, 64);
  ASSERT_NE(w.dkv_split, BwdWorkspaceLayout::kNone);
  ASSERT_NE(w.split_count, BwdWorkspaceLayout::kNone);
  EXPECT_GE(w.split_count - w.dkv_split, size_t{64} * 2 * 128 * 64 * 4);
  EXPECT_GE(w.bytes - w.split_count, size_t{64} * 4);
  p.heads_q = p.heads_kv = 400;  // 6400 units: capped
  EXPECT_EQ(bwd_workspace_layout(p).split_slots, kBwdMaxSplitUnits);
  p.heads_q = p.heads_kv = 4;
  for (int which = 0; which < 6; ++which) {
    ProblemDesc q = p;
    if (which == 0) q.deterministic = true;
    if (which == 1) q.window.right = 0;  // causal
    if (which == 2) q.window.left = 100;
    if (which == 3) q.varlen = true;
    if (which == 4) q.softcap = 30.0f;  // the softcap/ALiBi kernel never splits
    if (which == 5) q.has_alibi = true;
    w = bwd_workspace_layout(q);
    EXPECT_EQ(w.split_slots, 0) << which;
    EXPECT_EQ(w.dkv_split, BwdWorkspaceLayout::kNone) << which;
    EXPECT_EQ(w.split_count, BwdWorkspaceLayout::kNone) << which;
  }
}

}  // namespace
}  // namespace flashcute::sm80
