// The fp64 reference forward against a naive textbook implementation written here, against values
// computed by hand, and on the edge cases of the contract (empty rows, large logits, NaN inputs,
// varlen == dense per sequence). Also: the low-precision path and round_to.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "reference/numeric.h"
#include "reference/reference.h"
#include "tests/common/ref_testing.h"

namespace flashcute::testing {
namespace {

using ref::Problem;

// ---------------------------------------------------------------------------------------------
// Textbook attention: the whole score matrix S = scale * Q K^T (or the soft-capped form) plus the
// ALiBi bias, masked with the contract's inequality written out here (not src/common/mask.h), then
// P = exp(S - max) / sum, O = P V, LSE = max + log(sum). Rows that see no key: O = 0, LSE = -inf.
// ---------------------------------------------------------------------------------------------
struct Naive {
  Tensor out;
  std::vector<double> lse;
};

Naive naive_attention(const Case& c) {
  const Problem& p = c.p;
  Naive n;
  n.out = c.like_out();
  n.lse.assign(static_cast<size_t>(ref::lse_size(p)), kNaN);
  const double scale = p.softmax_scale != 0.0 ? p.softmax_scale : 1.0 / std::sqrt(double(p.head_dim));
  const int64_t dv = p.head_dim_v > 0 ? p.head_dim_v : p.head_dim;
  const int64_t right = p.causal ? 0 : p.window_right;
  for (int64_t b = 0; b < p.batch; ++b) {
    const bool vl = p.varlen();
    const int64_t lq = vl ? p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b] : p.seqlen_q;
    const int64_t lk = vl ? p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b] : p.seqlen_k;
    const int64_t rq = vl ? p.cu_seqlens_q[b] : 0, rk = vl ? p.cu_seqlens_k[b] : 0;
    const int64_t tb = vl ? 0 : b;  // batch index into the tensors
    for (int64_t h = 0; h < p.heads_q; ++h) {
      const int64_t hk = h / (p.heads_q / p.heads_kv);
      double slope = 0.0;
      if (!p.alibi_slopes.empty()) {
        slope = static_cast<int64_t>(p.alibi_slopes.size()) == p.heads_q ? p.alibi_slopes[h]
                                                                         : p.alibi_slopes[b * p.heads_q + h];
      }
      std::vector<double> S(static_cast<size_t>(lq * lk));
      for (int64_t i = 0; i < lq; ++i) {
        for (int64_t j = 0; j < lk; ++j) {
          const int64_t diag = i + lk - lq;
          const bool visible = (p.window_left < 0 || j >= diag - p.window_left) && (right < 0 || j <= diag + right);
          double& s = S[i * lk + j];
          if (!visible) {
            s = -kInf;
            continue;
          }
          double dot = 0.0;
          for (int64_t x = 0; x < p.head_dim; ++x) {
            dot += c.q.at(tb, rq + i, h, x) * c.k.at(tb, rk + j, hk, x);
          }
          s = p.softcap > 0.0 ? p.softcap * std::tanh(dot * scale / p.softcap) : dot * scale;
          s += -slope * std::fabs(static_cast<double>(diag - j));
        }
      }
      for (int64_t i = 0; i < lq; ++i) {
        double m = -kInf;
        for (int64_t j = 0; j < lk; ++j) m = std::fmax(m, S[i * lk + j]);
        const int64_t li = vl ? h * p.cu_seqlens_q.back() + rq + i : (b * p.heads_q + h) * lq + i;
        if (m == -kInf) {
          for (int64_t x = 0; x < dv; ++x) n.out.at(tb, rq + i, h, x) = 0.0;
          n.lse[li] = -kInf;
          continue;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < lk; ++j) sum += std::exp(S[i * lk + j] - m);
        for (int64_t x = 0; x < dv; ++x) {
          double o = 0.0;
          for (int64_t j = 0; j < lk; ++j) {
            if (S[i * lk + j] != -kInf) o += std::exp(S[i * lk + j] - m) / sum * c.v.at(tb, rk + j, hk, x);
          }
          n.out.at(tb, rq + i, h, x) = o;
        }
        n.lse[li] = m + std::log(sum);
      }
    }
  }
  return n;
}

// Elementwise |a - b| <= tol * (1 + |b|), with the same non-finite pattern; names the worst element.
::testing::AssertionResult near(const std::vector<double>& a, const std::vector<double>& b, double tol,
                                const std::string& what) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << what << ": sizes differ";
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same_nonfinite = !std::isfinite(b[i]) && (std::isnan(b[i]) ? std::isnan(a[i]) : a[i] == b[i]);
    if (same_nonfinite) continue;
    if (!(std::fabs(a[i] - b[i]) <= tol * (1.0 + std::fabs(b[i])))) {
      return ::testing::AssertionFailure() << what << ": [" << i << "] reference=" << a[i] << " expected=" << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

struct NamedProblem {
  std::string name;
  Problem p;
  bool strided = false;
  double input_scale = 1.0;
};

void PrintTo(const NamedProblem& c, std::ostream* os) {
  *os << c.name << " (" << describe(c.p) << ")";
}

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

std::vector<NamedProblem> forward_cases() {
  std::vector<NamedProblem> v;
  auto add = [&](std::string name, Problem p, bool strided = false, double scale = 1.0) {
    v.push_back({std::move(name), std::move(p), strided, scale});
  };
  add("plain", dense(2, 7, 9, 3, 3, 8));
  add("one_by_one", dense(1, 1, 1, 1, 1, 8));
  {
    Problem p = dense(2, 5, 11, 2, 2, 8);
    p.causal = true;
    add("causal_sq_lt_sk", p);
  }
  {
    Problem p = dense(2, 11, 5, 2, 2, 8);
    p.causal = true;
    add("causal_sq_gt_sk_empty_rows", p);
  }
  {
    Problem p = dense(1, 9, 9, 2, 2, 8);
    p.causal = true;
    add("causal_square", p);
  }
  for (auto [l, r] : {std::pair<int64_t, int64_t>{2, 1}, {0, 0}, {-1, 2}, {3, -1}, {1, 0}}) {
    Problem p = dense(2, 9, 6, 2, 1, 8);
    p.window_left = l;
    p.window_right = r;
    auto side = [](int64_t x) { return x < 0 ? std::string("inf") : std::to_string(x); };
    add("window_" + side(l) + "_" + side(r), p);
  }
  {
    Problem p = dense(1, 12, 4, 2, 2, 8);  // rows 0..6 see nothing: diag = i - 8, window (1, 1)
    p.window_left = 1;
    p.window_right = 1;
    add("window_rows_left_empty", p);
  }
  {
    Problem p = dense(2, 6, 7, 2, 2, 16);
    p.softcap = 2.5;
    add("softcap", p, false, 3.0);
  }
  {
    Problem p = dense(2, 6, 8, 3, 3, 8);
    p.alibi_slopes = {0.5, 0.25, 0.125};
    p.causal = true;
    add("alibi_per_head", p);
  }
  {
    Problem p = dense(2, 8, 6, 2, 2, 8);
    p.alibi_slopes = {0.3, 0.7, 1.1, 0.05};
    add("alibi_per_batch_head", p);
  }
  add("gqa", dense(2, 5, 7, 6, 2, 8));
  add("mqa", dense(2, 5, 7, 4, 1, 8));
  {
    Problem p = dense(3, 0, 0, 2, 1, 8);
    p.cu_seqlens_q = {0, 3, 3, 8};  // sequence 1 has no rows and is last-but-one; 2 has no keys
    p.cu_seqlens_k = {0, 4, 9, 9};
    add("varlen", p);
  }
  {
    Problem p = dense(4, 0, 0, 2, 2, 8);
    p.cu_seqlens_q = {0, 3, 7, 7, 7};  // the last sequence is empty on both sides
    p.cu_seqlens_k = {0, 5, 5, 11, 11};
    p.causal = true;
    add("varlen_causal_zero_len_last", p);
  }
  add("strided", dense(2, 5, 7, 3, 3, 8), true);
  add("dv_ne_d", dense(2, 5, 7, 2, 2, 8, 5));
  add("dv_gt_d", dense(1, 4, 6, 2, 1, 3, 12));
  {
    Problem p = dense(2, 5, 7, 2, 2, 8);
    p.softmax_scale = 0.37;
    add("custom_scale", p);
  }
  {
    Problem p = dense(3, 0, 0, 6, 2, 12, 8);  // everything at once
    p.cu_seqlens_q = {0, 5, 5, 9};
    p.cu_seqlens_k = {0, 3, 10, 16};
    p.causal = true;
    p.window_left = 4;
    p.softcap = 4.0;
    p.alibi_slopes = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8};
    p.softmax_scale = 0.2;
    add("all_features", p, true, 2.0);
  }
  return v;
}

class ForwardVsNaive : public ::testing::TestWithParam<NamedProblem> {};

TEST_P(ForwardVsNaive, Matches) {
  const NamedProblem& np = GetParam();
  const Case c = make_case(np.p, 1234, np.strided, np.input_scale);
  const Golden g = run_golden(c, /*with_backward=*/false);
  const Naive n = naive_attention(c);
  EXPECT_TRUE(near(g.out.flat(), n.out.flat(), 1e-13, "out")) << c.describe();
  EXPECT_TRUE(near(g.lse, n.lse, 1e-13, "lse")) << c.describe();
  if (c.strided) {
    EXPECT_TRUE(g.out.padding_intact()) << "wrote outside out. " << c.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, ForwardVsNaive, ::testing::ValuesIn(forward_cases()),
                         [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Values computed by hand.
// ---------------------------------------------------------------------------------------------
Case hand_case(Problem p, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v) {
  Case c = make_case(p, 0);
  for (int64_t i = 0; i < c.q.numel(); ++i) c.q.buf[c.q.offset_of(i)] = q[i];
  for (int64_t i = 0; i < c.k.numel(); ++i) c.k.buf[c.k.offset_of(i)] = k[i];
  for (int64_t i = 0; i < c.v.numel(); ++i) c.v.buf[c.v.offset_of(i)] = v[i];
  return c;
}

TEST(ReferenceHand, OneQueryTwoKeys) {
  Problem p = dense(1, 1, 2, 1, 1, 1);
  p.softmax_scale = 1.0;
  const Case c = hand_case(p, {1.0}, {1.0, 2.0}, {3.0, 5.0});
  const Golden g = run_golden(c, false);
  const double e1 = std::exp(1.0), e2 = std::exp(2.0);
  EXPECT_NEAR(g.out.at(0, 0, 0, 0), (3.0 * e1 + 5.0 * e2) / (e1 + e2), 1e-15);
  EXPECT_NEAR(g.lse[0], std::log(e1 + e2), 1e-15);
}

TEST(ReferenceHand, DefaultScaleIsInverseSqrtD) {
  Problem p = dense(1, 1, 2, 1, 1, 4);
  const Case c = hand_case(p, {1, 1, 1, 1}, {1, 0, 0, 0, 0, 0, 0, 0}, {2, 0, 0, 0, -2, 0, 0, 0});
  const Golden g = run_golden(c, false);
  const double a = 0.5, b = 0.0;  // q.k / sqrt(4)
  const double pa = std::exp(a) / (std::exp(a) + std::exp(b));
  EXPECT_NEAR(g.out.at(0, 0, 0, 0), 2.0 * pa - 2.0 * (1.0 - pa), 1e-15);
  EXPECT_NEAR(g.lse[0], std::log(std::exp(a) + std::exp(b)), 1e-15);
}

TEST(ReferenceHand, UniformWhenQueryIsZero) {
  const Case c = hand_case(dense(1, 1, 4, 1, 1, 2), {0, 0}, {1, 2, 3, 4, 5, 6, 7, 8}, {1, -1, 2, -2, 3, -3, 6, -6});
  const Golden g = run_golden(c, false);
  EXPECT_NEAR(g.out.at(0, 0, 0, 0), 3.0, 1e-15);
  EXPECT_NEAR(g.out.at(0, 0, 0, 1), -3.0, 1e-15);
  EXPECT_NEAR(g.lse[0], std::log(4.0), 1e-15);
}

TEST(ReferenceHand, SoftcapOneKey) {
  Problem p = dense(1, 1, 1, 1, 1, 1);
  p.softmax_scale = 1.0;
  p.softcap = 1.0;
  const Case c = hand_case(p, {2.0}, {3.0}, {7.0});
  const Golden g = run_golden(c, true);
  EXPECT_EQ(g.out.at(0, 0, 0, 0), 7.0);
  EXPECT_NEAR(g.lse[0], std::tanh(6.0), 1e-15);
  // One key: P = 1 regardless of q and k, so dq = dk = 0 and dv = dout.
  EXPECT_NEAR(g.dq.at(0, 0, 0, 0), 0.0, 1e-15);
  EXPECT_NEAR(g.dk.at(0, 0, 0, 0), 0.0, 1e-15);
  EXPECT_EQ(g.dv.at(0, 0, 0, 0), c.dout.at(0, 0, 0, 0));
}

TEST(ReferenceHand, AlibiOnly) {
  // q = 0: the scores are the bias alone. sq=1, sk=2: row 0's diagonal is key 1, so key 0 gets
  // -slope * 1 and key 1 gets 0.
  Problem p = dense(1, 1, 2, 1, 1, 1);
  p.alibi_slopes = {0.75};
  const Case c = hand_case(p, {0.0}, {4.0, -9.0}, {1.0, 0.0});
  const Golden g = run_golden(c, false);
  const double w0 = std::exp(-0.75);
  EXPECT_NEAR(g.out.at(0, 0, 0, 0), w0 / (w0 + 1.0), 1e-15);
  EXPECT_NEAR(g.lse[0], std::log(w0 + 1.0), 1e-15);
}

TEST(ReferenceHand, EmptyRowsAreExactZeroAndMinusInf) {
  // Causal with sq=3 > sk=1: diag(i) = i - 2, so rows 0 and 1 see no key; row 2 sees key 0 only.
  Problem p = dense(1, 3, 1, 1, 1, 2);
  p.causal = true;
  const Case c = hand_case(p, {1, 2, 3, 4, 5, 6}, {0.5, -0.5}, {9.0, -3.0});
  const Golden g = run_golden(c, true);
  for (int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(g.lse[i], -kInf);
    for (int64_t x = 0; x < 2; ++x) {
      EXPECT_EQ(g.out.at(0, i, 0, x), 0.0);
      EXPECT_EQ(g.dq.at(0, i, 0, x), 0.0);
    }
  }
  EXPECT_EQ(g.out.at(0, 2, 0, 0), 9.0);
  EXPECT_EQ(g.out.at(0, 2, 0, 1), -3.0);
  EXPECT_NEAR(g.lse[2], (5 * 0.5 - 6 * 0.5) / std::sqrt(2.0), 1e-15);
}

TEST(ReferenceHand, NoKeysAtAll) {
  const Case c = make_case(dense(2, 3, 0, 2, 1, 8), 7);
  const Golden g = run_golden(c, true);
  for (double x : g.out.flat()) EXPECT_EQ(x, 0.0);
  for (double x : g.dq.flat()) EXPECT_EQ(x, 0.0);
  for (double x : g.lse) EXPECT_EQ(x, -kInf);
}

TEST(ReferenceHand, EmptyShapesDoNothing) {
  for (Problem p : {dense(0, 4, 4, 2, 2, 8), dense(2, 0, 4, 2, 2, 8)}) {
    const Case c = make_case(p, 1);
    const Golden g = run_golden(c, true);
    EXPECT_EQ(g.out.numel(), 0);
    for (double x : g.dk.flat()) EXPECT_EQ(x, 0.0) << describe(p);  // keys nobody sees
  }
}

// ---------------------------------------------------------------------------------------------
// Metamorphic: varlen == dense per sequence, bit for bit.
// ---------------------------------------------------------------------------------------------
TEST(ReferenceVarlen, EqualsDensePerSequence) {
  Problem p = dense(5, 0, 0, 4, 2, 16, 8);
  p.cu_seqlens_q = {0, 7, 7, 20, 21, 21};
  p.cu_seqlens_k = {0, 9, 14, 14, 40, 40};
  p.causal = true;
  p.softcap = 3.0;
  p.alibi_slopes.resize(static_cast<size_t>(p.batch * p.heads_q));
  for (size_t i = 0; i < p.alibi_slopes.size(); ++i) p.alibi_slopes[i] = 0.05 * double(i + 1);
  const Case c = make_case(p, 99, /*strided=*/true);
  const Golden g = run_golden(c, true);
  for (int64_t b = 0; b < p.batch; ++b) {
    Problem pb = p;
    pb.batch = 1;
    pb.cu_seqlens_q.clear();
    pb.cu_seqlens_k.clear();
    pb.seqlen_q = p.len_q(b);
    pb.seqlen_k = p.len_k(b);
    pb.alibi_slopes.assign(p.alibi_slopes.begin() + b * p.heads_q, p.alibi_slopes.begin() + (b + 1) * p.heads_q);
    Case cb = make_case(pb, 0);
    auto copy_rows = [](const Tensor& from, int64_t r0, Tensor& to) {
      for (int64_t r = 0; r < to.rows; ++r)
        for (int64_t h = 0; h < to.heads; ++h)
          for (int64_t x = 0; x < to.dim; ++x) to.at(0, r, h, x) = from.at(0, r0 + r, h, x);
    };
    copy_rows(c.q, p.cu_seqlens_q[b], cb.q);
    copy_rows(c.dout, p.cu_seqlens_q[b], cb.dout);
    copy_rows(c.k, p.cu_seqlens_k[b], cb.k);
    copy_rows(c.v, p.cu_seqlens_k[b], cb.v);
    const Golden gb = run_golden(cb, true);
    auto same = [&](const Tensor& whole, int64_t r0, const Tensor& part, const char* what) {
      for (int64_t r = 0; r < part.rows; ++r)
        for (int64_t h = 0; h < part.heads; ++h)
          for (int64_t x = 0; x < part.dim; ++x)
            ASSERT_EQ(whole.at(0, r0 + r, h, x), part.at(0, r, h, x))
                << what << " sequence " << b << " row " << r << " head " << h << ". " << c.describe();
    };
    same(g.out, p.cu_seqlens_q[b], gb.out, "out");
    same(g.dq, p.cu_seqlens_q[b], gb.dq, "dq");
    same(g.dk, p.cu_seqlens_k[b], gb.dk, "dk");
    same(g.dv, p.cu_seqlens_k[b], gb.dv, "dv");
    for (int64_t h = 0; h < p.heads_q; ++h)
      for (int64_t i = 0; i < pb.seqlen_q; ++i)
        ASSERT_EQ(g.lse[ref::lse_index(p, b, h, i)], gb.lse[ref::lse_index(pb, 0, h, i)]);
  }
  EXPECT_TRUE(g.out.padding_intact() && g.dq.padding_intact() && g.dk.padding_intact() && g.dv.padding_intact())
      << c.describe();
}

TEST(ReferenceMetamorphic, GqaEqualsMhaWithRepeatedKv) {
  Problem p = dense(2, 6, 9, 6, 2, 8);
  p.causal = true;
  const Case c = make_case(p, 5);
  Problem pm = p;
  pm.heads_kv = p.heads_q;
  Case m = make_case(pm, 0);
  m.q = c.q;
  m.dout = c.dout;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t j = 0; j < p.seqlen_k; ++j)
      for (int64_t h = 0; h < p.heads_q; ++h)
        for (int64_t x = 0; x < p.head_dim; ++x) {
          m.k.at(b, j, h, x) = c.k.at(b, j, h / 3, x);
          m.v.at(b, j, h, x) = c.v.at(b, j, h / 3, x);
        }
  const Golden g = run_golden(c, true), gm = run_golden(m, true);
  EXPECT_EQ(g.out.flat(), gm.out.flat()) << c.describe();
  EXPECT_EQ(g.dq.flat(), gm.dq.flat()) << c.describe();
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t j = 0; j < p.seqlen_k; ++j)
      for (int64_t hk = 0; hk < p.heads_kv; ++hk)
        for (int64_t x = 0; x < p.head_dim; ++x) {
          double sk = 0, sv = 0;
          for (int64_t h = 3 * hk; h < 3 * hk + 3; ++h) {
            sk += gm.dk.at(b, j, h, x);
            sv += gm.dv.at(b, j, h, x);
          }
          EXPECT_NEAR(g.dk.at(b, j, hk, x), sk, 1e-14 * (1 + std::fabs(sk))) << c.describe();
          EXPECT_NEAR(g.dv.at(b, j, hk, x), sv, 1e-14 * (1 + std::fabs(sv))) << c.describe();
        }
}

TEST(ReferenceMetamorphic, ResultDoesNotDependOnThreads) {
  const Case c = make_case(dense(2, 300, 260, 4, 2, 64), 11);
  ref::set_num_threads(1);
  const Golden one = run_golden(c, true);
  ref::set_num_threads(3);
  const Golden three = run_golden(c, true);
  ref::set_num_threads(0);
  EXPECT_EQ(one.out.flat(), three.out.flat());
  EXPECT_EQ(one.lse, three.lse);
  EXPECT_EQ(one.dq.flat(), three.dq.flat());
  EXPECT_EQ(one.dk.flat(), three.dk.flat());
  EXPECT_EQ(one.dv.flat(), three.dv.flat());
}

// ---------------------------------------------------------------------------------------------
// Large logits and non-finite inputs.
// ---------------------------------------------------------------------------------------------
bool all_finite(const std::vector<double>& x) {
  for (double v : x)
    if (!std::isfinite(v)) return false;
  return true;
}

TEST(ReferenceLargeLogits, EqualHugeInputs) {
  // bf16 133120 = 2^17 * 1.015625: scores ~1e12 * d; every key scores the same, so O = v exactly.
  for (int64_t d : {16, 32, 64, 128}) {
    for (bool causal : {false, true}) {
      Problem p = dense(1, 5, 7, 2, 1, d);
      p.causal = causal;
      Case c = make_case(p, 3);
      c.q.fill(133120.0);
      c.k.fill(133120.0);
      c.v.fill(133120.0);
      const Golden g = run_golden(c, true);
      for (double o : g.out.flat()) ASSERT_NEAR(o, 133120.0, 1e-9) << c.describe();
      const double s = 133120.0 * 133120.0 * double(d) / std::sqrt(double(d));
      for (int64_t i = 0; i < p.seqlen_q; ++i) {
        const int64_t n = causal ? i + 3 : 7;  // keys row i sees
        ASSERT_NEAR(g.lse[i], s + std::log(double(n)), 1e-15 * s) << c.describe();
      }
      EXPECT_TRUE(all_finite(g.dq.flat()) && all_finite(g.dk.flat()) && all_finite(g.dv.flat())) << c.describe();
      // The low-precision path (bf16: 133120 is not an fp16 value) stays finite too.
      Tensor out = c.like_out();
      std::vector<double> lse(g.lse.size());
      ref::forward_lowp(DType::kBFloat16, p, c.q.cview(), c.k.cview(), c.v.cview(), out.view(), lse.data());
      EXPECT_TRUE(all_finite(lse) && all_finite(out.flat())) << c.describe();
    }
  }
}

TEST(ReferenceLargeLogits, RandnTimesFive) {
  Problem p = dense(2, 33, 47, 2, 2, 128);
  p.causal = true;
  const Case c = make_case(p, 17, false, 5.0);
  const Golden g = run_golden(c, true);
  ASSERT_TRUE(all_finite(g.out.flat()) && all_finite(g.dq.flat()) && all_finite(g.dk.flat()) && all_finite(g.dv.flat()))
      << c.describe();
  // Each output is a convex combination of the values the row sees.
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads_q; ++h)
      for (int64_t i = 0; i < p.seqlen_q; ++i)
        for (int64_t x = 0; x < p.head_dim; ++x) {
          double lo = kInf, hi = -kInf;
          for (int64_t j = 0; j <= i + p.seqlen_k - p.seqlen_q; ++j) {
            lo = std::fmin(lo, c.v.at(b, j, h, x));
            hi = std::fmax(hi, c.v.at(b, j, h, x));
          }
          const double o = g.out.at(b, i, h, x);
          ASSERT_TRUE(o >= lo - 1e-12 && o <= hi + 1e-12) << "row " << i << ". " << c.describe();
        }
  const Naive n = naive_attention(c);
  EXPECT_TRUE(near(g.out.flat(), n.out.flat(), 1e-12, "out")) << c.describe();
}

TEST(ReferenceNonFinite, NaNPropagatesToTheRowsThatSeeIt) {
  Problem p = dense(1, 6, 6, 2, 2, 4);
  p.causal = true;  // row i sees keys 0..i
  struct Where {
    const char* tensor;
    int64_t row;
  };
  for (Where w : {Where{"q", 2}, Where{"k", 3}, Where{"v", 3}, Where{"dout", 4}}) {
    Case c = make_case(p, 21);
    Tensor& t = std::string(w.tensor) == "q"   ? c.q
                : std::string(w.tensor) == "k" ? c.k
                : std::string(w.tensor) == "v" ? c.v
                                               : c.dout;
    t.at(0, w.row, 0, 1) = kNaN;
    const Golden g = run_golden(c, true);
    const std::string ctx = std::string("NaN in ") + w.tensor + " row " + std::to_string(w.row) + ". " + c.describe();
    const std::string name(w.tensor);
    for (int64_t i = 0; i < p.seqlen_q; ++i) {
      // Which rows of out (head 0) must be NaN: q -> that row; k, v -> rows that see the key.
      bool out_nan = false, lse_nan = false;
      if (name == "q") out_nan = lse_nan = i == w.row;
      if (name == "k") out_nan = lse_nan = i >= w.row;
      for (int64_t x = 0; x < p.head_dim; ++x) {
        // A NaN in v[j][1] reaches column 1 of the rows that see key j.
        const bool nan_here = out_nan || (name == "v" && x == 1 && i >= w.row);
        EXPECT_EQ(std::isnan(g.out.at(0, i, 0, x)), nan_here) << "out row " << i << ". " << ctx;
        EXPECT_FALSE(std::isnan(g.out.at(0, i, 1, x))) << "head 1 is independent. " << ctx;
      }
      EXPECT_EQ(std::isnan(g.lse[i]), lse_nan) << "lse row " << i << ". " << ctx;
      // dq of row i depends on dout row i, and (through the softmax) on everything row i sees.
      const bool dq_nan = name == "dout" ? i == w.row : name == "q" ? i == w.row : i >= w.row;
      EXPECT_EQ(std::isnan(g.dq.at(0, i, 0, 0)), dq_nan) << "dq row " << i << ". " << ctx;
    }
    if (name == "dout") {  // dk, dv of key j gather the rows that see j: rows >= j
      for (int64_t j = 0; j < p.seqlen_k; ++j) {
        EXPECT_EQ(std::isnan(g.dv.at(0, j, 0, 1)), j <= w.row) << "dv key " << j << ". " << ctx;
        EXPECT_EQ(std::isnan(g.dk.at(0, j, 0, 0)), j <= w.row) << "dk key " << j << ". " << ctx;
      }
    }
  }
}

TEST(ReferenceNonFinite, MaskedNaNKeyDoesNotLeak) {
  // A NaN in a key/value no row can see (outside every window) leaves everything finite.
  Problem p = dense(1, 4, 8, 1, 1, 4);
  p.window_left = 1;
  p.window_right = 0;  // row i sees keys i+3, i+4: key 0 is never seen
  Case c = make_case(p, 2);
  c.k.at(0, 0, 0, 0) = kNaN;
  c.v.at(0, 0, 0, 2) = kInf;
  const Golden g = run_golden(c, true);
  EXPECT_TRUE(all_finite(g.out.flat()) && all_finite(g.lse) && all_finite(g.dq.flat())) << c.describe();
  EXPECT_EQ(g.dk.at(0, 0, 0, 0), 0.0);
  EXPECT_EQ(g.dv.at(0, 0, 0, 2), 0.0);
}

TEST(ReferenceNonFinite, InfValueGivesInfOutput) {
  Problem p = dense(1, 2, 3, 1, 1, 2);
  Case c = make_case(p, 4);
  c.v.at(0, 1, 0, 0) = kInf;
  const Golden g = run_golden(c, false);
  EXPECT_EQ(g.out.at(0, 0, 0, 0), kInf);
  EXPECT_TRUE(std::isfinite(g.out.at(0, 0, 0, 1)));
  EXPECT_TRUE(all_finite(g.lse));
}

// ---------------------------------------------------------------------------------------------
// The low-precision path.
// ---------------------------------------------------------------------------------------------
void round_inputs(Case& c, DType dtype) {
  for (Tensor* t : {&c.q, &c.k, &c.v, &c.dout})
    for (int64_t i = 0; i < t->numel(); ++i) {
      double& x = t->buf[t->offset_of(i)];
      x = ref::round_to(dtype, x);
    }
}

double rel_err(const std::vector<double>& a, const std::vector<double>& golden) {
  double e = 0.0;
  for (size_t i = 0; i < a.size(); ++i) e = std::fmax(e, std::fabs(a[i] - golden[i]));
  return e / max_abs(golden);
}

bool representable(DType dtype, const std::vector<double>& x) {
  for (double v : x)
    if (ref::round_to(dtype, v) != v) return false;
  return true;
}

TEST(ReferenceLowp, SmallNonzeroErrorVsGolden) {
  struct Bound {
    DType dtype;
    double fwd, bwd;  // sanity bounds on max error / max |golden|
  };
  for (Bound bd : {Bound{DType::kBFloat16, 1e-2, 3e-2}, Bound{DType::kFloat16, 2e-3, 5e-3}}) {
    for (bool causal : {false, true}) {
      Problem p = dense(2, 70, 90, 4, 2, 64, 32);
      p.causal = causal;
      p.softcap = causal ? 0.0 : 10.0;
      p.alibi_slopes = causal ? std::vector<double>{0.1, 0.2, 0.3, 0.4} : std::vector<double>{};
      Case c = make_case(p, 8, /*strided=*/causal);
      round_inputs(c, bd.dtype);
      const Golden g = run_golden(c, true);
      Tensor out = c.like_out(), dq = c.like_q(), dk = c.like_k(), dv = c.like_v();
      std::vector<double> lse(g.lse.size());
      ref::forward_lowp(bd.dtype, p, c.q.cview(), c.k.cview(), c.v.cview(), out.view(), lse.data());
      // The backward from the lp forward's own out (rounded) and lse, as an unfused
      // implementation would run it.
      ref::backward_lowp(bd.dtype, p, c.q.cview(), c.k.cview(), c.v.cview(), out.cview(), c.dout.cview(), lse.data(),
                         dq.view(), dk.view(), dv.view());
      const std::string ctx = std::string(bd.dtype == DType::kBFloat16 ? "bf16 " : "fp16 ") + c.describe();
      const double eo = rel_err(out.flat(), g.out.flat());
      std::printf("lowp %s: out %.2e lse %.2e dq %.2e dk %.2e dv %.2e\n", ctx.c_str(), eo, rel_err(lse, g.lse),
                  rel_err(dq.flat(), g.dq.flat()), rel_err(dk.flat(), g.dk.flat()), rel_err(dv.flat(), g.dv.flat()));
      EXPECT_GT(eo, 0.0) << ctx;
      EXPECT_LT(eo, bd.fwd) << ctx;
      EXPECT_LT(rel_err(lse, g.lse), 1e-5) << ctx;
      for (const Tensor* t : {&dq, &dk, &dv}) {
        const Tensor& gt = t == &dq ? g.dq : t == &dk ? g.dk : g.dv;
        const double e = rel_err(t->flat(), gt.flat());
        EXPECT_GT(e, 0.0) << ctx;
        EXPECT_LT(e, bd.bwd) << ctx;
      }
      EXPECT_TRUE(representable(bd.dtype, out.flat()) && representable(bd.dtype, dq.flat()) &&
                  representable(bd.dtype, dk.flat()) && representable(bd.dtype, dv.flat()))
          << ctx;
      for (double x : lse) EXPECT_EQ(double(float(x)), x) << "lse is fp32. " << ctx;
    }
  }
}

TEST(ReferenceLowp, EmptyRowsAndMaskedNaN) {
  Problem p = dense(1, 6, 3, 2, 2, 8);
  p.causal = true;  // rows 0..2 see nothing
  Case c = make_case(p, 6);
  round_inputs(c, DType::kFloat16);
  Tensor out = c.like_out(), dq = c.like_q(), dk = c.like_k(), dv = c.like_v();
  out.fill(kNaN);
  std::vector<double> lse(static_cast<size_t>(ref::lse_size(p)), kNaN);
  ref::forward_lowp(DType::kFloat16, p, c.q.cview(), c.k.cview(), c.v.cview(), out.view(), lse.data());
  ref::backward_lowp(DType::kFloat16, p, c.q.cview(), c.k.cview(), c.v.cview(), out.cview(), c.dout.cview(), lse.data(),
                     dq.view(), dk.view(), dv.view());
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ(lse[ref::lse_index(p, 0, h, i)] == -kInf, i < 3);
      for (int64_t x = 0; x < 8; ++x) {
        if (i < 3) {
          EXPECT_EQ(out.at(0, i, h, x), 0.0);
          EXPECT_EQ(dq.at(0, i, h, x), 0.0);
        }
        EXPECT_TRUE(std::isfinite(out.at(0, i, h, x)) && std::isfinite(dq.at(0, i, h, x)));
      }
    }
}

// ---------------------------------------------------------------------------------------------
// round_to and the bit conversions of numeric.h.
// ---------------------------------------------------------------------------------------------
TEST(RoundTo, Float16KnownValues) {
  const DType f16 = DType::kFloat16;
  EXPECT_EQ(ref::round_to(f16, 1.0), 1.0);
  EXPECT_EQ(ref::round_to(f16, 0.1), 0.0999755859375);
  EXPECT_EQ(ref::round_to(f16, 1.0 + std::ldexp(1.0, -11)), 1.0);  // tie: to even (1.0)
  EXPECT_EQ(ref::round_to(f16, 1.0 + 3 * std::ldexp(1.0, -11)), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(ref::round_to(f16, 1.0 + std::ldexp(1.0, -11) + 1e-12), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(ref::round_to(f16, -2049.0), -2048.0);  // tie at spacing 2: to even
  EXPECT_EQ(ref::round_to(f16, 2051.0), 2052.0);
  EXPECT_EQ(ref::round_to(f16, 65504.0), 65504.0);
  EXPECT_EQ(ref::round_to(f16, 65519.99), 65504.0);
  EXPECT_EQ(ref::round_to(f16, 65520.0), kInf);  // the tie above the largest finite overflows
  EXPECT_EQ(ref::round_to(f16, -1e6), -kInf);
  EXPECT_EQ(ref::round_to(f16, std::ldexp(1.0, -24)), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(ref::round_to(f16, std::ldexp(1.0, -25)), 0.0);                   // tie to even: 0
  EXPECT_EQ(ref::round_to(f16, std::ldexp(1.0, -25) * 1.0001), std::ldexp(1.0, -24));
  EXPECT_EQ(ref::round_to(f16, 3 * std::ldexp(1.0, -25)), std::ldexp(1.0, -23));       // tie: to even
  EXPECT_EQ(ref::round_to(f16, 1023.5 * std::ldexp(1.0, -24)), std::ldexp(1.0, -14));  // to normal
  EXPECT_EQ(ref::round_to(f16, 5.5 * std::ldexp(1.0, -24)), 6 * std::ldexp(1.0, -24));
  EXPECT_TRUE(std::signbit(ref::round_to(f16, -1e-30)));  // -0
  EXPECT_TRUE(std::isnan(ref::round_to(f16, kNaN)));
  EXPECT_EQ(ref::round_to(f16, -kInf), -kInf);
}

TEST(RoundTo, BFloat16KnownValues) {
  const DType bf = DType::kBFloat16;
  EXPECT_EQ(ref::round_to(bf, 1.0 + std::ldexp(1.0, -8)), 1.0);  // tie: to even
  EXPECT_EQ(ref::round_to(bf, 1.0 + 3 * std::ldexp(1.0, -8)), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(ref::round_to(bf, 133120.0), 133120.0);
  EXPECT_EQ(ref::round_to(bf, 133121.0), 133120.0);
  EXPECT_EQ(ref::round_to(bf, 0.1), 0.10009765625);
  const double max_bf16 = std::ldexp(255.0, 120);
  EXPECT_EQ(ref::round_to(bf, max_bf16), max_bf16);
  EXPECT_EQ(ref::round_to(bf, max_bf16 * (1 + std::ldexp(1.0, -9)) * 0.99999), max_bf16);
  EXPECT_EQ(ref::round_to(bf, max_bf16 + std::ldexp(1.0, 119)), kInf);  // tie, odd: overflows
  EXPECT_EQ(ref::round_to(bf, 1e39), kInf);
  EXPECT_EQ(ref::round_to(bf, std::ldexp(1.0, -133)), std::ldexp(1.0, -133));
  EXPECT_EQ(ref::round_to(bf, std::ldexp(1.0, -134)), 0.0);
  EXPECT_EQ(ref::round_to(bf, 3 * std::ldexp(1.0, -134)), std::ldexp(1.0, -132));
  EXPECT_TRUE(std::isnan(ref::round_to(bf, -kNaN)));
}

TEST(RoundTo, AgreesWithBitConversions) {
  // Every fp16 / bf16 value round-trips; random fp32 values round the same way both ways.
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float h = numeric::half_bits_to_float(bits), f = numeric::bf16_bits_to_float(bits);
    if (std::isnan(h)) {
      EXPECT_TRUE(std::isnan(numeric::half_bits_to_float(numeric::float_to_half_bits(h))));
    } else {
      ASSERT_EQ(numeric::float_to_half_bits(h), bits) << std::hex << b;
      ASSERT_EQ(ref::round_to(DType::kFloat16, h), double(h));
    }
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(numeric::round_bf16(f)));
    } else {
      ASSERT_EQ(numeric::float_to_bf16_bits(f), bits) << std::hex << b;
      ASSERT_EQ(ref::round_to(DType::kBFloat16, f), double(f));
    }
  }
  std::mt19937_64 rng(77);
  for (int n = 0; n < 2000000; ++n) {
    const float x = numeric::bits_float(static_cast<uint32_t>(rng()));
    if (std::isnan(x)) continue;
    ASSERT_EQ(ref::round_to(DType::kFloat16, x), double(numeric::round_half(x))) << x;
    ASSERT_EQ(ref::round_to(DType::kBFloat16, x), double(numeric::round_bf16(x))) << x;
  }
}

// ---------------------------------------------------------------------------------------------
// Speed: the oracle must serve seqlen 2k. Prints the time; the bound only catches a pathology.
// ---------------------------------------------------------------------------------------------
TEST(ReferenceSpeed, Seqlen2kForwardBackward) {
  Problem p = dense(1, 2048, 2048, 4, 4, 128);
  Case c = make_case(p, 1);
  round_inputs(c, DType::kBFloat16);
  const auto t0 = std::chrono::steady_clock::now();
  const Golden g = run_golden(c, false);
  const auto t1 = std::chrono::steady_clock::now();
  Tensor dq = c.like_q(), dk = c.like_k(), dv = c.like_v();
  ref::backward(p, c.q.cview(), c.k.cview(), c.v.cview(), g.out.cview(), c.dout.cview(), g.lse.data(), dq.view(),
                dk.view(), dv.view());
  const auto t2 = std::chrono::steady_clock::now();
  const double fwd = std::chrono::duration<double>(t1 - t0).count();
  const double bwd = std::chrono::duration<double>(t2 - t1).count();
  std::printf("reference 2048x2048, 4 heads, d 128: forward %.2f s, backward %.2f s (%u threads)\n", fwd, bwd,
              std::thread::hardware_concurrency());
  EXPECT_LT(fwd + bwd, 120.0) << describe(p);
  EXPECT_TRUE(all_finite(dq.flat()));
}

}  // namespace
}  // namespace flashcute::testing
