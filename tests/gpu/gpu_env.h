#pragma once
// GPU tests call FC_REQUIRE_GPU() first: where no usable CUDA GPU exists the test is skipped with a
// message saying why (CTest shows it as "Not Run (Skipped)"), never silently passed.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

namespace flashcute::testing {

// Empty when a GPU is usable, else the reason it is not.
inline std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA GPU (") + cudaGetErrorName(err) + ")";
  }
  if (count == 0) return "no CUDA GPU on this machine";
  return {};
}

}  // namespace flashcute::testing

#define FC_REQUIRE_GPU()                                                           \
  do {                                                                             \
    const std::string fc_reason_ = ::flashcute::testing::gpu_unavailable_reason(); \
    if (!fc_reason_.empty()) GTEST_SKIP() << "GPU test skipped: " << fc_reason_;   \
  } while (0)

#define FC_CUDA_CHECK(expr)                                                        \
  do {                                                                             \
    const cudaError_t fc_err_ = (expr);                                            \
    ASSERT_EQ(fc_err_, cudaSuccess) << #expr << ": " << cudaGetErrorString(fc_err_); \
  } while (0)
