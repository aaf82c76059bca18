#pragma once
// Host-side fp16 / bf16 <-> fp32 bit conversions, round-to-nearest-even, as the hardware conversion
// instructions do them (cvt.rn.f16.f32 / cvt.rn.bf16.f32): subnormals are kept, values at or past
// the half-way point above the largest finite number become +-inf, NaN stays NaN (made quiet).
// Tests use these to build kernel inputs and to read kernel outputs. No CUDA, no dependencies.

#include <cstdint>
#include <cstring>

#include "flashcute/tensor.h"

namespace flashcute::numeric {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Rounds the integer m * 2^-shift to the nearest integer, ties to even (shift in [1, 31]).
inline uint32_t shift_right_rne(uint32_t m, uint32_t shift) {
  const uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  return q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
}

inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {  // NaN: quiet, keep the top payload bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  }
  if (ax >= 0x477ff000u) {  // >= 65520 = 65504 + half an ulp (a tie, odd mantissa) and inf: inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (ax < 0x38800000u) {  // below 2^-14, the smallest normal: a subnormal result (or zero)
    const uint32_t exp = ax >> 23;
    if (exp < 102) return sign;  // < 2^-25: less than half the smallest subnormal
    // value = m * 2^(exp - 150); in units of 2^-24 it is m * 2^(exp - 126).
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    // A result of 0x400 (rounded up into the smallest normal) is the right encoding as is.
    return static_cast<uint16_t>(sign | shift_right_rne(m, 126u - exp));
  }
  const uint32_t exp = (ax >> 23) - 127u + 15u;
  const uint32_t mant = ax & 0x7fffffu;
  // The mantissa carry propagates into the exponent; inputs that would reach inf are handled above.
  const uint32_t h = shift_right_rne((exp << 23) | mant, 13u);
  return static_cast<uint16_t>(sign | h);
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / NaN
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_bf16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);  // NaN
  // bf16 is the top half of fp32, so subnormals and the overflow to inf (a carry into the
  // exponent) both fall out of rounding the low 16 bits.
  const uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);
}

inline float bf16_bits_to_float(uint16_t b) {
  return bits_float(static_cast<uint32_t>(b) << 16);
}

// Round an fp32 value to fp16 / bf16 and back (single rounding, RNE).
inline float round_half(float f) {
  return half_bits_to_float(float_to_half_bits(f));
}
inline float round_bf16(float f) {
  return bf16_bits_to_float(float_to_bf16_bits(f));
}

// DType-dispatching helpers for fp16 / bf16 (any other dtype: the value is returned unchanged by
// round_float; to_bits/from_bits treat it as fp16).
inline uint16_t to_bits(DType dtype, float f) {
  return dtype == DType::kBFloat16 ? float_to_bf16_bits(f) : float_to_half_bits(f);
}
inline float from_bits(DType dtype, uint16_t b) {
  return dtype == DType::kBFloat16 ? bf16_bits_to_float(b) : half_bits_to_float(b);
}
inline float round_float(DType dtype, float f) {
  if (dtype == DType::kBFloat16) return round_bf16(f);
  if (dtype == DType::kFloat16) return round_half(f);
  return f;
}

}  // namespace flashcute::numeric
