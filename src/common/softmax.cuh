#pragma once
// Online softmax over key blocks, in fp32, on (rows, cols) views of a thread's accumulator
// fragments. Row statistics are reduced across the `kQuad` lanes that share a row.
//
// Scores s arrive either raw (the exp2 multiplier folds in softmax_scale*log2(e)) or already
// transformed (softcap/ALiBi applied the scale; the multiplier is log2(e)). p = 2^((s - m) * mult):
// subtracting in the score domain before the multiply keeps p exact for huge logits (s == m gives
// exactly 1), where the fused s*mult - m*mult would round both products and can overflow.

#include <cute/tensor.hpp>

#include <cmath>

#include "common/math.cuh"

namespace flashcute {

template <int kRows, int kQuad>
struct OnlineSoftmax {
  float row_max[kRows];
  float row_sum[kRows];  // this thread's partial sum; reduced across the quad in finalize()

  __device__ __forceinline__ OnlineSoftmax() {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      row_max[r] = -INFINITY;
      row_sum[r] = 0.0f;
    }
  }

  // Folds one block of scores in: scores become p (unnormalized), acc_o rows are rescaled.
  template <class Scores, class AccO>
  __device__ __forceinline__ void update(Scores& scores, AccO& acc_o, float mult) {
    using namespace cute;
    static_assert(decltype(size<0>(scores))::value == kRows, "row count mismatch");
    // New row maxima first. When no row of the whole warp grew its max, every rescale factor is
    // exactly 1 and the pass over acc_o is skipped (warp-uniform branch): after the first key
    // blocks this is the common case, and it removes one multiply per accumulator per block.
    float m_new[kRows];
    bool grew = false;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float m = row_max[r];
      CUTE_UNROLL
      for (int c = 0; c < size<1>(scores); ++c) m = fmaxf(m, scores(r, c));
      m_new[r] = quad_allreduce_max<kQuad>(m);
      grew |= m_new[r] != row_max[r];
    }
    if (__any_sync(0xffffffffu, grew)) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        // A row that has seen only masked keys keeps m = -inf: use 0 as the reference so that
        // exp2(-inf - 0) = 0 instead of exp2(-inf + inf) = NaN.
        const float m_ref = m_new[r] == -INFINITY ? 0.0f : m_new[r];
        const float rescale = exp2_approx((row_max[r] - m_ref) * mult);
        row_sum[r] *= rescale;
        CUTE_UNROLL
        for (int c = 0; c < size<1>(acc_o); ++c) acc_o(r, c) *= rescale;
      }
    }
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      const float m = m_new[r];
      const float m_ref = m == -INFINITY ? 0.0f : m;
      row_max[r] = m;
      float sum = 0.0f;
      CUTE_UNROLL
      for (int c = 0; c < size<1>(scores); ++c) {
        const float p = exp2_approx((scores(r, c) - m_ref) * mult);
        scores(r, c) = p;
        sum += p;
      }
      row_sum[r] += sum;
    }
  }

  // Normalizes acc_o rows and returns each row's natural-log LSE in lse[r]. Rows that saw no key
  // (sum 0) give exactly 0 and -inf; a NaN sum propagates.
  template <class AccO>
  __device__ __forceinline__ void finalize(AccO& acc_o, float mult, float (&lse)[kRows]) {
    using namespace cute;
    constexpr float kLn2 = 0.6931471805599453f;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      const float sum = quad_allreduce_sum<kQuad>(row_sum[r]);
      const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
      lse[r] = sum == 0.0f ? -INFINITY : row_max[r] * mult * kLn2 + logf(sum);
      CUTE_UNROLL
      for (int c = 0; c < size<1>(acc_o); ++c) acc_o(r, c) *= inv;
    }
  }
};

}  // namespace flashcute
