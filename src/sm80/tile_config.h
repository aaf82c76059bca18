#pragma once
// Tile configurations of the SM80 forward, one row per head-dim bucket. The same config struct is
// the compile-time template argument (via the KernelKey's bucket) and what the host reads for
// shared-memory bytes and launch shape. Each row says why.

#include <cstdint>

#include "api/kernel_key.h"

namespace flashcute::sm80 {

struct FwdTileConfig {
  int head_dim;  // bucket
  int block_m;   // query rows per CTA
  int block_n;   // key rows per main-loop step
  int warps;     // each warp owns block_m / warps query rows

  constexpr int threads() const { return warps * 32; }
  // Q tile + one K tile + one V tile, 16-bit elements; O is staged in Q's space at the end.
  constexpr int64_t smem_bytes() const {
    return static_cast<int64_t>(block_m + 2 * block_n) * head_dim * 2;
  }
};

// Every row keeps 16 query rows per warp (block_m = 16 * warps). The FlashAttention-2 shape for
// d 128 (block_m 128, 4 warps, 32 rows per warp) needs acc_o 128 + acc_s 64 registers per thread and
// spilled 416 bytes under nvcc 13.0 once masks and score transforms were in (2026-11-22, ptxas -v,
// sm_90); 16 rows per warp leaves room for the precomputed swizzled smem addresses. Registers below
// are ptxas's for sm_90, bf16, with 0 spills.
constexpr FwdTileConfig kFwdTileConfigs[] = {
    // d 64: 247 regs; block_n 128 halves the number of softmax rescales per key; 40 KB smem.
    {64, 64, 128, 4},
    // d 96: 254 regs; 96 % 64 != 0 uses 32-wide swizzle atoms; 36 KB.
    {96, 64, 64, 4},
    // d 128: 229 regs; 48 KB, two CTAs (8 warps) per SM at this register count.
    {128, 64, 64, 4},
    // d 192: 254 regs; 72 KB.
    {192, 64, 64, 4},
    // d 256: acc_o alone is 128 regs; block_n 64 spilled 212 bytes for sm_80 (not sm_90), block_n
    // 32 uses 250 with none; 64 KB.
    {256, 64, 32, 4},
};

constexpr FwdTileConfig fwd_tile_config(int head_dim) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    if (c.head_dim == head_dim) return c;
  return FwdTileConfig{0, 0, 0, 0};
}

}  // namespace flashcute::sm80
