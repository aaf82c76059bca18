#pragma once
// The mask predicate of the contract (DESIGN.md), shared verbatim by the kernels and by the fp64 CPU
// reference so the two can never disagree on which key a query row sees.
//
// Causal masks and windows are aligned bottom-right: with off = seqlen_k - seqlen_q, query row i
// sees key j iff  i + off - left <= j <= i + off + right  (and 0 <= j < seqlen_k), where a negative
// left/right means "unbounded" and causal means right = 0.

#include <cstdint>

#include "common/host_device.h"

namespace flashcute {

struct Window {
  int64_t left = -1;   // < 0: unbounded to the left
  int64_t right = -1;  // < 0: unbounded to the right
};

// Folds `causal` into the window. Validation has already rejected causal with right > 0.
FC_HOST_DEVICE Window make_window(bool causal, int64_t left, int64_t right) {
  Window w;
  w.left = left < 0 ? -1 : left;
  w.right = causal ? 0 : (right < 0 ? -1 : right);
  return w;
}

FC_HOST_DEVICE bool window_is_full(Window w) { return w.left < 0 && w.right < 0; }

// Does query row i (0-based within its sequence) see key j?
FC_HOST_DEVICE bool key_visible(int64_t i, int64_t j, int64_t seqlen_q, int64_t seqlen_k, Window w) {
  if (j < 0 || j >= seqlen_k) return false;
  const int64_t diag = i + seqlen_k - seqlen_q;  // the key on row i's (bottom-right) diagonal
  if (w.left >= 0 && j < diag - w.left) return false;
  if (w.right >= 0 && j > diag + w.right) return false;
  return true;
}

namespace detail {
template <class I>
FC_HOST_DEVICE void visible_key_range(I i, I seqlen_q, I seqlen_k, Window w, I* begin, I* end) {
  const I diag = i + seqlen_k - seqlen_q;
  I b = 0;
  I e = seqlen_k;
  if (w.left >= 0 && diag - static_cast<I>(w.left) > b) b = diag - static_cast<I>(w.left);
  if (w.right >= 0 && diag + static_cast<I>(w.right) + 1 < e) e = diag + static_cast<I>(w.right) + 1;
  if (e < b) e = b;
  *begin = b;
  *end = e;
}
}  // namespace detail

// The keys visible from row i form one interval [*begin, *end) (empty when *begin >= *end).
// For a block of rows [i0, i1) the union of their intervals is [begin(i0), end(i1 - 1)), because
// both ends move right with i. Kernels use this to skip key blocks nobody in the block can see.
FC_HOST_DEVICE void visible_key_range(int64_t i, int64_t seqlen_q, int64_t seqlen_k, Window w, int64_t* begin,
                                      int64_t* end) {
  detail::visible_key_range<int64_t>(i, seqlen_q, seqlen_k, w, begin, end);
}

// The same in 32-bit arithmetic, for kernels (sequence lengths are < 2^31: cu_seqlens are int32 and
// validation bounds dense lengths). Windows wider than the sequence are clamped first, so the sums
// cannot overflow.
FC_HOST_DEVICE void visible_key_range_i32(int i, int seqlen_q, int seqlen_k, Window w, int* begin, int* end) {
  const int64_t limit = int64_t(seqlen_q) + seqlen_k;
  w.left = w.left > limit ? limit : w.left;
  w.right = w.right > limit ? limit : w.right;
  detail::visible_key_range<int>(i, seqlen_q, seqlen_k, w, begin, end);
}

// Does no row of [row0, row0 + rows) see any key >= key0? Both ends of a row's visible keys move
// right with the row, so the last row's end bounds them all (a row past seqlen_q follows the same
// formula, so the answer holds for the rows a kernel computes but never stores). The SM90 forward's
// half_first asks this of a warpgroup's rows and the second half of its first key block.
FC_HOST_DEVICE bool rows_see_no_key_from(int row0, int rows, int seqlen_q, int seqlen_k, Window w, int key0) {
  int begin, end;
  visible_key_range_i32(row0 + rows - 1, seqlen_q, seqlen_k, w, &begin, &end);
  return end <= key0;
}

// ALiBi: the bias added to the scaled (and soft-capped) score of (i, j).
// T is float in the kernels and double in the reference.
template <class T>
FC_HOST_DEVICE T alibi_bias(T slope, int64_t i, int64_t j, int64_t seqlen_q, int64_t seqlen_k) {
  const int64_t d = i + seqlen_k - seqlen_q - j;
  return -slope * static_cast<T>(d < 0 ? -d : d);
}

}  // namespace flashcute
