// The fp64 reference backward against central finite differences of its own forward, for every
// feature of the contract: with L = sum(dO * O), dL/dq, dL/dk, dL/dv must match ref::backward.
// Also: rows that see no key and keys nobody sees get gradients that are exactly zero.

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "reference/reference.h"
#include "tests/common/ref_testing.h"

namespace flashcute::testing {
namespace {

using ref::Problem;

constexpr double kRelTol = 1e-6;  // on max|fd - analytic| / max|analytic|, per tensor

Problem dense(int64_t batch, int64_t sq, int64_t sk, int64_t hq, int64_t hkv, int64_t d, int64_t dv = 0) {
  Problem p;
  p.batch = batch;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.head_dim = d;
  p.head_dim_v = dv;
  return p;
}

struct GradCase {
  std::string name;
  Problem p;
  bool strided = false;
  double input_scale = 1.0;
};

void PrintTo(const GradCase& c, std::ostream* os) {
  *os << c.name << " (" << describe(c.p) << ")";
}

std::vector<GradCase> grad_cases() {
  std::vector<GradCase> v;
  auto add = [&](std::string name, Problem p, bool strided = false, double scale = 1.0) {
    v.push_back({std::move(name), std::move(p), strided, scale});
  };
  add("plain", dense(2, 4, 5, 2, 2, 4));
  {
    Problem p = dense(2, 3, 6, 2, 2, 4);
    p.causal = true;
    add("causal_sq_lt_sk", p);
  }
  {
    Problem p = dense(2, 6, 3, 2, 2, 4);
    p.causal = true;
    add("causal_sq_gt_sk_empty_rows", p);
  }
  {
    Problem p = dense(1, 6, 6, 2, 1, 4);
    p.window_left = 1;
    p.window_right = 1;
    add("window_1_1", p);
  }
  {
    Problem p = dense(1, 5, 7, 2, 2, 4);
    p.window_left = 0;
    p.window_right = 0;
    add("window_0_0", p);
  }
  {
    Problem p = dense(1, 7, 3, 2, 2, 4);  // diag = i - 4: rows 0..2 see nothing
    p.window_left = 2;
    p.window_right = 1;
    add("window_rows_left_empty", p);
  }
  {
    Problem p = dense(2, 4, 5, 2, 2, 4);
    p.softcap = 1.5;
    add("softcap", p, false, 3.0);
  }
  {
    Problem p = dense(2, 4, 6, 3, 3, 4);
    p.alibi_slopes = {0.5, 0.25, 0.125};
    p.causal = true;
    add("alibi_per_head", p);
  }
  {
    Problem p = dense(2, 5, 4, 2, 2, 4);
    p.alibi_slopes = {0.3, 0.7, 1.1, 0.05};
    add("alibi_per_batch_head", p);
  }
  add("gqa", dense(2, 4, 5, 4, 2, 4));
  {
    Problem p = dense(1, 5, 6, 3, 1, 4);
    p.causal = true;
    add("mqa_causal", p);
  }
  {
    Problem p = dense(4, 0, 0, 2, 1, 4);
    p.cu_seqlens_q = {0, 2, 2, 6, 6};  // seq 1: no rows; seq 3 (last): nothing at all
    p.cu_seqlens_k = {0, 3, 7, 7, 7};  // seq 2: rows but no keys
    add("varlen_zero_len", p);
  }
  {
    Problem p = dense(3, 0, 0, 2, 2, 4);
    p.cu_seqlens_q = {0, 4, 5, 5};
    p.cu_seqlens_k = {0, 2, 8, 8};
    p.causal = true;
    add("varlen_causal", p, true);
  }
  add("strided", dense(2, 4, 5, 2, 2, 4), true);
  add("dv_ne_d", dense(2, 4, 5, 2, 2, 4, 3));
  {
    Problem p = dense(2, 4, 5, 2, 2, 4);
    p.softmax_scale = 0.7;
    add("custom_scale", p);
  }
  {
    Problem p = dense(3, 0, 0, 4, 2, 6, 5);
    p.cu_seqlens_q = {0, 4, 4, 7};
    p.cu_seqlens_k = {0, 3, 8, 12};
    p.causal = true;
    p.window_left = 3;
    p.softcap = 2.0;
    p.alibi_slopes = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2};
    p.softmax_scale = 0.3;
    add("all_features", p, true, 2.0);
  }
  return v;
}

// L = sum(dO * O) over every output element.
double loss(const Case& c) {
  Tensor out = c.like_out();
  std::vector<double> lse(static_cast<size_t>(ref::lse_size(c.p)));
  ref::forward(c.p, c.q.cview(), c.k.cview(), c.v.cview(), out.view(), lse.data());
  double l = 0.0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    l += out.buf[out.offset_of(i)] * c.dout.buf[c.dout.offset_of(i)];
  }
  return l;
}

// Compares an analytic gradient with central differences of L over every element of `x`.
::testing::AssertionResult matches_fd(Case& c, Tensor& x, const Tensor& grad, const char* what) {
  double max_err = 0.0, max_grad = 0.0, fd_at = 0.0, an_at = 0.0;
  int64_t worst = -1;
  for (int64_t i = 0; i < x.numel(); ++i) {
    double& e = x.buf[x.offset_of(i)];
    const double orig = e;
    const double h = 1e-5 * std::fmax(1.0, std::fabs(orig));
    e = orig + h;
    const double lp = loss(c);
    e = orig - h;
    const double lm = loss(c);
    e = orig;
    const double fd = (lp - lm) / (2.0 * h);
    const double an = grad.buf[grad.offset_of(i)];
    if (!std::isfinite(an)) {
      return ::testing::AssertionFailure() << what << "[" << i << "] is " << an;
    }
    max_grad = std::fmax(max_grad, std::fabs(an));
    const double err = std::fabs(fd - an);
    if (worst < 0 || err > max_err) {
      max_err = err;
      worst = i;
      fd_at = fd;
      an_at = an;
    }
  }
  if (worst >= 0 && max_err > kRelTol * std::fmax(max_grad, 1e-3)) {
    return ::testing::AssertionFailure() << what << ": max|fd - analytic| = " << max_err << " at element " << worst
                                         << " (fd=" << fd_at << ", analytic=" << an_at << ") > " << kRelTol
                                         << " * max|analytic| (" << max_grad << ")";
  }
  return ::testing::AssertionSuccess();
}

// Does row i of a (lq, lk) sequence see key j? (The contract's inequality, written out here.)
bool sees(const Problem& p, int64_t i, int64_t j, int64_t lq, int64_t lk) {
  const int64_t diag = i + lk - lq;
  const int64_t right = p.causal ? 0 : p.window_right;
  return j >= 0 && j < lk && (p.window_left < 0 || j >= diag - p.window_left) && (right < 0 || j <= diag + right);
}

// Rows that see no key have dq exactly 0; keys no row sees have dk, dv exactly 0.
::testing::AssertionResult zero_where_unseen(const Case& c, const Golden& g) {
  const Problem& p = c.p;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t lq = p.len_q(b), lk = p.len_k(b), tb = p.varlen() ? 0 : b;
    for (int64_t h = 0; h < p.heads_q; ++h) {
      for (int64_t i = 0; i < lq; ++i) {
        bool any = false;
        for (int64_t j = 0; j < lk; ++j) any = any || sees(p, i, j, lq, lk);
        if (any) continue;
        for (int64_t x = 0; x < p.head_dim; ++x) {
          const double v = g.dq.at(tb, p.row0_q(b) + i, h, x);
          if (v != 0.0) {
            return ::testing::AssertionFailure()
                   << "dq of empty row " << i << " (seq " << b << ", head " << h << ") is " << v;
          }
        }
        if (g.lse[ref::lse_index(p, b, h, i)] != -kInf) {
          return ::testing::AssertionFailure() << "lse of empty row " << i << " is not -inf";
        }
      }
    }
    for (int64_t hk = 0; hk < p.heads_kv; ++hk) {
      for (int64_t j = 0; j < lk; ++j) {
        bool any = false;
        for (int64_t i = 0; i < lq; ++i) any = any || sees(p, i, j, lq, lk);
        if (any) continue;
        for (int64_t x = 0; x < p.head_dim; ++x) {
          if (g.dk.at(tb, p.row0_k(b) + j, hk, x) != 0.0) {
            return ::testing::AssertionFailure() << "dk of unseen key " << j << " is not 0";
          }
        }
        for (int64_t x = 0; x < p.dv(); ++x) {
          if (g.dv.at(tb, p.row0_k(b) + j, hk, x) != 0.0) {
            return ::testing::AssertionFailure() << "dv of unseen key " << j << " is not 0";
          }
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

class BackwardVsFiniteDifferences : public ::testing::TestWithParam<GradCase> {};

TEST_P(BackwardVsFiniteDifferences, Matches) {
  const GradCase& gc = GetParam();
  Case c = make_case(gc.p, 4242, gc.strided, gc.input_scale);
  const Golden g = run_golden(c, true);
  EXPECT_TRUE(matches_fd(c, c.q, g.dq, "dq")) << c.describe();
  EXPECT_TRUE(matches_fd(c, c.k, g.dk, "dk")) << c.describe();
  EXPECT_TRUE(matches_fd(c, c.v, g.dv, "dv")) << c.describe();
  EXPECT_TRUE(zero_where_unseen(c, g)) << c.describe();
  if (c.strided) {
    EXPECT_TRUE(g.out.padding_intact() && g.dq.padding_intact() && g.dk.padding_intact() && g.dv.padding_intact())
        << "a write outside the elements. " << c.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, BackwardVsFiniteDifferences, ::testing::ValuesIn(grad_cases()),
                         [](const auto& info) { return info.param.name; });

// Large enough that the work is split over threads, and row blocks (16 rows), key blocks (64 keys)
// and the row chunks of the dK/dV pass (64 rows) have ragged ends; checked on a sample of elements
// to keep it quick.
TEST(BackwardVsFiniteDifferencesSampled, MultiBlockGqaCausalSoftcap) {
  Problem p = dense(1, 150, 77, 4, 2, 16, 8);
  p.causal = true;
  p.softcap = 5.0;
  p.alibi_slopes = {0.01, 0.02, 0.03, 0.04};
  Case c = make_case(p, 31337, true, 2.0);
  const Golden g = run_golden(c, true);
  const double sum_dq = max_abs(g.dq.flat()), sum_dk = max_abs(g.dk.flat()), sum_dv = max_abs(g.dv.flat());
  std::mt19937_64 rng(5);
  struct Pair {
    Tensor* x;
    const Tensor* grad;
    double scale;
    const char* what;
  };
  for (Pair pr : {Pair{&c.q, &g.dq, sum_dq, "dq"}, Pair{&c.k, &g.dk, sum_dk, "dk"}, Pair{&c.v, &g.dv, sum_dv, "dv"}}) {
    for (int n = 0; n < 40; ++n) {
      const auto i = static_cast<int64_t>(rng() % static_cast<uint64_t>(pr.x->numel()));
      double& e = pr.x->buf[pr.x->offset_of(i)];
      const double orig = e, h = 1e-5;
      e = orig + h;
      const double lp = loss(c);
      e = orig - h;
      const double lm = loss(c);
      e = orig;
      const double fd = (lp - lm) / (2 * h);
      const double an = pr.grad->buf[pr.grad->offset_of(i)];
      ASSERT_NEAR(an, fd, kRelTol * pr.scale) << pr.what << "[" << i << "]. " << c.describe();
    }
  }
  EXPECT_TRUE(zero_where_unseen(c, g)) << c.describe();
}

// A row whose LSE is -inf contributes nothing (P = 0), even where it could see keys - here in the
// middle of the rows that see them, which the dK/dV pass handles entry by entry. Same result as
// giving that row a zero output gradient.
TEST(BackwardLse, MinusInfRowContributesNothing) {
  Problem p = dense(1, 20, 12, 2, 1, 8);
  p.causal = true;
  Case c = make_case(p, 77);
  const Golden g = run_golden(c, true);
  const int64_t row = 13;  // sees keys 0..5 of 12 (diag = i - 8)
  std::vector<double> lse = g.lse;
  lse[ref::lse_index(p, 0, 1, row)] = -kInf;
  Tensor dq = c.like_q(), dk = c.like_k(), dv = c.like_v();
  ref::backward(p, c.q.cview(), c.k.cview(), c.v.cview(), g.out.cview(), c.dout.cview(), lse.data(), dq.view(),
                dk.view(), dv.view());
  Case z = c;
  for (int64_t x = 0; x < p.dv(); ++x) z.dout.at(0, row, 1, x) = 0.0;
  const Golden gz = run_golden(z, true);
  for (int64_t x = 0; x < p.head_dim; ++x) EXPECT_EQ(dq.at(0, row, 1, x), 0.0);
  const std::vector<double> a = dk.flat(), b = gz.dk.flat(), av = dv.flat(), bv = gz.dv.flat();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-14 * (1 + std::fabs(b[i]))) << "dk[" << i << "]. " << c.describe();
    EXPECT_NEAR(av[i], bv[i], 1e-14 * (1 + std::fabs(bv[i]))) << "dv[" << i << "]. " << c.describe();
  }
}

}  // namespace
}  // namespace flashcute::testing
