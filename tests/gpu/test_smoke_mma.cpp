// Toolchain smoke test: the CuTe TiledMMA product built from the manifest runs on the GPU and
// matches an fp64 CPU product of the same fp16/bf16 inputs.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "api/dispatch.h"
#include "gpu_env.h"
#include "reference/numeric.h"

namespace flashcute {
namespace {

struct Bits {
  std::vector<uint16_t> bits;
  std::vector<double> values;
};

Bits random_matrix(DType dtype, int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Bits m;
  m.bits.resize(rows * cols);
  m.values.resize(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float x = normal(rng);
    m.bits[i] = dtype == DType::kFloat16 ? numeric::float_to_half_bits(x) : numeric::float_to_bf16_bits(x);
    m.values[i] = dtype == DType::kFloat16 ? numeric::half_bits_to_float(m.bits[i]) : numeric::bf16_bits_to_float(m.bits[i]);
  }
  return m;
}

struct SmokeCase {
  Arch arch;
  DType dtype;
};
void PrintTo(const SmokeCase& c, std::ostream* os) { *os << to_string(c.arch) << "_" << to_string(c.dtype); }

class SmokeMma : public ::testing::TestWithParam<SmokeCase> {};

TEST_P(SmokeMma, MatchesCpuProduct) {
  FC_REQUIRE_GPU();
  const DType dtype = GetParam().dtype;
  const Arch arch = GetParam().arch;
  if (arch == Arch::kSm90) {
    cudaDeviceProp prop{};
    FC_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) GTEST_SKIP() << "the sm_90a build of the smoke product needs a compute capability 9.0 GPU";
  }
  const int64_t m = 128, n = 192, k = 96;
  const uint64_t seed = 1234;
  const Bits a = random_matrix(dtype, m, k, seed);
  const Bits b = random_matrix(dtype, n, k, seed + 1);

  void *da = nullptr, *db = nullptr;
  float* dc = nullptr;
  FC_CUDA_CHECK(cudaMalloc(&da, m * k * 2));
  FC_CUDA_CHECK(cudaMalloc(&db, n * k * 2));
  FC_CUDA_CHECK(cudaMalloc(&dc, m * n * sizeof(float)));
  FC_CUDA_CHECK(cudaMemcpy(da, a.bits.data(), m * k * 2, cudaMemcpyHostToDevice));
  FC_CUDA_CHECK(cudaMemcpy(db, b.bits.data(), n * k * 2, cudaMemcpyHostToDevice));
  // Pre-fill with NaN (0xFF bytes) so an element the kernel never writes fails the comparison.
  FC_CUDA_CHECK(cudaMemset(dc, 0xFF, m * n * sizeof(float)));

  smoke::SmokeMmaArgs args;
  args.a = da;
  args.b = db;
  args.c = dc;
  args.m = m;
  args.n = n;
  args.k = k;
  const Status s = smoke::run_smoke_mma(arch, dtype, args);
  if (s.code() == StatusCode::kNotSupported) GTEST_SKIP() << s.message();  // filtered out of this build
  ASSERT_TRUE(s.ok()) << s.message();
  FC_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> c(m * n);
  FC_CUDA_CHECK(cudaMemcpy(c.data(), dc, m * n * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);

  // Products of 16-bit values are exact in fp32; only the fp32 summation rounds: bound it by
  // k * eps_fp32 * sum|a||b| per element.
  double worst = 0.0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0.0, mag = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        exact += a.values[i * k + p] * b.values[j * k + p];
        mag += std::fabs(a.values[i * k + p] * b.values[j * k + p]);
      }
      const double got = c[i * n + j];
      ASSERT_TRUE(std::isfinite(got)) << "C(" << i << "," << j << ") not written or not finite; m=" << m
                                      << " n=" << n << " k=" << k << " seed=" << seed;
      const double bound = k * 6e-8 * mag + 1e-30;
      worst = std::max(worst, std::fabs(got - exact) / bound);
      ASSERT_LE(std::fabs(got - exact), bound)
          << "C(" << i << "," << j << ")=" << got << " expected " << exact << "; m=" << m << " n=" << n << " k=" << k
          << " seed=" << seed << " dtype=" << to_string(dtype);
    }
  }
  std::printf("smoke_mma %s %s: %lldx%lldx%lld, worst error %.3f of the bound\n", to_string(arch), to_string(dtype),
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), worst);
}

INSTANTIATE_TEST_SUITE_P(Targets, SmokeMma,
                         ::testing::Values(SmokeCase{Arch::kSm80, DType::kFloat16}, SmokeCase{Arch::kSm80, DType::kBFloat16},
                                           SmokeCase{Arch::kSm90, DType::kFloat16}, SmokeCase{Arch::kSm90, DType::kBFloat16}),
                         [](const auto& info) {
                           return std::string(to_string(info.param.arch)) + "_" + to_string(info.param.dtype);
                         });

}  // namespace
}  // namespace flashcute
