#pragma once
// Online softmax over key blocks, in fp32, on (rows, cols) views of a thread's accumulator
// fragments. Row statistics are reduced across the `kQuad` lanes that share a row. The exp2
// multiplier `mult` is positive (validation requires softmax_scale > 0).
//
// Scores s arrive either raw (the exp2 multiplier folds in softmax_scale*log2(e)) or already
// transformed (softcap/ALiBi applied the scale; the multiplier is log2(e)). p = 2^((s - m) * mult):
// subtracting in the score domain before the multiply keeps p exact for huge logits (s == m gives
// exactly 1), where the fused s*mult - m*mult would round both products and can overflow.

#include <cute/tensor.hpp>

#include <cmath>

#include "common/math.cuh"

namespace flashcute {

// How a softmax evaluates its exponentials and when it moves a row's reference max. The defaults are
// the exact textbook form; each path's tile configuration sets the fields its measurements chose.
struct SoftmaxPolicy {
  // Every poly_every-th score of a thread's fragment row takes 2^x from exp2_fma<poly_degree> (FMA
  // units) instead of MUFU.EX2; 0: none. Pays where the exp2s, not the tensor cores, set the pace.
  int poly_every = 0;
  int poly_degree = 3;
  // log2 units: a row keeps its reference max until the block max exceeds it by more than this, so
  // p <= 2^rescale_threshold and O, the row sums and the LSE are rescaled only when a max grows by a
  // factor past it (FlashAttention-4's lazy rescale). Exact up to rounding: O is divided by sums of
  // the same p and the LSE adds the reference back. 0: move on any growth.
  int rescale_threshold = 0;
  // p = 2^fma(s, mult, -fl(m * mult)) (one FFMA per score) where every row's |m * mult| < 2^20, the
  // score-domain form otherwise (OnlineSoftmax::update says why both are exact).
  bool fused_exp2 = false;
  // The lazy threshold's test on each thread's own row maxima first, one warp vote, and the quad's
  // max shuffles only where a reference may move (references_stay): the same results, bit for bit,
  // without the shuffles' latency on the common path. Measured on the SM90 forward's overlapped
  // kernels (session 26: +1-6%); the others keep the shuffles on every block (with the test, SM80's
  // d 128 kernel spilled 16-24 bytes and SM90's d 64 plain-loop masked kernel 88).
  bool local_max_check = false;
};

template <int kRows, int kQuad, SoftmaxPolicy kPolicy = SoftmaxPolicy{}>
struct OnlineSoftmax {
  float row_max[kRows];
  float row_sum[kRows];  // this thread's partial sum; reduced across the quad in finalize()
  bool fused_ = kPolicy.fused_exp2;  // the last block's p used the fused form (warp-uniform)

  __device__ __forceinline__ OnlineSoftmax() {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      row_max[r] = -INFINITY;
      row_sum[r] = 0.0f;
    }
  }

  // Whether the lazy threshold keeps row r's finite reference against the block max m (the reference
  // folded in; a NaN max moves it).
  __device__ __forceinline__ bool within_threshold(float m, int r, float mult) const {
    if constexpr (kPolicy.rescale_threshold > 0) {
      return row_max[r] != -INFINITY && (m - row_max[r]) * mult <= static_cast<float>(kPolicy.rescale_threshold);
    }
    return false;
  }

  // The common case without the quad's shuffles: m holds each row's max over this thread's own
  // scores (the reference folded in). When every thread of the warp keeps every reference on its own
  // maxima, the quad's maxima keep them too (the quad max is one of its lanes' maxima), so
  // new_references() would return false and leave row_max as it is: the same result, bit for bit.
  // Warp-uniform.
  __device__ __forceinline__ bool references_stay(const float (&m)[kRows], float mult) const {
    bool keep = true;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) keep &= within_threshold(m[r], r, mult) || m[r] == row_max[r];
    return __all_sync(0xffffffffu, keep);
  }

  // m: this thread's row maxima (the reference folded in); becomes each row's new reference, the
  // quad's max, or the old reference where the lazy threshold keeps it. Returns whether a reference
  // of this thread's rows moved.
  __device__ __forceinline__ bool new_references(float (&m)[kRows], float mult) const {
    bool grew = false;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      m[r] = quad_allreduce_max<kQuad>(m[r]);
      if (within_threshold(m[r], r, mult)) m[r] = row_max[r];
      grew |= m[r] != row_max[r];
    }
    return grew;
  }

  // Folds one block of scores in: scores become p (unnormalized), acc_o rows are rescaled.
  // kFirst: the tile's first block, acc_o and the row sums still 0, so the rescale pass (factor 0,
  // or 1 for rows that saw no key) is skipped: the same values without 64 multiplies per thread.
  template <bool kFirst = false, class Scores, class AccO>
  __device__ __forceinline__ void update(Scores& scores, AccO& acc_o, float mult) {
    using namespace cute;
    static_assert(decltype(size<0>(scores))::value == kRows, "row count mismatch");
    // New row maxima first. When no row of the whole warp grew its max, every rescale factor is
    // exactly 1 and the pass over acc_o is skipped (warp-uniform branch): after the first key
    // blocks this is the common case, and it removes one multiply per accumulator per block.
    float m_new[kRows];
    bool grew = false;
    if constexpr (kPolicy.local_max_check) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        m_new[r] = row_max[r];
        CUTE_UNROLL
        for (int c = 0; c < size<1>(scores); ++c) m_new[r] = fmaxf(m_new[r], scores(r, c));
      }
      // m_new holds this thread's own maxima; the quad's shuffles only where a reference may move.
      if (!kFirst && references_stay(m_new, mult)) {
        CUTE_UNROLL
        for (int r = 0; r < kRows; ++r) m_new[r] = row_max[r];
      } else {
        grew = new_references(m_new, mult);
      }
    } else {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        float m = row_max[r];
        CUTE_UNROLL
        for (int c = 0; c < size<1>(scores); ++c) m = fmaxf(m, scores(r, c));
        m_new[r] = quad_allreduce_max<kQuad>(m);
        if constexpr (kPolicy.rescale_threshold > 0) {
          // Keep a finite reference that the block did not pass by more than the threshold (a NaN
          // max moves it). within_threshold()'s test, written out: through the helper the same test
          // changed register allocation (session 26: SM80's d 128 kernel spilled 24 bytes, SM90's
          // d 64 masked kernel 88).
          if (row_max[r] != -INFINITY && (m_new[r] - row_max[r]) * mult <= static_cast<float>(kPolicy.rescale_threshold))
            m_new[r] = row_max[r];
        }
        grew |= m_new[r] != row_max[r];
      }
    }
    // A row that has seen only masked keys keeps m = -inf: use 0 as the reference so that
    // exp2(-inf - 0) = 0 instead of exp2(-inf + inf) = NaN.
    float m_ref[kRows];
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) m_ref[r] = m_new[r] == -INFINITY ? 0.0f : m_new[r];
    // Fused form (kPolicy.fused_exp2): p = 2^fma(s, mult, -R) with R = fl(m * mult), one FFMA per
    // score instead of a subtraction and a multiply. It is the same softmax with the reference R /
    // mult in place of m: the FMA rounds once, the rescale factors below are formed from the same R,
    // and finalize() adds R back into the LSE. It needs |R| small enough that s * mult - R keeps its
    // fraction (|R| < 2^20: |m * mult - R| <= 2^-4); a tile whose maxima pass that (the huge-logit
    // cases) switches to the score-domain form, where s - m is exact, for the rest of the tile. The
    // choice is warp-uniform (one vote per block).
    bool fused = false;
    if constexpr (kPolicy.fused_exp2) {
      bool small = true;
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) small &= fabsf(m_ref[r] * mult) < 1048576.0f;
      fused = fused_ && __all_sync(0xffffffffu, small);
    }
    if (!kFirst && __any_sync(0xffffffffu, grew)) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        // log2 of the factor from the old reference to the new one, in the forms the old and the new
        // p were computed in (fused -> fused, fused -> score domain, score domain -> score domain).
        const float r_old = __fmul_rn(row_max[r], mult);
        const float e = !fused_ ? (row_max[r] - m_ref[r]) * mult
                        : fused ? r_old - __fmul_rn(m_ref[r], mult)
                                : fmaf(-m_ref[r], mult, r_old);
        // The first visible block: e = -inf, factor 0 (O and the sum are 0).
        const float rescale = exp2_approx(e);
        row_sum[r] *= rescale;
        CUTE_UNROLL
        for (int c = 0; c < size<1>(acc_o); ++c) acc_o(r, c) *= rescale;
      }
    }
    fused_ = fused;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) row_max[r] = m_new[r];
    if (fused) {
      exp_block<true>(scores, m_ref, mult);
    } else {
      exp_block<false>(scores, m_ref, mult);
    }
  }

  // scores <- p = 2^((s - m_ref) * mult) (or the fused 2^fma(s, mult, -m_ref * mult)), each row's sum
  // of p into sum[] and, with kTrackMax, each row's max of the raw scores into bmax[] (read before p
  // overwrites them).
  template <bool kFused, bool kTrackMax, class Scores>
  __device__ __forceinline__ void exp_rows(Scores& scores, const float (&m_ref)[kRows], float mult,
                                           float (&sum)[kRows], float (&bmax)[kRows]) {
    using namespace cute;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      const float neg_r = -__fmul_rn(m_ref[r], mult);
      float row = 0.0f, bm = -INFINITY;
      CUTE_UNROLL
      for (int c = 0; c < size<1>(scores); ++c) {
        const float s = scores(r, c);
        if constexpr (kTrackMax) bm = fmaxf(bm, s);
        const float x = kFused ? fmaf(s, mult, neg_r) : (s - m_ref[r]) * mult;
        float p;
        if constexpr (kPolicy.poly_every > 0) {  // (a constexpr branch: no "% 0" for the default)
          p = c % kPolicy.poly_every == kPolicy.poly_every - 1 ? exp2_fma<kPolicy.poly_degree>(x) : exp2_approx(x);
        } else {
          p = exp2_approx(x);
        }
        scores(r, c) = p;
        row += p;
      }
      sum[r] = row;
      bmax[r] = bm;
    }
  }

  // exp_rows, the sums added to the row sums.
  template <bool kFused, class Scores>
  __device__ __forceinline__ void exp_block(Scores& scores, const float (&m_ref)[kRows], float mult) {
    float sum[kRows], unused[kRows];
    exp_rows<kFused, false>(scores, m_ref, mult, sum, unused);
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) row_sum[r] += sum[r];
  }

  // The references of a warp in which one moved: m_new[r] the new reference of row r (row_max[r]
  // where it stays), m_old the one p was computed with (0 for a row without keys so far), sum the
  // block's row sums of p. p is corrected in place by 2^(fl(m_old mult) - fl(m_new mult)) (the factor
  // update() applies to O) and O and the row sums take update()'s rescale; exact up to the factor's
  // rounding unless the correction could meet an exponent outside the float range (up by more than
  // 126 in log2 units, or a row's first keys below -60), the exp form changes (|m mult| past 2^20) or
  // the caller found the block unsafe: then `recompute(scores)` rewrites S and update() runs on it.
  template <class Scores, class AccO, class Recompute>
  __device__ __forceinline__ void move_references(Scores& scores, AccO& acc_o, float mult, Recompute&& recompute,
                                                  const float (&m_old)[kRows], const float (&m_new)[kRows],
                                                  const float (&sum)[kRows], bool fused_old, bool unsafe) {
    using namespace cute;
    float m_ref[kRows];
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) m_ref[r] = m_new[r] == -INFINITY ? 0.0f : m_new[r];
    bool fused = false;
    if constexpr (kPolicy.fused_exp2) {
      bool small = true;
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) small &= fabsf(m_ref[r] * mult) < 1048576.0f;
      fused = fused_old && __all_sync(0xffffffffu, small);
    }
    bool safe = fused == fused_old && !unsafe;
    float g[kRows];  // p's correction: 2^(x_new - x_old), x the exponent each form gives p
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      const float d = fused_old ? __fmul_rn(m_ref[r], mult) - __fmul_rn(m_old[r], mult) : (m_ref[r] - m_old[r]) * mult;
      safe &= d >= -60.0f && d <= 126.0f;  // (false for NaN)
      g[r] = exp2_approx(-d);
    }
    if (!__all_sync(0xffffffffu, safe)) {
      recompute(scores);
      update(scores, acc_o, mult);
      return;
    }
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      // update()'s factor for O and the row sum (0 for a row whose first keys these are).
      const float r_old = __fmul_rn(row_max[r], mult);
      const float e = !fused_old ? (row_max[r] - m_ref[r]) * mult : r_old - __fmul_rn(m_ref[r], mult);
      const float f = exp2_approx(e);
      row_sum[r] = row_sum[r] * f + sum[r] * g[r];
      CUTE_UNROLL
      for (int c = 0; c < size<1>(acc_o); ++c) acc_o(r, c) *= f;
      CUTE_UNROLL
      for (int c = 0; c < size<1>(scores); ++c) scores(r, c) *= g[r];
      row_max[r] = m_new[r];
    }
    fused_ = fused;
  }

  // update() reordered so that the block max is off the path to the exps: p with the rows' current
  // references first (the max of the raw scores rides along in the same pass), then the check that
  // no reference moved (update()'s lazy threshold), which is the common case after a tile's first
  // block: the result is then update()'s, bit for bit. Where a row's reference moved, p is corrected
  // in place by the factor between the two references, 2^(fl(m_old mult) - fl(m_new mult)) (the
  // factor update() applies to O), with update()'s rescale of O and the row sums; that is exact up to
  // the rounding of the factor unless the correction could have met an exponent outside the float
  // range (the reference moved up by more than 126 in log2 units, or a row's first keys set it below
  // -60) or the exp form changes (|m mult| past 2^20): then `recompute(scores)` rewrites S from K
  // (masked and transformed as it arrived) and update() runs on it. Warp-uniform branches only.
  // Returns false where no reference moved in the warp (acc_o and the row sums' old part untouched:
  // every factor it would have applied is 1), true otherwise (warp-uniform).
  template <class Scores, class AccO, class Recompute>
  __device__ __forceinline__ bool update_speculative(Scores& scores, AccO& acc_o, float mult, Recompute&& recompute) {
    using namespace cute;
    static_assert(decltype(size<0>(scores))::value == kRows, "row count mismatch");
    float m_old[kRows], sum[kRows], bmax[kRows];
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) m_old[r] = row_max[r] == -INFINITY ? 0.0f : row_max[r];
    // While the references stay, update() keeps the last block's exp form (its "small" test reads the
    // m_ref that set fused_).
    const bool fused_old = fused_;
    if (fused_old) {
      exp_rows<true, true>(scores, m_old, mult, sum, bmax);
    } else {
      exp_rows<false, true>(scores, m_old, mult, sum, bmax);
    }
    float m_new[kRows];
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) m_new[r] = fmaxf(row_max[r], bmax[r]);
    if ((kPolicy.local_max_check && references_stay(m_new, mult)) ||
        !__any_sync(0xffffffffu, new_references(m_new, mult))) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) row_sum[r] += sum[r];
      return false;
    }
    // A reference moved in this warp: update()'s new references, exp form and factors.
    move_references(scores, acc_o, mult, recompute, m_old, m_new, sum, fused_old, false);
    return true;
  }

  // The SM90 kernels' interior key blocks (FwdTraits::kSumCheck; no score masked): the exps with
  // the rows' current references and no block max. Fast path: every thread's row sums of p are at most
  // 2^(threshold - 1), so every p is and every score lies within the threshold of its reference: the
  // references stay (returns false, as update_speculative() does where none moved). Otherwise the
  // max of p, not of the scores: a row whose max p passes 1 (or whose first keys these are) moves
  // its reference to m + log2(max p) / mult, its block max up to
  // rounding, and p, O and the row sums are corrected as in update_speculative(). Exact up to rounding,
  // like update_speculative(), but the references it picks are not bit for bit update()'s (they come
  // from p's maximum, not the scores'). Where the correction could leave the float range (a max p below
  // 2^-60 for a row's first keys, or above 2^126), the warp recomputes S and runs update().
  // (d 64's plain loop also runs it on masked blocks after a tile's first: their -inf scores give
  // p = 0, so the test holds for them, and a row with no visible key so far takes the recompute.)
  // kRemat: the slow path forms the old references from row_max again (unchanged until
  // move_references()) instead of keeping them live through the exps (d 64's plain loop, whose exp
  // pass spilled them).
  template <bool kRemat = false, class Scores, class AccO, class Recompute>
  __device__ __forceinline__ bool update_sum_check(Scores& scores, AccO& acc_o, float mult, Recompute&& recompute) {
    using namespace cute;
    static_assert(kPolicy.rescale_threshold > 1, "the sum test needs a lazy threshold");
    float m_old[kRows], sum[kRows], unused[kRows];
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) m_old[r] = row_max[r] == -INFINITY ? 0.0f : row_max[r];
    const bool fused_old = fused_;
    if (fused_old) {
      exp_rows<true, false>(scores, m_old, mult, sum, unused);
    } else {
      exp_rows<false, false>(scores, m_old, mult, sum, unused);
    }
    constexpr float kSumLimit = static_cast<float>(1 << (kPolicy.rescale_threshold - 1));
    bool keep = true;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) keep &= row_max[r] != -INFINITY && sum[r] <= kSumLimit;
    if (__all_sync(0xffffffffu, keep)) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) row_sum[r] += sum[r];
      return false;
    }
    // The slow path: each row's max p over the quad, and the new references it implies.
    if constexpr (kRemat) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        float m = row_max[r];
        asm volatile("mov.b32 %0, %0;" : "+f"(m));  // formed here, not kept from above
        m_old[r] = m == -INFINITY ? 0.0f : m;
      }
    }
    float m_new[kRows];
    bool grew = false, unsafe = false;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float pm = 0.0f;
      CUTE_UNROLL
      for (int c = 0; c < size<1>(scores); ++c) pm = fmaxf(pm, scores(r, c));
      pm = quad_allreduce_max<kQuad>(pm);
      const bool first = row_max[r] == -INFINITY;
      // Any growth moves it (not the lazy threshold): a reference the threshold keeps below the block
      // max can hold a warp's row sums above the limit, sending it down this path on every later
      // block (first form, causal rows: session 26). (False for a NaN max: the NaN reaches O.)
      const bool move = first || pm > 1.0f;
      // update_speculative()'s range: a move by less than -60 (a row's first keys far below reference
      // 0: log2 of a tiny or flushed max p is not usable) or by more than 126 (p overflowed) is unsafe.
      unsafe |= move && !(pm >= 0x1p-60f && pm <= 0x1p126f);
      m_new[r] = move ? m_old[r] + __fdividef(__log2f(pm), mult) : row_max[r];
      grew |= move;
    }
    if (!__any_sync(0xffffffffu, grew)) {
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) row_sum[r] += sum[r];
      return false;
    }
    move_references(scores, acc_o, mult, recompute, m_old, m_new, sum, fused_old, unsafe);
    return true;
  }

  // Row r's factor for O (1 / sum) and its natural-log LSE, from the softmax's state alone (final
  // after the last block's update). A row that saw no key (sum 0) gives exactly 0 and -inf; a NaN
  // sum propagates.
  __device__ __forceinline__ void row_factor(int r, float mult, float& inv, float& lse) const {
    constexpr float kLn2 = 0.6931471805599453f;
    const float sum = quad_allreduce_sum<kQuad>(row_sum[r]);
    // The hardware's approximate reciprocal and log2 (MUFU.RCP, MUFU.LG2; a sum that is not 0 is
    // >= ~1, the key at its row's reference contributing ~1, so never subnormal): a few ulp in O's
    // fp32 and ~2e-7 in the LSE, instead of the library forms' polynomial and slow-path branches in
    // every tile's epilogue.
    inv = sum == 0.0f ? 0.0f : __fdividef(1.0f, sum);
    // fl(m * mult) is the fused form's reference R exactly; the score-domain form's m * mult
    // rounds the same way.
    lse = sum == 0.0f ? -INFINITY : (__fmul_rn(row_max[r], mult) + __log2f(sum)) * kLn2;
  }

  // Every row's row_factor(): finalize() without O, which the SM90 kernel runs while the tile's last
  // P V is on the tensor cores, then normalize().
  __device__ __forceinline__ void row_factors(float mult, float (&inv)[kRows], float (&lse)[kRows]) const {
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) row_factor(r, mult, inv[r], lse[r]);
  }

  // O's rows times row_factors()'s inv.
  template <class AccO>
  __device__ __forceinline__ static void normalize(AccO& acc_o, const float (&inv)[kRows]) {
    using namespace cute;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      CUTE_UNROLL
      for (int c = 0; c < size<1>(acc_o); ++c) acc_o(r, c) *= inv[r];
    }
  }

  // Normalizes acc_o rows and returns each row's natural-log LSE in lse[r].
  template <class AccO>
  __device__ __forceinline__ void finalize(AccO& acc_o, float mult, float (&lse)[kRows]) {
    using namespace cute;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      float inv;
      row_factor(r, mult, inv, lse[r]);
      CUTE_UNROLL
      for (int c = 0; c < size<1>(acc_o); ++c) acc_o(r, c) *= inv;
    }
  }
};

}  // namespace flashcute
