#pragma once
// Helpers for tests that drive the CPU reference: strided (batch, rows, heads, dim) tensors of
// doubles, random problems with fixed seeds, and the one-line description of a case that every
// failure prints so it can be reproduced.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "reference/reference.h"

namespace flashcute::testing {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A (batch, rows, heads, dim) array of doubles in a buffer of its own. Contiguous (flash_attn's
// layout) by default. A strided one keeps heads outside rows within a batch and pads every row,
// head and batch; the padding holds NaN, so reading a wrong element shows up as NaN and a stray
// write as a changed pad (padding_intact). Varlen arrays are (1, total, heads, dim) and their views
// have stride_batch = 0, as Problem expects.
struct Tensor {
  int64_t batch = 0, rows = 0, heads = 0, dim = 0;
  int64_t sb = 0, sr = 0, sh = 0;
  bool varlen = false;
  std::vector<double> buf;

  Tensor() = default;
  Tensor(int64_t batch_, int64_t rows_, int64_t heads_, int64_t dim_, bool strided = false, bool varlen_ = false)
      : batch(batch_), rows(rows_), heads(heads_), dim(dim_), varlen(varlen_) {
    if (strided) {
      sr = dim + 3;
      sh = rows * sr + 5;
      sb = heads * sh + 7;
    } else {
      sh = dim;
      sr = heads * dim;
      sb = rows * sr;
    }
    buf.assign(static_cast<size_t>(std::max<int64_t>(batch * sb, 1)), strided ? kNaN : 0.0);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < dim; ++c) at(b, r, h, c) = 0.0;
  }

  int64_t offset(int64_t b, int64_t r, int64_t h, int64_t c) const { return b * sb + r * sr + h * sh + c; }
  double& at(int64_t b, int64_t r, int64_t h, int64_t c) { return buf[offset(b, r, h, c)]; }
  double at(int64_t b, int64_t r, int64_t h, int64_t c) const { return buf[offset(b, r, h, c)]; }
  int64_t numel() const { return batch * rows * heads * dim; }

  // The i-th element in logical (b, r, h, c) order.
  int64_t offset_of(int64_t i) const {
    const int64_t c = i % dim, h = (i / dim) % heads, r = (i / dim / heads) % rows, b = i / dim / heads / rows;
    return offset(b, r, h, c);
  }

  ref::ConstView cview() const { return {buf.data(), varlen ? 0 : sb, sr, sh}; }
  ref::MutView view() { return {buf.data(), varlen ? 0 : sb, sr, sh}; }

  // Logical elements in (b, r, h, c) order.
  std::vector<double> flat() const {
    std::vector<double> out(static_cast<size_t>(numel()));
    for (int64_t i = 0; i < numel(); ++i) out[i] = buf[offset_of(i)];
    return out;
  }

  // Sets every element (not the padding) to `value`, e.g. NaN before a call that must write all.
  void fill(double value) {
    for (int64_t i = 0; i < numel(); ++i) buf[offset_of(i)] = value;
  }

  void fill_randn(std::mt19937_64& rng, double scale = 1.0) {
    std::normal_distribution<double> nd(0.0, 1.0);
    for (int64_t i = 0; i < numel(); ++i) buf[offset_of(i)] = scale * nd(rng);
  }

  // Every position of buf that is not an element still holds NaN (strided tensors only).
  bool padding_intact() const {
    std::vector<char> is_elem(buf.size(), 0);
    for (int64_t i = 0; i < numel(); ++i) is_elem[offset_of(i)] = 1;
    for (size_t i = 0; i < buf.size(); ++i) {
      if (!is_elem[i] && !std::isnan(buf[i])) return false;
    }
    return true;
  }
};

inline std::string describe(const ref::Problem& p) {
  std::ostringstream s;
  s << "batch=" << p.batch << " sq=" << p.seqlen_q << " sk=" << p.seqlen_k << " hq=" << p.heads_q
    << " hkv=" << p.heads_kv << " d=" << p.head_dim << " dv=" << p.dv();
  if (p.softmax_scale != 0.0) s << " scale=" << p.softmax_scale;
  if (p.causal) s << " causal";
  if (p.window_left >= 0 || p.window_right >= 0) {
    s << " window=(" << p.window_left << "," << p.window_right << ")";
  }
  if (p.softcap > 0.0) s << " softcap=" << p.softcap;
  if (!p.alibi_slopes.empty()) {
    s << (static_cast<int64_t>(p.alibi_slopes.size()) == p.heads_q ? " alibi=per_head" : " alibi=per_batch_head");
  }
  if (p.varlen()) {
    s << " cu_q=[";
    for (size_t i = 0; i < p.cu_seqlens_q.size(); ++i) s << (i ? "," : "") << p.cu_seqlens_q[i];
    s << "] cu_k=[";
    for (size_t i = 0; i < p.cu_seqlens_k.size(); ++i) s << (i ? "," : "") << p.cu_seqlens_k[i];
    s << "]";
  }
  return s.str();
}

// The inputs of one problem: q, k, v and the output gradient, filled with scaled randn.
struct Case {
  ref::Problem p;
  uint64_t seed = 0;
  bool strided = false;
  double input_scale = 1.0;
  Tensor q, k, v, dout;

  std::string describe() const {
    std::ostringstream s;
    s << "reproduce: " << testing::describe(p) << (strided ? " strided" : "") << " input_scale=" << input_scale
      << " seed=" << seed;
    return s.str();
  }

  // New tensors shaped like q (with dim dv) / k / v, same layout kind as the inputs.
  Tensor like_out() const { return shaped(rows_q(), p.heads_q, p.dv()); }
  Tensor like_q() const { return shaped(rows_q(), p.heads_q, p.head_dim); }
  Tensor like_k() const { return shaped(rows_k(), p.heads_kv, p.head_dim); }
  Tensor like_v() const { return shaped(rows_k(), p.heads_kv, p.dv()); }

  int64_t rows_q() const { return p.varlen() ? p.cu_seqlens_q.back() : p.seqlen_q; }
  int64_t rows_k() const { return p.varlen() ? p.cu_seqlens_k.back() : p.seqlen_k; }

 private:
  Tensor shaped(int64_t rows, int64_t heads, int64_t dim) const {
    return Tensor(p.varlen() ? 1 : p.batch, rows, heads, dim, strided, p.varlen());
  }
};

inline Case make_case(const ref::Problem& p, uint64_t seed, bool strided = false, double input_scale = 1.0) {
  Case c;
  c.p = p;
  c.seed = seed;
  c.strided = strided;
  c.input_scale = input_scale;
  c.q = c.like_q();
  c.k = c.like_k();
  c.v = c.like_v();
  c.dout = c.like_out();
  std::mt19937_64 rng(seed);
  c.q.fill_randn(rng, input_scale);
  c.k.fill_randn(rng, input_scale);
  c.v.fill_randn(rng, input_scale);
  c.dout.fill_randn(rng, 1.0);
  return c;
}

// Golden forward and backward of a case (outputs pre-filled with NaN so an unwritten element shows).
struct Golden {
  Tensor out, dq, dk, dv;
  std::vector<double> lse;
};

inline Golden run_golden(const Case& c, bool with_backward = true) {
  Golden g;
  g.out = c.like_out();
  g.out.fill(kNaN);
  g.lse.assign(static_cast<size_t>(ref::lse_size(c.p)), kNaN);
  ref::forward(c.p, c.q.cview(), c.k.cview(), c.v.cview(), g.out.view(), g.lse.data());
  if (with_backward) {
    g.dq = c.like_q();
    g.dk = c.like_k();
    g.dv = c.like_v();
    g.dq.fill(kNaN);
    g.dk.fill(kNaN);
    g.dv.fill(kNaN);
    ref::backward(c.p, c.q.cview(), c.k.cview(), c.v.cview(), g.out.cview(), c.dout.cview(), g.lse.data(), g.dq.view(),
                  g.dk.view(), g.dv.view());
  }
  return g;
}

inline double max_abs(const std::vector<double>& x) {
  double m = 0.0;
  for (double v : x) m = std::fmax(m, std::fabs(v));
  return m;
}

}  // namespace flashcute::testing
