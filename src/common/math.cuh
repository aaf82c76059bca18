#pragma once
// Small device math used by the softmax of every path.

#include <cuda_runtime.h>

#include "common/exp2_fma.h"

namespace flashcute {

// 2^x on the special-function unit (one MUFU.EX2); -inf -> +0, relative error ~2^-22.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// tanh(x) = 1 - 2 / (2^(2x log2 e) + 1): one MUFU.EX2 and one MUFU.RCP instead of tanhf's polynomial
// and branches (whose temporaries, unrolled over a score tile, spilled registers). Absolute error is
// a few 1e-7, far below the 16-bit rounding of the inputs; saturates to +-1 for large |x|.
__device__ __forceinline__ float tanh_fast(float x) {
  const float e = exp2_approx(x * 2.8853900817779268f);  // 2 * log2(e)
  return 1.0f - __fdividef(2.0f, e + 1.0f);
}

// Reductions over the `Width` lanes that share a row of an MMA accumulator (a quad on SM80).
template <int Width>
__device__ __forceinline__ float quad_allreduce_max(float x) {
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

template <int Width>
__device__ __forceinline__ float quad_allreduce_sum(float x) {
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

}  // namespace flashcute
