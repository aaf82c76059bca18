// The SM80 backward's grid order (src/sm80/bwd_grid.h): every index maps to a distinct (key block,
// q head, batch), all of them are covered, a pair's key blocks come in ascending index order (the
// deterministic mode's waits rely on it), and within a group every pair's key block j comes before
// any pair's key block j + 1 (the longest-first order under a causal mask).

#include <gtest/gtest.h>

#include <vector>

#include "sm80/bwd_grid.h"

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

}  // namespace
}  // namespace flashcute::sm80
