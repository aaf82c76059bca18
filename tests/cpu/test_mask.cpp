// The shared mask predicate (src/common/mask.h) against the contract's inequality, and its two
// forms against each other: key_visible(i, j) == (begin(i) <= j < end(i)).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "common/mask.h"

namespace flashcute {
namespace {

// DESIGN.md: with off = sk - sq, row i sees key j iff i + off - left <= j <= i + off + right and
// 0 <= j < sk; left/right < 0 mean unbounded; causal is right = 0.
bool contract_sees(int64_t i, int64_t j, int64_t sq, int64_t sk, bool causal, int64_t left, int64_t right) {
  if (causal) right = 0;
  const int64_t off = sk - sq;
  if (j < 0 || j >= sk) return false;
  if (left >= 0 && j < i + off - left) return false;
  if (right >= 0 && j > i + off + right) return false;
  return true;
}

TEST(Mask, MakeWindowFoldsCausal) {
  EXPECT_EQ(make_window(true, -1, -1).right, 0);
  EXPECT_EQ(make_window(true, 3, -1).left, 3);
  EXPECT_EQ(make_window(false, -5, -7).left, -1);
  EXPECT_EQ(make_window(false, -5, -7).right, -1);
  EXPECT_EQ(make_window(false, 0, 0).left, 0);
  EXPECT_EQ(make_window(false, 0, 0).right, 0);
  EXPECT_TRUE(window_is_full(make_window(false, -1, -1)));
  EXPECT_FALSE(window_is_full(make_window(true, -1, -1)));
}

TEST(Mask, PredicateRangeAndContractAgree) {
  int64_t checked = 0;
  for (int64_t sq = 0; sq <= 13; ++sq) {
    for (int64_t sk = 0; sk <= 13; ++sk) {
      for (bool causal : {false, true}) {
        for (int64_t left = -1; left <= 5; ++left) {
          for (int64_t right = -1; right <= 5; ++right) {
            if (causal && right > 0) continue;  // rejected by validation
            const Window w = make_window(causal, left, right);
            for (int64_t i = 0; i < sq; ++i) {
              int64_t b = 0, e = 0;
              visible_key_range(i, sq, sk, w, &b, &e);
              ASSERT_LE(b, e);
              ASSERT_GE(b, 0);
              ASSERT_LE(e, sk);
              for (int64_t j = -2; j < sk + 2; ++j) {
                const bool expect = contract_sees(i, j, sq, sk, causal, left, right);
                ASSERT_EQ(key_visible(i, j, sq, sk, w), expect)
                    << "i=" << i << " j=" << j << " sq=" << sq << " sk=" << sk << " causal=" << causal << " window=("
                    << left << "," << right << ")";
                ASSERT_EQ(b <= j && j < e, expect)
                    << "range [" << b << "," << e << ") i=" << i << " j=" << j << " sq=" << sq << " sk=" << sk
                    << " causal=" << causal << " window=(" << left << "," << right << ")";
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100000);
}

TEST(Mask, CausalRowsAboveTheDiagonalSeeNothing) {
  // sq > sk: rows i < sq - sk have their diagonal left of key 0.
  const Window w = make_window(true, -1, -1);
  for (int64_t sq = 1; sq <= 20; ++sq) {
    for (int64_t sk = 0; sk <= sq; ++sk) {
      for (int64_t i = 0; i < sq; ++i) {
        int64_t b = 0, e = 0;
        visible_key_range(i, sq, sk, w, &b, &e);
        const bool empty = b >= e;
        ASSERT_EQ(empty, i < sq - sk) << "i=" << i << " sq=" << sq << " sk=" << sk;
        if (!empty) {
          ASSERT_EQ(e, i + sk - sq + 1);
        }
      }
    }
  }
}

TEST(Mask, BlockUnionIsFirstBeginToLastEnd) {
  // For rows [i0, i1) the keys any of them sees are exactly [begin(i0), end(i1 - 1)).
  for (int64_t sq = 1; sq <= 12; ++sq) {
    for (int64_t sk = 0; sk <= 12; ++sk) {
      for (int64_t left = -1; left <= 3; ++left) {
        for (int64_t right = -1; right <= 3; ++right) {
          const Window w = make_window(false, left, right);
          for (int64_t i0 = 0; i0 < sq; ++i0) {
            for (int64_t i1 = i0 + 1; i1 <= sq; ++i1) {
              int64_t b0 = 0, e0 = 0, b1 = 0, e1 = 0;
              visible_key_range(i0, sq, sk, w, &b0, &e0);
              visible_key_range(i1 - 1, sq, sk, w, &b1, &e1);
              for (int64_t j = 0; j < sk; ++j) {
                bool any = false;
                for (int64_t i = i0; i < i1; ++i) any = any || key_visible(i, j, sq, sk, w);
                ASSERT_EQ(any, b0 <= j && j < e1) << "rows [" << i0 << "," << i1 << ") j=" << j << " sq=" << sq
                                                  << " sk=" << sk << " window=(" << left << "," << right << ")";
              }
            }
          }
        }
      }
    }
  }
}

TEST(Mask, AlibiBias) {
  // -slope * |i + sk - sq - j|, in float and double.
  EXPECT_EQ(alibi_bias<double>(0.5, 0, 0, 1, 1), -0.0);
  EXPECT_EQ(alibi_bias<double>(0.5, 0, 0, 1, 3), -1.0);      // diagonal at key 2
  EXPECT_EQ(alibi_bias<double>(0.5, 2, 4, 5, 3), -0.5 * 4);  // diagonal at key 0, |0 - 4|
  EXPECT_EQ(alibi_bias<float>(0.25f, 3, 1, 4, 4), -0.5f);
  EXPECT_EQ(alibi_bias<float>(0.25f, 1, 3, 4, 4), -0.5f);
}

}  // namespace
}  // namespace flashcute
