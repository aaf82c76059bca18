// The SM90 persistent forward's tile order (src/sm90/tile_order.h): the decode with the launcher's fast
// divisions gives every tile index the same (query block, head, batch) as the plain divisions, and
// the order covers every tile exactly once, over many shapes and group sizes (the last group short
// or not).

#include <gtest/gtest.h>

#include <cutlass/fast_math.h>

#include <set>
#include <tuple>

#include "sm90/tile_order.h"

namespace flashcute::sm90 {
namespace {

TEST(Sm90TileOrder, FastDecodeMatchesTheDivisions) {
  int shapes = 0;
  for (int m_blocks : {1, 2, 3, 7, 16, 33}) {
    for (int heads : {1, 2, 3, 8, 12, 32}) {
      for (int batch : {1, 2, 5, 9}) {
        const int batch_heads = heads * batch;
        for (int group = 1; group <= batch_heads; group += (group < 6 ? 1 : 5)) {
          const TileOrder order{m_blocks, heads, batch_heads, group};
          const cutlass::FastDivmod per_group(group * m_blocks), by_group(group), by_heads(heads);
          std::set<std::tuple<int, int, int>> seen;
          for (int t = 0; t < m_blocks * batch_heads; ++t) {
            int m0, h0, b0, m1, h1, b1;
            order.decode(t, &m0, &h0, &b0);
            order.decode_fast(t, per_group, by_group, by_heads, &m1, &h1, &b1);
            ASSERT_EQ(std::make_tuple(m1, h1, b1), std::make_tuple(m0, h0, b0))
                << "t " << t << " m_blocks " << m_blocks << " heads " << heads << " batch " << batch << " group " << group;
            ASSERT_TRUE(m0 >= 0 && m0 < m_blocks && h0 >= 0 && h0 < heads && b0 >= 0 && b0 < batch);
            seen.insert({m0, h0, b0});
          }
          ASSERT_EQ(seen.size(), static_cast<size_t>(m_blocks * batch_heads));  // each tile once
          ++shapes;
        }
      }
    }
  }
  EXPECT_GT(shapes, 500);
}

TEST(Sm90TileOrder, FastDecodeAtLargeIndices) {
  // Near the int range the launcher allows (num_tiles fits an int): 2^16 query blocks x 2^14 heads.
  const int m_blocks = 1 << 16, heads = 1 << 14, batch = 1, group = 3;
  const TileOrder order{m_blocks, heads, heads * batch, group};
  const cutlass::FastDivmod per_group(group * m_blocks), by_group(group), by_heads(heads);
  for (int t : {0, 1, m_blocks * 3 - 1, m_blocks * 3, (1 << 30) - 12345, (1 << 30) - 1}) {
    int m0, h0, b0, m1, h1, b1;
    order.decode(t, &m0, &h0, &b0);
    order.decode_fast(t, per_group, by_group, by_heads, &m1, &h1, &b1);
    EXPECT_EQ(std::make_tuple(m1, h1, b1), std::make_tuple(m0, h0, b0)) << "t " << t;
  }
}

}  // namespace
}  // namespace flashcute::sm90
