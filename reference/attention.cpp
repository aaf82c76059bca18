// The attention math of the CPU reference, once for both of its precisions:
//   T = double: the golden result (forward, backward);
//   T = float:  the unfused low-precision implementation the tolerance rule compares against
//               (forward_lowp, backward_lowp): fp32 accumulation and softmax, every matrix-product
//               input rounded to fp16/bf16, outputs rounded to the dtype.
// Where the two differ, the code says `if constexpr (kLowp)`.
//
// Work is split into independent items that write disjoint outputs, so the result does not depend
// on the number of threads:
//   forward and dQ: (batch, q head, block of kRowBlock query rows);
//   dK and dV:      (batch, kv head, block of kKeyBlock keys), looping over the q heads of the group
//                   and the rows that see the block (scores are recomputed, as kernels do).
// Masked entries never take part in a sum (they are skipped, not multiplied by zero), so a NaN or
// inf in a key a row cannot see does not reach that row, as in the math of the contract.
// Non-finite inputs are not sanitized: a NaN logit makes its row NaN; a +inf logit, or a row whose
// visible logits are all -inf (both need infinite inputs), gives NaN as the softmax's inf/inf or
// 0/0 does. Only a row that sees no key at all gets O = 0, LSE = -inf. In the backward, a row whose
// given LSE is -inf has P = 0 and contributes nothing.

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/mask.h"
#include "reference/detail.h"
#include "reference/numeric.h"
#include "reference/reference.h"

#if defined(__FAST_MATH__)
#error "the reference must not be built with -ffast-math: it must propagate NaN/Inf like the math"
#endif

namespace flashcute::ref {
namespace {

using detail::accumulate;
using detail::axpy;
using detail::scores;

constexpr int64_t kRowBlock = 16;  // query rows per work item (forward, dQ)
constexpr int64_t kKeyBlock = 64;  // keys per work item (dK, dV)
constexpr int64_t kRowChunk = 64;  // query rows per step inside a dK/dV item
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The visible key interval [jb, je) of each of a set of rows (empty: jb == je), their union
// [ub, ue) (ub == ue when no row sees a key), and the intervals relative to ub (rb, re).
struct RowRanges {
  std::vector<int64_t> jb, je, rb, re;
  int64_t ub = 0, ue = 0;

  void finish() {
    ub = std::numeric_limits<int64_t>::max();
    ue = std::numeric_limits<int64_t>::min();
    for (size_t r = 0; r < jb.size(); ++r) {
      if (jb[r] < je[r]) {
        ub = std::min(ub, jb[r]);
        ue = std::max(ue, je[r]);
      }
    }
    if (ue < ub) ub = ue = 0;
    rb.resize(jb.size());
    re.resize(jb.size());
    for (size_t r = 0; r < jb.size(); ++r) {
      rb[r] = jb[r] < je[r] ? jb[r] - ub : 0;
      re[r] = jb[r] < je[r] ? je[r] - ub : 0;
    }
  }
  bool empty(size_t r) const { return jb[r] >= je[r]; }
};

template <class T>
struct Scratch {
  std::vector<T> a, b, s, dp, pt, dst, acc, acc2;
  std::vector<int64_t> kb, ke;
};

template <class T>
class Attention {
 public:
  static constexpr bool kLowp = std::is_same_v<T, float>;

  Attention(const Problem& p, DType dtype) : p_(p), dtype_(dtype) {
    d_ = p.head_dim;
    dv_ = p.dv();
    group_ = p.heads_q / p.heads_kv;
    scale_ = static_cast<T>(p.scale());
    cap_ = static_cast<T>(p.softcap);
    window_ = make_window(p.causal, p.window_left, p.window_right);
    offsets_ = detail::seq_offsets(p);
    // Rough multiply-add count of one pass, to decide whether threads pay off.
    for (int64_t b = 0; b < p.batch; ++b) {
      work_ += static_cast<double>(p.len_q(b)) * static_cast<double>(p.len_k(b)) * static_cast<double>(p.heads_q) *
               static_cast<double>(d_ + dv_);
    }
  }

  void forward(ConstView q, ConstView k, ConstView v, MutView out, double* lse) {
    pack_kv(k, v);
    const auto units = row_units();
    detail::parallel_for(static_cast<int64_t>(units.size()), work_,
                         [&](int64_t u) { forward_rows(units[u], q, out, lse); });
  }

  void backward(ConstView q, ConstView k, ConstView v, ConstView out, ConstView dout, const double* lse, MutView dq,
                MutView dk, MutView dv) {
    pack_kv(k, v);
    row_dot_ = compute_row_dot(out, dout);
    const auto rows = row_units();
    detail::parallel_for(static_cast<int64_t>(rows.size()), work_,
                         [&](int64_t u) { dq_rows(rows[u], q, dout, lse, dq); });
    const auto keys = key_units();
    detail::parallel_for(static_cast<int64_t>(keys.size()), work_,
                         [&](int64_t u) { dkv_keys(keys[u], q, dout, lse, dk, dv); });
  }

 private:
  struct Unit {
    int64_t b, h, lo, hi;  // h: q head (row units) or kv head (key units); [lo, hi): rows or keys
  };

  // An input value as the products see it: rounded to the dtype on the low-precision path.
  T in(double x) const {
    if constexpr (kLowp) {
      return static_cast<T>(round_to(dtype_, x));
    } else {
      return x;
    }
  }
  // An intermediate rounded to the dtype before it enters a matrix product (low precision only).
  T rnd(T x) const {
    if constexpr (kLowp) {
      return numeric::round_float(dtype_, x);
    } else {
      return x;
    }
  }

  // The logit of raw score s = q_i . k_j: scaled (or soft-capped), plus the ALiBi bias.
  // *t receives tanh(s * scale / cap) for the softcap gradient.
  T logit(T s, int64_t i, int64_t j, int64_t lq, int64_t lk, T slope, T* t) const {
    T x;
    if (cap_ > 0) {
      *t = std::tanh(s * scale_ / cap_);
      x = cap_ * *t;
    } else {
      x = s * scale_;
    }
    if (slope != 0) x += alibi_bias<T>(slope, i, j, lq, lk);
    return x;
  }

  const T* kbase(int64_t b, int64_t hk) const {
    return kp_.data() + (hk * offsets_.total_k() + offsets_.k_start[b]) * d_;
  }
  const T* vbase(int64_t b, int64_t hk) const {
    return vp_.data() + (hk * offsets_.total_k() + offsets_.k_start[b]) * dv_;
  }

  // K and V of every (batch, kv head) copied into contiguous (keys, dim) buffers of T.
  void pack_kv(ConstView k, ConstView v) {
    const int64_t total = offsets_.total_k();
    kp_.assign(static_cast<size_t>(p_.heads_kv * total * d_), T(0));
    vp_.assign(static_cast<size_t>(p_.heads_kv * total * dv_), T(0));
    const int64_t n = p_.batch * p_.heads_kv;
    detail::parallel_for(n, static_cast<double>(kp_.size() + vp_.size()), [&](int64_t u) {
      const int64_t b = u / p_.heads_kv, hk = u % p_.heads_kv;
      T* kd = kp_.data() + (hk * total + offsets_.k_start[b]) * d_;
      T* vd = vp_.data() + (hk * total + offsets_.k_start[b]) * dv_;
      for (int64_t j = 0; j < p_.len_k(b); ++j) {
        const double* ks = k.at(b, p_.row0_k(b) + j, hk);
        const double* vs = v.at(b, p_.row0_k(b) + j, hk);
        for (int64_t c = 0; c < d_; ++c) kd[j * d_ + c] = in(ks[c]);
        for (int64_t c = 0; c < dv_; ++c) vd[j * dv_ + c] = in(vs[c]);
      }
    });
  }

  std::vector<Unit> row_units() const {
    std::vector<Unit> units;
    for (int64_t b = 0; b < p_.batch; ++b) {
      for (int64_t h = 0; h < p_.heads_q; ++h) {
        for (int64_t i = 0; i < p_.len_q(b); i += kRowBlock) {
          units.push_back({b, h, i, std::min(i + kRowBlock, p_.len_q(b))});
        }
      }
    }
    return units;
  }

  std::vector<Unit> key_units() const {
    std::vector<Unit> units;
    for (int64_t b = 0; b < p_.batch; ++b) {
      for (int64_t hk = 0; hk < p_.heads_kv; ++hk) {
        for (int64_t j = 0; j < p_.len_k(b); j += kKeyBlock) {
          units.push_back({b, hk, j, std::min(j + kKeyBlock, p_.len_k(b))});
        }
      }
    }
    return units;
  }

  RowRanges ranges(int64_t lo, int64_t hi, int64_t lq, int64_t lk) const {
    RowRanges rr;
    rr.jb.resize(hi - lo);
    rr.je.resize(hi - lo);
    for (int64_t i = lo; i < hi; ++i) {
      visible_key_range(i, lq, lk, window_, &rr.jb[i - lo], &rr.je[i - lo]);
    }
    rr.finish();
    return rr;
  }

  // Rows [lo, hi) of (b, h) of a view copied into a contiguous (rows, dim) buffer of T.
  void pack_rows(ConstView x, int64_t b, int64_t h, int64_t row0, int64_t lo, int64_t hi, int64_t dim,
                 std::vector<T>& dst) const {
    dst.resize(static_cast<size_t>((hi - lo) * dim));
    for (int64_t i = lo; i < hi; ++i) {
      const double* src = x.at(b, row0 + i, h);
      for (int64_t c = 0; c < dim; ++c) dst[(i - lo) * dim + c] = in(src[c]);
    }
  }

  void forward_rows(const Unit& u, ConstView q, MutView out, double* lse) const {
    thread_local Scratch<T> sc;
    const int64_t lq = p_.len_q(u.b), lk = p_.len_k(u.b), hk = u.h / group_;
    const int64_t n = u.hi - u.lo, row0 = p_.row0_q(u.b);
    const T slope = static_cast<T>(p_.slope(u.b, u.h));
    const RowRanges rr = ranges(u.lo, u.hi, lq, lk);
    const int64_t w = rr.ue - rr.ub;
    pack_rows(q, u.b, u.h, row0, u.lo, u.hi, d_, sc.a);
    sc.s.resize(static_cast<size_t>(n * w));
    scores(sc.a.data(), n, kbase(u.b, hk) + rr.ub * d_, w, d_, sc.s.data(), w);

    std::vector<T>& sum = sc.b;  // the softmax denominator of each row
    sum.assign(static_cast<size_t>(n), T(0));
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = u.lo + r;
      double& lse_i = lse[lse_index(p_, u.b, u.h, i)];
      if (rr.jb[r] >= rr.je[r]) {
        lse_i = kNegInf;
        continue;
      }
      T* s = sc.s.data() + r * w;  // s[j - ub] for j in [jb, je)
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = rr.jb[r]; j < rr.je[r]; ++j) {
        T t;
        const T x = logit(s[j - rr.ub], i, j, lq, lk, slope, &t);
        s[j - rr.ub] = x;
        if (!std::isnan(m) && (x > m || std::isnan(x))) m = x;  // a NaN logit makes the row NaN
      }
      // Max-subtracted: every exponent is <= 0, so large finite logits cannot overflow; the row's
      // largest term is exp(0) = 1, so the sum is >= 1 (for finite logits).
      T l = 0;
      for (int64_t j = rr.jb[r]; j < rr.je[r]; ++j) {
        s[j - rr.ub] = std::exp(s[j - rr.ub] - m);
        l += s[j - rr.ub];
      }
      if constexpr (kLowp) {
        for (int64_t j = rr.jb[r]; j < rr.je[r]; ++j) s[j - rr.ub] = rnd(s[j - rr.ub] / l);
      }
      sum[r] = l;
      lse_i = static_cast<double>(m + std::log(l));
    }

    sc.acc.assign(static_cast<size_t>(n * dv_), T(0));
    accumulate(sc.s.data(), w, rr.rb.data(), rr.re.data(), n, vbase(u.b, hk) + rr.ub * dv_, dv_, sc.acc.data());
    for (int64_t r = 0; r < n; ++r) {
      double* o = out.at(u.b, row0 + u.lo + r, u.h);
      const T* acc = sc.acc.data() + r * dv_;
      const bool empty = rr.jb[r] >= rr.je[r];
      for (int64_t c = 0; c < dv_; ++c) {
        if (empty) {
          o[c] = 0.0;
        } else if constexpr (kLowp) {
          o[c] = rnd(acc[c]);
        } else {
          o[c] = acc[c] / sum[r];
        }
      }
    }
  }

  // D_i = rowsum(dO_i * O_i), in the layout of the LSE.
  std::vector<double> compute_row_dot(ConstView out, ConstView dout) const {
    std::vector<double> dd(static_cast<size_t>(lse_size(p_)), 0.0);
    const int64_t n = p_.batch * p_.heads_q;
    detail::parallel_for(n, work_ / 64, [&](int64_t u) {
      const int64_t b = u / p_.heads_q, h = u % p_.heads_q;
      for (int64_t i = 0; i < p_.len_q(b); ++i) {
        const double* o = out.at(b, p_.row0_q(b) + i, h);
        const double* g = dout.at(b, p_.row0_q(b) + i, h);
        T acc = 0;
        for (int64_t c = 0; c < dv_; ++c) acc += in(g[c]) * in(o[c]);
        dd[lse_index(p_, b, h, i)] = static_cast<double>(acc);
      }
    });
    return dd;
  }

  // dS of one entry (with its softcap factor); *prob receives P.
  T dscore(T s, T dp, T lse_i, T d_i, int64_t i, int64_t j, int64_t lq, int64_t lk, T slope, T* prob) const {
    T t = 0;
    const T x = logit(s, i, j, lq, lk, slope, &t);
    const T pij = std::exp(x - lse_i);
    T ds = pij * (dp - d_i);
    if (cap_ > 0) ds *= T(1) - t * t;  // d/ds of cap * tanh(s * scale / cap) is scale * (1 - t^2)
    *prob = pij;
    return ds;
  }

  void dq_rows(const Unit& u, ConstView q, ConstView dout, const double* lse, MutView dq) const {
    thread_local Scratch<T> sc;
    const int64_t lq = p_.len_q(u.b), lk = p_.len_k(u.b), hk = u.h / group_;
    const int64_t n = u.hi - u.lo, row0 = p_.row0_q(u.b);
    const T slope = static_cast<T>(p_.slope(u.b, u.h));
    RowRanges rr = ranges(u.lo, u.hi, lq, lk);
    // A row whose LSE is -inf has P = 0 everywhere (it sees no key): it contributes nothing.
    for (int64_t r = 0; r < n; ++r) {
      if (lse[lse_index(p_, u.b, u.h, u.lo + r)] == kNegInf) rr.je[r] = rr.jb[r];
    }
    rr.finish();
    const int64_t w = rr.ue - rr.ub;
    pack_rows(q, u.b, u.h, row0, u.lo, u.hi, d_, sc.a);
    pack_rows(dout, u.b, u.h, row0, u.lo, u.hi, dv_, sc.b);
    sc.s.resize(static_cast<size_t>(n * w));
    sc.dp.resize(static_cast<size_t>(n * w));
    const T* K = kbase(u.b, hk);
    scores(sc.a.data(), n, K + rr.ub * d_, w, d_, sc.s.data(), w);
    scores(sc.b.data(), n, vbase(u.b, hk) + rr.ub * dv_, w, dv_, sc.dp.data(), w);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = u.lo + r, idx = lse_index(p_, u.b, u.h, i);
      const T lse_i = static_cast<T>(lse[idx]), d_i = static_cast<T>(row_dot_[idx]);
      T* s = sc.s.data() + r * w;
      const T* dp = sc.dp.data() + r * w;
      for (int64_t j = rr.jb[r]; j < rr.je[r]; ++j) {
        T pij;
        s[j - rr.ub] = rnd(dscore(s[j - rr.ub], dp[j - rr.ub], lse_i, d_i, i, j, lq, lk, slope, &pij));
      }
    }
    sc.acc.assign(static_cast<size_t>(n * d_), T(0));
    accumulate(sc.s.data(), w, rr.rb.data(), rr.re.data(), n, K + rr.ub * d_, d_, sc.acc.data());
    for (int64_t r = 0; r < n; ++r) {
      double* g = dq.at(u.b, row0 + u.lo + r, u.h);
      for (int64_t c = 0; c < d_; ++c) g[c] = rnd(scale_ * sc.acc[r * d_ + c]);
    }
  }

  // dK, dV of keys [j0, j1) of kv head hk: sums over the q heads of the group and the rows that
  // see the keys, kRowChunk rows at a time: S and dP of the chunk, then P^T and dS^T (keys, rows)
  // multiply the chunk's dO and Q.
  void dkv_keys(const Unit& u, ConstView q, ConstView dout, const double* lse, MutView dk, MutView dv) const {
    thread_local Scratch<T> sc;
    const int64_t lq = p_.len_q(u.b), lk = p_.len_k(u.b), hk = u.h;
    const int64_t j0 = u.lo, j1 = u.hi, nk = j1 - j0, row0 = p_.row0_q(u.b);
    const T* K = kbase(u.b, hk) + j0 * d_;  // the block's keys
    const T* V = vbase(u.b, hk) + j0 * dv_;
    std::vector<T>& acc_k = sc.acc;   // (nk, d)
    std::vector<T>& acc_v = sc.acc2;  // (nk, dv)
    acc_k.assign(static_cast<size_t>(nk * d_), T(0));
    acc_v.assign(static_cast<size_t>(nk * dv_), T(0));

    // Both ends of the visible interval are non-decreasing in i, so the rows that see any key of
    // [j0, j1) are one interval [ilo, ihi).
    const RowRanges all = ranges(0, lq, lq, lk);
    int64_t ilo = 0, ihi = lq;
    while (ilo < lq && (all.je[ilo] <= j0 || all.empty(ilo))) ++ilo;
    while (ihi > ilo && (all.jb[ihi - 1] >= j1 || all.empty(ihi - 1))) --ihi;

    for (int64_t h = hk * group_; h < (hk + 1) * group_; ++h) {
      const T slope = static_cast<T>(p_.slope(u.b, h));
      for (int64_t c0 = ilo; c0 < ihi; c0 += kRowChunk) {
        const int64_t c1 = std::min(c0 + kRowChunk, ihi), nr = c1 - c0;
        // Each row's keys within the block, relative to j0; rows with LSE = -inf see nothing.
        RowRanges rr;
        rr.jb.resize(nr);
        rr.je.resize(nr);
        for (int64_t r = 0; r < nr; ++r) {
          const bool dead = lse[lse_index(p_, u.b, h, c0 + r)] == kNegInf;
          rr.jb[r] = std::clamp(all.jb[c0 + r], j0, j1) - j0;
          rr.je[r] = dead ? rr.jb[r] : std::max(rr.jb[r], std::clamp(all.je[c0 + r], j0, j1) - j0);
        }
        rr.finish();
        const int64_t w = rr.ue - rr.ub;  // keys [ub, ue) of the block are seen by the chunk
        if (w == 0) continue;
        pack_rows(q, u.b, h, row0, c0, c1, d_, sc.a);
        pack_rows(dout, u.b, h, row0, c0, c1, dv_, sc.b);
        sc.s.resize(static_cast<size_t>(nr * w));
        sc.dp.resize(static_cast<size_t>(nr * w));
        scores(sc.a.data(), nr, K + rr.ub * d_, w, d_, sc.s.data(), w);
        scores(sc.b.data(), nr, V + rr.ub * dv_, w, dv_, sc.dp.data(), w);
        sc.pt.assign(static_cast<size_t>(w * nr), T(0));   // P^T  (keys, rows)
        sc.dst.assign(static_cast<size_t>(w * nr), T(0));  // dS^T (keys, rows)
        for (int64_t r = 0; r < nr; ++r) {
          const int64_t i = c0 + r, idx = lse_index(p_, u.b, h, i);
          const T lse_i = static_cast<T>(lse[idx]), d_i = static_cast<T>(row_dot_[idx]);
          for (int64_t jj = rr.rb[r]; jj < rr.re[r]; ++jj) {
            const int64_t j = j0 + rr.ub + jj;
            T pij;
            const T ds = dscore(sc.s[r * w + jj], sc.dp[r * w + jj], lse_i, d_i, i, j, lq, lk, slope, &pij);
            sc.pt[jj * nr + r] = rnd(pij);
            sc.dst[jj * nr + r] = rnd(ds);
          }
        }
        // The rows of the chunk that see key jj: an interval, unless a row with LSE = -inf (and
        // keys it could see) sits in the middle; then the entries go one by one.
        sc.kb.assign(static_cast<size_t>(w), 0);
        sc.ke.assign(static_cast<size_t>(w), 0);
        bool intervals = true;
        for (int64_t jj = 0; jj < w; ++jj) {
          int64_t b = -1, e = -1;
          for (int64_t r = 0; r < nr; ++r) {
            if (rr.rb[r] <= jj && jj < rr.re[r]) {
              if (b < 0) b = r;
              if (e >= 0 && e != r) intervals = false;
              e = r + 1;
            }
          }
          sc.kb[jj] = b < 0 ? 0 : b;
          sc.ke[jj] = b < 0 ? 0 : e;
        }
        T* yv = acc_v.data() + rr.ub * dv_;
        T* yk = acc_k.data() + rr.ub * d_;
        if (intervals) {
          accumulate(sc.pt.data(), nr, sc.kb.data(), sc.ke.data(), w, sc.b.data(), dv_, yv);
          accumulate(sc.dst.data(), nr, sc.kb.data(), sc.ke.data(), w, sc.a.data(), d_, yk);
        } else {
          for (int64_t r = 0; r < nr; ++r) {
            for (int64_t jj = rr.rb[r]; jj < rr.re[r]; ++jj) {
              axpy(yv + jj * dv_, sc.pt[jj * nr + r], sc.b.data() + r * dv_, dv_);
              axpy(yk + jj * d_, sc.dst[jj * nr + r], sc.a.data() + r * d_, d_);
            }
          }
        }
      }
    }
    for (int64_t j = j0; j < j1; ++j) {
      double* gk = dk.at(u.b, p_.row0_k(u.b) + j, hk);
      double* gv = dv.at(u.b, p_.row0_k(u.b) + j, hk);
      for (int64_t c = 0; c < d_; ++c) gk[c] = rnd(scale_ * acc_k[(j - j0) * d_ + c]);
      for (int64_t c = 0; c < dv_; ++c) gv[c] = rnd(acc_v[(j - j0) * dv_ + c]);
    }
  }

  const Problem& p_;
  DType dtype_;
  int64_t d_ = 0, dv_ = 0, group_ = 1;
  T scale_ = 0, cap_ = 0;
  Window window_;
  detail::SeqOffsets offsets_;
  double work_ = 0;
  std::vector<T> kp_, vp_;       // packed K, V: (heads_kv, total_k, dim)
  std::vector<double> row_dot_;  // D of the backward, in the LSE layout
};

void check_dtype(DType dtype, const char* who) {
  if (dtype != DType::kFloat16 && dtype != DType::kBFloat16) {
    throw std::invalid_argument(std::string("flashcute::ref::") + who + ": dtype must be fp16 or bf16");
  }
}

}  // namespace

void forward(const Problem& p, ConstView q, ConstView k, ConstView v, MutView out, double* lse) {
  detail::validate(p, "forward");
  Attention<double>(p, DType::kFloat64).forward(q, k, v, out, lse);
}

void backward(const Problem& p, ConstView q, ConstView k, ConstView v, ConstView out, ConstView dout, const double* lse,
              MutView dq, MutView dk, MutView dv) {
  detail::validate(p, "backward");
  Attention<double>(p, DType::kFloat64).backward(q, k, v, out, dout, lse, dq, dk, dv);
}

void forward_lowp(DType dtype, const Problem& p, ConstView q, ConstView k, ConstView v, MutView out, double* lse) {
  check_dtype(dtype, "forward_lowp");
  detail::validate(p, "forward_lowp");
  Attention<float>(p, dtype).forward(q, k, v, out, lse);
}

void backward_lowp(DType dtype, const Problem& p, ConstView q, ConstView k, ConstView v, ConstView out, ConstView dout,
                   const double* lse, MutView dq, MutView dk, MutView dv) {
  check_dtype(dtype, "backward_lowp");
  detail::validate(p, "backward_lowp");
  Attention<float>(p, dtype).backward(q, k, v, out, dout, lse, dq, dk, dv);
}

}  // namespace flashcute::ref
