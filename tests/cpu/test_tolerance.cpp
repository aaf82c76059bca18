// The tolerance checker (tests/common/tolerance.h): it accepts what the rule accepts and rejects
// each kind of wrong answer - one bad element, a NaN, a bias, a wrong LSE, a missing -inf.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "tests/common/ref_testing.h"
#include "tests/common/tolerance.h"

namespace flashcute::testing {
namespace {

// Golden and low-precision forward outputs of one realistic case (dtype-rounded randn inputs,
// causal with sq > sk, so a few rows are empty: O = 0, LSE = -inf).
struct Data {
  std::vector<double> golden, lp, lse_golden, lse_lp;
};

Data make_data(DType dtype) {
  ref::Problem p;
  p.batch = 2;
  p.seqlen_q = 40;
  p.seqlen_k = 33;
  p.heads_q = 2;
  p.heads_kv = 2;
  p.head_dim = 64;
  p.causal = true;
  Case c = make_case(p, 2024);
  for (Tensor* t : {&c.q, &c.k, &c.v})
    for (double& x : t->buf) x = ref::round_to(dtype, x);
  const Golden g = run_golden(c, false);
  Tensor out = c.like_out();
  std::vector<double> lse(g.lse.size());
  ref::forward_lowp(dtype, p, c.q.cview(), c.k.cview(), c.v.cview(), out.view(), lse.data());
  return {g.out.flat(), out.flat(), g.lse, lse};
}

const Data& bf16_data() {
  static const Data d = make_data(DType::kBFloat16);
  return d;
}

TEST(Tolerance, Ulp) {
  EXPECT_EQ(ulp(DType::kFloat16, 1.0), std::ldexp(1.0, -10));
  EXPECT_EQ(ulp(DType::kFloat16, 1.999), std::ldexp(1.0, -10));
  EXPECT_EQ(ulp(DType::kFloat16, -3.0), std::ldexp(1.0, -9));
  EXPECT_EQ(ulp(DType::kBFloat16, 1.0), std::ldexp(1.0, -7));
  EXPECT_EQ(ulp(DType::kBFloat16, 0.3), std::ldexp(1.0, -9));
  EXPECT_EQ(ulp(DType::kFloat16, 0.0), std::ldexp(1.0, -24));  // subnormal spacing
  EXPECT_EQ(ulp(DType::kFloat16, 1e-6), std::ldexp(1.0, -24));
  EXPECT_EQ(ulp(DType::kBFloat16, 1e-40), std::ldexp(1.0, -133));
}

TEST(Tolerance, GoldenAndLpPass) {
  const Data& d = bf16_data();
  for (Pass pass : {Pass::kForward, Pass::kBackward}) {
    const ToleranceResult self = check_tolerance("out", d.golden, d.golden, d.lp, DType::kBFloat16, pass);
    EXPECT_TRUE(self.ok) << self.message;
    EXPECT_EQ(self.max_err, 0.0);
    const ToleranceResult lp = check_tolerance("out", d.lp, d.golden, d.lp, DType::kBFloat16, pass);
    EXPECT_TRUE(lp.ok) << lp.message;
  }
  EXPECT_TRUE(check_lse("lse", d.lse_golden, d.lse_golden).ok);
  const ToleranceResult lse = check_lse("lse", d.lse_lp, d.lse_golden);
  EXPECT_TRUE(lse.ok) << lse.message;
}

TEST(Tolerance, OneElementTenTimesTheBoundFails) {
  const Data& d = bf16_data();
  const ToleranceResult base = check_tolerance("out", d.lp, d.golden, d.lp, DType::kBFloat16, Pass::kForward);
  std::vector<double> kernel = d.lp;
  kernel[123] += 10.0 * base.max_bound;
  const ToleranceResult r = check_tolerance("out", kernel, d.golden, d.lp, DType::kBFloat16, Pass::kForward);
  EXPECT_FALSE(r.ok) << r.message;
  EXPECT_EQ(r.worst, 123);
  EXPECT_NE(r.message.find("[123]"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("FAIL max"), std::string::npos) << r.message;
}

TEST(Tolerance, BackwardAllowsThreeTimesLpError) {
  const Data& d = bf16_data();
  // lp's own output, except at lp's worst element, where the error is pushed to halfway between
  // the forward bound (2 * max_lp + A) and the backward one (3 * max_lp + A).
  size_t worst = 0;
  for (size_t i = 0; i < d.golden.size(); ++i) {
    if (std::fabs(d.lp[i] - d.golden[i]) > std::fabs(d.lp[worst] - d.golden[worst])) worst = i;
  }
  const double m = std::fabs(d.lp[worst] - d.golden[worst]);
  const double A = 2.0 * ulp(DType::kBFloat16, max_abs(d.golden));
  std::vector<double> kernel = d.lp;
  kernel[worst] = d.golden[worst] + (2.5 * m + A) * (d.lp[worst] > d.golden[worst] ? 1 : -1);
  const ToleranceResult f = check_tolerance("x", kernel, d.golden, d.lp, DType::kBFloat16, Pass::kForward);
  const ToleranceResult b = check_tolerance("x", kernel, d.golden, d.lp, DType::kBFloat16, Pass::kBackward);
  EXPECT_FALSE(f.ok) << f.message;
  EXPECT_TRUE(b.ok) << b.message;
}

TEST(Tolerance, NaNWhereGoldenIsFiniteFails) {
  const Data& d = bf16_data();
  std::vector<double> kernel = d.golden;
  kernel[7] = kNaN;
  const ToleranceResult r = check_tolerance("out", kernel, d.golden, d.lp, DType::kBFloat16, Pass::kForward);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.worst, 7);
  EXPECT_NE(r.message.find("non-finite"), std::string::npos) << r.message;
  kernel[7] = kInf;
  EXPECT_FALSE(check_tolerance("out", kernel, d.golden, d.lp, DType::kBFloat16, Pass::kForward).ok);
}

TEST(Tolerance, NonFiniteParity) {
  const std::vector<double> golden = {1.0, kNaN, kInf, -kInf};
  const std::vector<double> lp = golden;
  EXPECT_TRUE(check_tolerance("x", golden, golden, lp, DType::kFloat16, Pass::kForward).ok);
  for (size_t i = 1; i < golden.size(); ++i) {
    std::vector<double> kernel = golden;
    kernel[i] = 0.5;  // a non-finite value is missing
    EXPECT_FALSE(check_tolerance("x", kernel, golden, lp, DType::kFloat16, Pass::kForward).ok) << i;
  }
  std::vector<double> kernel = golden;
  kernel[2] = -kInf;  // wrong sign of inf
  EXPECT_FALSE(check_tolerance("x", kernel, golden, lp, DType::kFloat16, Pass::kForward).ok);
  kernel = golden;
  kernel[1] = kInf;  // NaN expected
  EXPECT_FALSE(check_tolerance("x", kernel, golden, lp, DType::kFloat16, Pass::kForward).ok);
}

TEST(Tolerance, BiasFailsTheMeanRuleOnly) {
  const Data& d = bf16_data();
  const ToleranceResult base = check_tolerance("out", d.golden, d.golden, d.lp, DType::kBFloat16, Pass::kForward);
  // Every element off by the same small amount: under the max bound, over the mean bound.
  const double shift = 0.9 * base.max_bound;
  ASSERT_GT(shift, base.mean_bound) << "the data does not separate the two rules: " << base.message;
  std::vector<double> kernel = d.golden;
  for (double& x : kernel) x += shift;
  const ToleranceResult r = check_tolerance("out", kernel, d.golden, d.lp, DType::kBFloat16, Pass::kForward);
  EXPECT_FALSE(r.ok) << r.message;
  EXPECT_LE(r.max_err, r.max_bound) << r.message;
  EXPECT_GT(r.mean_err, r.mean_bound) << r.message;
  EXPECT_NE(r.message.find("FAIL mean"), std::string::npos) << r.message;
}

TEST(Tolerance, ExactLpDoesNotDemandAnExactKernel) {
  // Golden values that are fp16 numbers and an lp that is exactly right (mean lp error 0): a kernel
  // whose slightly different fp32 math flips the rounding of some elements by one ulp passes...
  std::vector<double> golden, kernel;
  for (int i = 0; i < 1000; ++i) {
    const double g = ref::round_to(DType::kFloat16, std::sin(0.37 * i) * 3.0);
    golden.push_back(g);
    kernel.push_back(i % 10 == 0 ? g + ulp(DType::kFloat16, g) : g);
  }
  const ToleranceResult r = check_tolerance("out", kernel, golden, golden, DType::kFloat16, Pass::kForward);
  EXPECT_TRUE(r.ok) << r.message;
  // ...but one that is a whole ulp off everywhere (a bias) does not.
  for (size_t i = 0; i < golden.size(); ++i) kernel[i] = golden[i] + ulp(DType::kFloat16, golden[i]);
  const ToleranceResult biased = check_tolerance("out", kernel, golden, golden, DType::kFloat16, Pass::kForward);
  EXPECT_FALSE(biased.ok) << biased.message;
  EXPECT_LE(biased.max_err, biased.max_bound) << biased.message;
}

TEST(Tolerance, LseOffBy1e3Fails) {
  const Data& d = bf16_data();
  std::vector<double> lse = d.lse_golden;
  size_t i = 0;
  while (!std::isfinite(lse[i])) ++i;
  lse[i] += 1e-3;
  const ToleranceResult r = check_lse("lse", lse, d.lse_golden);
  EXPECT_FALSE(r.ok) << r.message;
  EXPECT_EQ(r.worst, static_cast<int64_t>(i));
  lse[i] = d.lse_golden[i] + 0.5e-5;  // within 1e-5 * (1 + |lse|)
  EXPECT_TRUE(check_lse("lse", lse, d.lse_golden).ok);
}

TEST(Tolerance, LseMustBeMinusInfOnEmptyRows) {
  const Data& d = bf16_data();
  size_t empty = 0;
  while (d.lse_golden[empty] != -kInf) ++empty;  // causal sq > sk: row 0 of batch 0 is empty
  std::vector<double> lse = d.lse_golden;
  lse[empty] = -1e30;  // finite, however small, is wrong
  const ToleranceResult r = check_lse("lse", lse, d.lse_golden);
  EXPECT_FALSE(r.ok) << r.message;
  EXPECT_NE(r.message.find("-inf"), std::string::npos) << r.message;
  lse = d.lse_golden;
  size_t finite = 0;
  while (!std::isfinite(lse[finite])) ++finite;
  lse[finite] = -kInf;  // and -inf where the row sees keys is wrong too
  EXPECT_FALSE(check_lse("lse", lse, d.lse_golden).ok);
  lse[finite] = kNaN;
  EXPECT_FALSE(check_lse("lse", lse, d.lse_golden).ok);
}

TEST(Tolerance, SizeMismatchFails) {
  const std::vector<double> a = {1.0, 2.0}, b = {1.0};
  EXPECT_FALSE(check_tolerance("x", a, b, b, DType::kFloat16, Pass::kForward).ok);
  EXPECT_FALSE(check_lse("x", a, b).ok);
}

}  // namespace
}  // namespace flashcute::testing
