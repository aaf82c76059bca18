#pragma once
// Internals of the CPU reference shared by its translation units (not part of the interface).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "reference/reference.h"

namespace flashcute::ref::detail {

// Throws std::invalid_argument naming the rule when p is not a well-formed problem.
void validate(const Problem& p, const char* who);

// Runs fn(0..n-1) on the reference's worker threads (inline when there is one thread or one item,
// or when `work` - a rough operation count of the whole call - is too small to pay for threads).
// Items are handed out dynamically; each must write disjoint outputs, so the result does not
// depend on the number of threads.
void parallel_for(int64_t n, double work, const std::function<void(int64_t)>& fn);

// Number of rows of sequence b of q / k summed over the sequences before it (the packed position
// of sequence b in a (total, ...) array that holds only the sequences, back to back).
struct SeqOffsets {
  std::vector<int64_t> q_start, k_start;  // batch + 1 entries each
  int64_t total_q() const { return q_start.back(); }
  int64_t total_k() const { return k_start.back(); }
};
SeqOffsets seq_offsets(const Problem& p);

// The two matrix-product shapes of attention, on contiguous row-major blocks of T (double for the
// golden result, float for the low-precision one). Sums are written as explicit independent
// partial sums (lanes), which the compiler vectorizes without reassociating floating-point adds;
// the order of every sum is fixed, so results do not depend on threads or blocking.

// Lanes: one 128-bit register of T (SSE2 is the baseline; 4x2 tiles of these fit its 16 registers).
template <class T>
inline constexpr int kLanes = static_cast<int>(16 / sizeof(T));

// S[r][j] = A_r . B_j for four rows of A and two rows of B (length n): out[k * 4 + r] for B_k.
template <class T>
inline void dot_4x2(const T* __restrict a0, const T* __restrict a1, const T* __restrict a2, const T* __restrict a3,
                    const T* __restrict b0, const T* __restrict b1, int64_t n, T* out) {
  constexpr int L = kLanes<T>;
  T c[8][L] = {};
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    for (int l = 0; l < L; ++l) {
      const T x0 = b0[k + l], x1 = b1[k + l];
      c[0][l] += a0[k + l] * x0;
      c[1][l] += a1[k + l] * x0;
      c[2][l] += a2[k + l] * x0;
      c[3][l] += a3[k + l] * x0;
      c[4][l] += a0[k + l] * x1;
      c[5][l] += a1[k + l] * x1;
      c[6][l] += a2[k + l] * x1;
      c[7][l] += a3[k + l] * x1;
    }
  }
  T t[8] = {};
  for (; k < n; ++k) {
    t[0] += a0[k] * b0[k];
    t[1] += a1[k] * b0[k];
    t[2] += a2[k] * b0[k];
    t[3] += a3[k] * b0[k];
    t[4] += a0[k] * b1[k];
    t[5] += a1[k] * b1[k];
    t[6] += a2[k] * b1[k];
    t[7] += a3[k] * b1[k];
  }
  for (int r = 0; r < 8; ++r) {
    for (int l = 0; l < L; ++l) t[r] += c[r][l];
    out[r] = t[r];
  }
}

// S[r * ws + j] = A_r . B_j for rows r < n of A (n, dim) and j < w of B (w, dim).
template <class T>
inline void scores(const T* A, int64_t n, const T* B, int64_t w, int64_t dim, T* S, int64_t ws) {
  T out[8];
  for (int64_t r0 = 0; r0 < n; r0 += 4) {
    const T* a[4];
    for (int64_t r = 0; r < 4; ++r) a[r] = A + std::min(r0 + r, n - 1) * dim;  // pad by repeating
    for (int64_t j = 0; j < w; j += 2) {
      const T* b1 = B + std::min(j + 1, w - 1) * dim;
      dot_4x2(a[0], a[1], a[2], a[3], B + j * dim, b1, dim, out);
      for (int64_t r = 0; r < 4 && r0 + r < n; ++r) {
        S[(r0 + r) * ws + j] = out[r];
        if (j + 1 < w) S[(r0 + r) * ws + j + 1] = out[4 + r];
      }
    }
  }
}

// y += alpha * x
template <class T>
inline void axpy(T* __restrict y, T alpha, const T* __restrict x, int64_t n) {
  for (int64_t c = 0; c < n; ++c) y[c] += alpha * x[c];
}

// Y_r += sum_{j in [lo, hi)} S[r * ws + j] * X_j for the four rows r < 4 of Y (4, dim), X (., dim):
// a 4-row by one-register tile of Y stays in registers while j runs.
template <class T>
inline void accumulate_tile4(const T* S, int64_t ws, const T* X, int64_t dim, int64_t lo, int64_t hi, T* Y) {
  constexpr int C = kLanes<T>;
  constexpr int64_t kKeys = 64;  // X rows per sweep, so the block of X stays in cache
  for (int64_t j0 = lo; j0 < hi; j0 += kKeys) {
    const int64_t j1 = std::min(j0 + kKeys, hi);
    int64_t c0 = 0;
    for (; c0 + C <= dim; c0 += C) {
      T acc[4][C];
      for (int r = 0; r < 4; ++r)
        for (int l = 0; l < C; ++l) acc[r][l] = Y[r * dim + c0 + l];
      for (int64_t j = j0; j < j1; ++j) {
        const T* __restrict x = X + j * dim + c0;
        const T p0 = S[j], p1 = S[ws + j], p2 = S[2 * ws + j], p3 = S[3 * ws + j];
        for (int l = 0; l < C; ++l) {
          acc[0][l] += p0 * x[l];
          acc[1][l] += p1 * x[l];
          acc[2][l] += p2 * x[l];
          acc[3][l] += p3 * x[l];
        }
      }
      for (int r = 0; r < 4; ++r)
        for (int l = 0; l < C; ++l) Y[r * dim + c0 + l] = acc[r][l];
    }
    for (; c0 < dim; ++c0) {
      for (int64_t j = j0; j < j1; ++j) {
        const T x = X[j * dim + c0];
        for (int r = 0; r < 4; ++r) Y[r * dim + c0] += S[r * ws + j] * x;
      }
    }
  }
}

// Y_r += sum_{j in [jb[r], je[r])} S[r * ws + j] * X_j for rows r < m (Y is (m, dim)).
// Entries outside a row's interval are never read, so a NaN/inf there (in S or in X) cannot leak
// into the row. Four rows at a time, the keys all four see go through the register tile.
template <class T>
inline void accumulate(const T* S, int64_t ws, const int64_t* jb, const int64_t* je, int64_t m, const T* X, int64_t dim,
                       T* Y) {
  for (int64_t r0 = 0; r0 < m; r0 += 4) {
    int64_t lo = 0, hi = 0;  // the keys all four rows see
    if (r0 + 4 <= m) {
      lo = std::max(std::max(jb[r0], jb[r0 + 1]), std::max(jb[r0 + 2], jb[r0 + 3]));
      hi = std::min(std::min(je[r0], je[r0 + 1]), std::min(je[r0 + 2], je[r0 + 3]));
    }
    if (lo < hi) accumulate_tile4(S + r0 * ws, ws, X, dim, lo, hi, Y + r0 * dim);
    for (int64_t r = r0; r < std::min(r0 + 4, m); ++r) {
      const T* s = S + r * ws;
      T* y = Y + r * dim;
      for (int64_t j = jb[r]; j < je[r]; ++j) {
        if (j == lo && lo < hi) j = hi;  // done by the tile
        if (j >= je[r]) break;
        axpy(y, s[j], X + j * dim, dim);
      }
    }
  }
}

}  // namespace flashcute::ref::detail
