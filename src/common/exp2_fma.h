#pragma once
// 2^x on the FMA units instead of the special-function unit, for softmax loops that saturate MUFU
// (16 results per clock per SM against 128 FMAs): the idea of FlashAttention-4, written here for
// Hopper's exp2 load. Host and device, so the CPU tests check the same arithmetic the kernels run.
//
// x is clamped to [-127, 127] (NaN stays NaN), split as x = j + f with j = round(x) (adding 1.5 * 2^23
// rounds into the low mantissa bits) and f in [-0.5, 0.5]; 2^f is a minimax polynomial with its
// constant term fixed at 1 (Horner, kDegree FMAs) and j is added to its exponent bits (the shifted
// float's low 9 bits hold j mod 2^9; everything above them shifts out). p(0) = 1 exactly is what
// makes the clamp safe: x = -127 (and -inf) gives p = 1.0 and bits 127 << 23 - 127 << 23 = +0, and
// for x in (-127, -126.5) p >= 1, so the exponent never wraps below 0. Above, x = 127 gives 2^127 and
// nothing larger gets through: unclamped, j >= 128 would wrap the exponent into the sign bit and give
// a tiny or negative p where MUFU.EX2 gives +inf, and the softmax's sum check (softmax.cuh,
// update_sum_check) would then take a score far above its row's reference for a small one and keep
// the stale reference; clamped, p = 2^127 fails that check and passes its unsafe bound (2^126), as
// +inf does. Relative error of the fp32
// evaluation: degree 3 1.0e-4 (for bf16 P, whose rounding is 2e-3), degree 4 2.9e-6 (fp16 P,
// 2.4e-4); results below 2^-126 are not exact (the row sums they join are >= 1). About 9
// instructions on the FMA and integer pipes in place of one MUFU.EX2.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/host_device.h"

namespace flashcute {

namespace detail {
FC_HOST_DEVICE int32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(x);
#else
  int32_t i;
  std::memcpy(&i, &x, sizeof i);
  return i;
#endif
}
FC_HOST_DEVICE float bits_float(int32_t i) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(i);
#else
  float x;
  std::memcpy(&x, &i, sizeof x);
  return x;
#endif
}
// x clamped to [lo, hi], NaN kept (fmaxf / fminf would return a bound).
FC_HOST_DEVICE float clamp_nan(float x, float lo, float hi) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(x), "f"(lo));
  asm("min.NaN.f32 %0, %0, %1;" : "+f"(y) : "f"(hi));
  return y;
#else
  return x != x ? x : (x < lo ? lo : (x > hi ? hi : x));
#endif
}
}  // namespace detail

template <int kDegree>
FC_HOST_DEVICE float exp2_fma(float x) {
  static_assert(kDegree == 3 || kDegree == 4, "exp2_fma: degree 3 (bf16 P) or 4 (fp16 P)");
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  const float xc = detail::clamp_nan(x, -127.0f, 127.0f);
  const float t = xc + kShift;
  const float f = xc - (t - kShift);
  float p;
  // Minimax fits of (2^f - 1) / f weighted to relative error on [-0.5, 0.5] (Lawson iterations).
  if constexpr (kDegree == 3) {
    p = fmaf(fmaf(fmaf(0.05500893295f, f, 0.2422109991f), f, 0.6932829022f), f, 1.0f);
  } else {
    p = fmaf(fmaf(fmaf(fmaf(0.009582854807f, f, 0.05590642989f), f, 0.2402409911f), f, 0.6931241751f), f, 1.0f);
  }
  const uint32_t j_bits = static_cast<uint32_t>(detail::float_bits(t)) << 23;
  return detail::bits_float(static_cast<int32_t>(static_cast<uint32_t>(detail::float_bits(p)) + j_bits));
}

}  // namespace flashcute
