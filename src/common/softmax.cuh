#pragma once
// Online softmax over key blocks, in fp32, on (rows, cols) views of a thread's accumulator
// fragments. Row statistics are reduced across the `kQuad` lanes that share a row.
//
// Scores s arrive either raw (the exp2 multiplier folds in softmax_scale*log2(e)) or already
// transformed (softcap/ALiBi applied the scale; the multiplier is log2(e)). update() explains how p
// is evaluated (one FFMA per score, or in the score domain for huge logits).

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
  //
  // Two ways to evaluate p, chosen per block for the whole warp:
  // - fused (the common case): p = 2^fma(s, mult, -R) with R = fl(m * mult), one FFMA per score.
  //   Every p of a row and its running sum are relative to 2^R, and finalize's LSE uses the same R,
  //   so R's rounding cancels; rescales are 2^(fl(m_old * mult) - R_new). Used while every |R| < kFusedLimit,
  //   where R's rounding (<= 2^-14) cannot overflow p or matter between blocks.
  // - score domain: p = 2^((s - m) * mult), exact at s == m however large the logits (q = k = v =
  //   133120 gives |R| ~ 1e11, whose rounding alone would be 2^8192).
  static constexpr float kFusedLimit = 1024.0f;

  template <class Scores, class AccO>
  __device__ __forceinline__ void update(Scores& scores, AccO& acc_o, float mult) {
    using namespace cute;
    static_assert(decltype(size<0>(scores))::value == kRows, "row count mismatch");
    // New row maxima first. When no row of the whole warp grew its max, every rescale factor is
    // exactly 1 and the pass over acc_o is skipped (warp-uniform branch): after the first key
    // blocks this is the common case, and it removes one multiply per accumulator per block.
    // A row that has seen only masked keys keeps m = -inf and uses 0 as its reference, so that
    // p = 2^(-inf - 0) = 0 instead of 2^(-inf + inf) = NaN.
    float m_new[kRows];
    bool grew = false, fused = true;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float m = row_max[r];
      CUTE_UNROLL
      for (int c = 0; c < size<1>(scores); ++c) m = fmaxf(m, scores(r, c));
      m_new[r] = quad_allreduce_max<kQuad>(m);
      grew |= m_new[r] != row_max[r];
      fused &= fabsf(reference(m_new[r]) * mult) < kFusedLimit;
    }
    fused = __all_sync(0xffffffffu, fused);
    if (__any_sync(0xffffffffu, grew)) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        // An old max of -inf (nothing seen yet) must give 0, not 2^(0 - R_new), which overflows
        // to inf for a very negative R_new and turns the zero accumulators into NaN.
        const float rescale = fused ? exp2_approx(row_max[r] * mult - reference(m_new[r]) * mult)
                                    : exp2_approx((row_max[r] - reference(m_new[r])) * mult);
        row_sum[r] *= rescale;
        CUTE_UNROLL
        for (int c = 0; c < size<1>(acc_o); ++c) acc_o(r, c) *= rescale;
      }
    }
    if (fused) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        row_max[r] = m_new[r];
        const float neg_ref = -(reference(m_new[r]) * mult);
        float sum = 0.0f;
        CUTE_UNROLL
        for (int c = 0; c < size<1>(scores); ++c) {
          const float p = exp2_approx(fmaf(scores(r, c), mult, neg_ref));
          scores(r, c) = p;
          sum += p;
        }
        row_sum[r] += sum;
      }
    } else {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        row_max[r] = m_new[r];
        const float m_ref = reference(m_new[r]);
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
  }

  // The score each row's p is taken relative to: its max, or 0 while it has seen no visible key.
  static __device__ __forceinline__ float reference(float m) { return m == -INFINITY ? 0.0f : m; }

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
