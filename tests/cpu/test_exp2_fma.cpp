// exp2_fma (src/common/exp2_fma.h), the softmax's FMA-unit exp2, against exp2 in fp64: the relative
// error bound its comment states, over every float step of a dense sweep of the range the softmax
// feeds it (x <= a few units above 0), and the special values the softmax relies on.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/exp2_fma.h"

namespace flashcute {
namespace {

template <int kDegree>
double max_rel_error(float lo, float hi, int steps) {
  double worst = 0.0;
  for (int i = 0; i <= steps; ++i) {
    const float x = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(steps);
    const double want = std::exp2(static_cast<double>(x));
    const double got = exp2_fma<kDegree>(x);
    worst = std::fmax(worst, std::fabs(got - want) / want);
  }
  return worst;
}

TEST(Exp2Fma, RelativeErrorWithinTheStatedBound) {
  // [-126, 9]: from the smallest normal result to past the lazy-rescale threshold's 2^8.
  EXPECT_LT(max_rel_error<3>(-126.0f, 9.0f, 2000003), 1.05e-4);
  EXPECT_LT(max_rel_error<4>(-126.0f, 9.0f, 2000003), 3.0e-6);
  // Up to the clamp: large scores above a stale reference (the sum check's slow path).
  EXPECT_LT(max_rel_error<3>(9.0f, 127.0f, 200003), 1.05e-4);
  EXPECT_LT(max_rel_error<4>(9.0f, 127.0f, 200003), 3.0e-6);
  // The polynomial's own interval, finely: the split x = round(x) + f puts every f here.
  EXPECT_LT(max_rel_error<3>(-0.5f, 0.5f, 1000000), 1.05e-4);
  EXPECT_LT(max_rel_error<4>(-0.5f, 0.5f, 1000000), 3.0e-6);
}

TEST(Exp2Fma, IntegersAreExact) {
  for (int j = -126; j <= 20; ++j) {
    const double want = std::ldexp(1.0, j);
    // f = 0: p(0) = 1 exactly, so whole powers of two come out exact.
    EXPECT_EQ(exp2_fma<4>(static_cast<float>(j)), static_cast<float>(want)) << "x = " << j;
    EXPECT_EQ(exp2_fma<3>(static_cast<float>(j)), static_cast<float>(want)) << "x = " << j;
  }
}

TEST(Exp2Fma, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  // Masked scores arrive as -inf and must give exactly 0, as must anything at or below -127.
  EXPECT_EQ(exp2_fma<3>(-inf), 0.0f);
  EXPECT_EQ(exp2_fma<4>(-inf), 0.0f);
  EXPECT_EQ(exp2_fma<3>(-127.0f), 0.0f);
  EXPECT_EQ(exp2_fma<4>(-1.0e30f), 0.0f);
  // Below 2^-126 the result is tiny and non-negative (not exact: see the header).
  for (float x = -127.0f; x < -126.0f; x += 0.03125f) {
    const float y = exp2_fma<3>(x);
    EXPECT_GE(y, 0.0f);
    EXPECT_LT(y, 1.2e-38f);
  }
  // Above the float range: at least 2^127 and finite (MUFU.EX2 gives +inf from 128), never the wrapped
  // exponent's tiny or negative value, which the softmax's sum check would take for a small p.
  for (float x = 126.5f; x < 300.0f; x += 0.125f) {
    EXPECT_GE(exp2_fma<3>(x), 0x1p126f) << "x = " << x;
    EXPECT_GE(exp2_fma<4>(x), 0x1p126f) << "x = " << x;
    EXPECT_TRUE(std::isfinite(exp2_fma<3>(x))) << "x = " << x;
  }
  EXPECT_EQ(exp2_fma<3>(127.0f), 0x1p127f);
  EXPECT_EQ(exp2_fma<4>(1.0e30f), 0x1p127f);
  EXPECT_EQ(exp2_fma<3>(inf), 0x1p127f);
  // NaN propagates (a NaN score must not become a finite weight).
  EXPECT_TRUE(std::isnan(exp2_fma<3>(std::nanf(""))));
  EXPECT_TRUE(std::isnan(exp2_fma<4>(std::nanf(""))));
}

}  // namespace
}  // namespace flashcute
