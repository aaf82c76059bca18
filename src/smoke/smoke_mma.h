#pragma once
// Toolchain smoke test (issue 2): one CuTe TiledMMA product C = A B^T, built through the manifest
// like every kernel. It exercises the pieces the SM80 attention path is made of (cp.async 128-bit
// gmem->smem into a swizzled layout, ldmatrix smem->registers, mma.sync m16n8k16 with fp32
// accumulation) and is checked against the CPU by tests/gpu/test_smoke_mma.cpp.

#include <cstdint>

#include "api/kernel_key.h"
#include "flashcute/args.h"
#include "flashcute/status.h"

namespace flashcute::smoke {

struct SmokeMmaArgs {
  const void* a = nullptr;  // (m, k) row-major, dtype of the key
  const void* b = nullptr;  // (n, k) row-major
  float* c = nullptr;       // (m, n) row-major, fp32
  int64_t m = 0, n = 0, k = 0;  // multiples of the CTA tile (64, 64, 32)
  Stream stream = nullptr;
};

inline constexpr int64_t kSmokeTileM = 64;
inline constexpr int64_t kSmokeTileN = 64;
inline constexpr int64_t kSmokeTileK = 32;

template <KernelKey K>
struct SmokeMma {
  static Status run(const SmokeMmaArgs& args);
};

}  // namespace flashcute::smoke
