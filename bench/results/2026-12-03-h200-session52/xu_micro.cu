// Session 52: which pipe runs the 32 -> 16-bit packed conversions (cvt.rn.bf16x2.f32, F2FP), and
// do they share MUFU.EX2's throughput? One CTA per SM, 32 warps, 8 independent chains per thread;
// clock64 around the loop. Built with nvcc -arch=sm_90a; run with and without ncu's pipe counters.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include <cuda_bf16.h>

constexpr int kIters = 4096;

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ uint32_t cvt_bf16x2(float lo, float hi) {
  uint32_t d;
  asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ uint32_t cvt_f16x2(float lo, float hi) {
  uint32_t d;
  asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b) {
  uint32_t d;
  asm volatile("prmt.b32 %0, %1, %2, 0x7632;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// mode 0: ex2; 1: cvt bf16x2; 2: cvt f16x2; 3: 2 ex2 + 1 cvt bf16x2 (the softmax's ratio);
// 4: prmt; 5: 2 ex2 + 2 iadd + 1 prmt (a packing on the ALU)
template <int kMode>
__global__ void bench(float seed, long long* cycles, float* sink) {
  float x[8];
  uint32_t u[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    x[i] = seed * (threadIdx.x + i);
    u[i] = __float_as_uint(x[i]);
  }
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if constexpr (kMode == 0) {
        x[i] = ex2(x[i]);
      } else if constexpr (kMode == 1) {
        u[i] = cvt_bf16x2(__uint_as_float(u[i]), __uint_as_float(u[(i + 1) & 7]));
      } else if constexpr (kMode == 2) {
        u[i] = cvt_f16x2(__uint_as_float(u[i]), __uint_as_float(u[(i + 1) & 7]));
      } else if constexpr (kMode == 3) {
        const float a = ex2(__uint_as_float(u[i]));
        const float b = ex2(__uint_as_float(u[i] ^ 0x1u));
        u[i] = cvt_bf16x2(a, b);
      } else if constexpr (kMode == 4) {
        u[i] = prmt(u[i], u[(i + 1) & 7]);
      } else {
        const float a = ex2(__uint_as_float(u[i]));
        const float b = ex2(__uint_as_float(u[i] ^ 0x1u));
        u[i] = prmt(__float_as_uint(a) + 0x8000u, __float_as_uint(b) + 0x8000u);
      }
    }
  }
  long long t1 = clock64();
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) s += x[i] + __uint_as_float(u[i]);
  if (s == 1.2345f) sink[threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <int kMode>
void run(const char* name, int sms, long long* d_cyc, float* d_sink, double per_iter_ops) {
  bench<kMode><<<sms, 1024>>>(1e-3f, d_cyc, d_sink);
  bench<kMode><<<sms, 1024>>>(1e-3f, d_cyc, d_sink);
  cudaDeviceSynchronize();
  long long h[1024];
  cudaMemcpy(h, d_cyc, sms * sizeof(long long), cudaMemcpyDeviceToHost);
  double mean = 0;
  for (int i = 0; i < sms; ++i) mean += h[i];
  mean /= sms;
  // per SM per clock: threads x iterations x ops per iteration / cycles
  printf("%-28s %8.0f cycles  %6.2f instr/clk/SM\n", name, mean, 1024.0 * kIters * per_iter_ops / mean);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  long long* d_cyc;
  float* d_sink;
  cudaMalloc(&d_cyc, 1024 * sizeof(long long));
  cudaMalloc(&d_sink, 1024 * sizeof(float));
  run<0>("ex2", sms, d_cyc, d_sink, 8);
  run<1>("cvt.rn.bf16x2.f32", sms, d_cyc, d_sink, 8);
  run<2>("cvt.rn.f16x2.f32", sms, d_cyc, d_sink, 8);
  run<3>("2 ex2 + 1 cvt bf16x2 (ex2s)", sms, d_cyc, d_sink, 16);
  run<4>("prmt", sms, d_cyc, d_sink, 8);
  run<5>("2 ex2 + 2 iadd + prmt (ex2s)", sms, d_cyc, d_sink, 16);
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
