#pragma once
// Tile configurations of the SM80 forward, one row per head-dim bucket. The same config struct is
// the compile-time template argument (via the KernelKey's bucket) and what the host reads for
// shared-memory bytes and launch shape. Each row says why.

#include <cstdint>

#include "api/kernel_key.h"

// A/B builds: -DFLASHCUTE_SM80_FWD_D128_KV_STAGES=1|2, -DFLASHCUTE_SM80_FWD_D64_REVERSE_M=false|true,
// -DFLASHCUTE_SM80_FWD_D64_KV_STAGES=1|2, -DFLASHCUTE_SM80_FWD_D64_FRAG_PREFETCH=false|true, the block_n
// macros below (the defaults are the rows' measured choices).
#ifndef FLASHCUTE_SM80_FWD_D128_KV_STAGES
#define FLASHCUTE_SM80_FWD_D128_KV_STAGES 2
#endif
#ifndef FLASHCUTE_SM80_FWD_D128_BLOCK_N
#define FLASHCUTE_SM80_FWD_D128_BLOCK_N 64
#endif
#ifndef FLASHCUTE_SM80_FWD_D128_FRAG_PREFETCH
#define FLASHCUTE_SM80_FWD_D128_FRAG_PREFETCH false
#endif
#ifndef FLASHCUTE_SM80_FWD_D64_BLOCK_N
#define FLASHCUTE_SM80_FWD_D64_BLOCK_N 128
#endif
#ifndef FLASHCUTE_SM80_FWD_D64_KV_STAGES
#define FLASHCUTE_SM80_FWD_D64_KV_STAGES 1
#endif
#ifndef FLASHCUTE_SM80_FWD_D64_FRAG_PREFETCH
#define FLASHCUTE_SM80_FWD_D64_FRAG_PREFETCH true
#endif
// d 128's lazy-rescale threshold (common/softmax.cuh; 0: the reference max moves on any growth).
#ifndef FLASHCUTE_SM80_FWD_D128_RESCALE_THRESHOLD
#define FLASHCUTE_SM80_FWD_D128_RESCALE_THRESHOLD 8
#endif
#ifndef FLASHCUTE_SM80_FWD_D64_REVERSE_M
#define FLASHCUTE_SM80_FWD_D64_REVERSE_M false
#endif

namespace flashcute::sm80 {

struct FwdTileConfig {
  int head_dim;    // bucket
  bool transform;  // the kernel with softcap/ALiBi (more registers per score element)
  int block_m;     // query rows per CTA
  int block_n;     // key rows per main-loop step
  int warps;       // each warp owns block_m / warps query rows
  int kv_stages = 1;  // K/V buffers: 1 = K and V loads alternate inside a step (two barriers per step);
                      // 2 = the next block's K and V land in the other buffer during this step (one barrier)
  bool reverse_m = false;  // launch the query blocks last first (causal: longest CTAs in the first wave)
  bool frag_prefetch = true;  // products load k-slice i+1's operand fragments before slice i's MMAs
  int rescale_threshold = 0;  // softmax's lazy rescale (log2 units; 0 = off)
  // The ldmatrix thread offsets and the softmax's row sums wait in smem between steps, and the mask
  // and epilogue derive the thread's coordinates afresh (fwd_kernel.cuh): fewer registers live
  // across the main loop, for the shapes that need them (elsewhere ptxas spent the freed registers
  // differently and spilled a few bytes: d 128 on sm_90).
  bool park_loop_state = false;

  constexpr int threads() const { return warps * 32; }
  // Q tile + kv_stages x (K tile + V tile), 16-bit elements; O is staged in Q's space at the end.
  // Then park_bytes() per thread: its parked K and V sources (and loop state; fwd_kernel.cuh).
  constexpr int64_t park_bytes() const { return park_loop_state ? 48 : 16; }
  constexpr int64_t smem_bytes() const {
    return static_cast<int64_t>(block_m + 2 * kv_stages * block_n) * head_dim * 2 + threads() * park_bytes();
  }
};

// Registers decide these shapes: no row may spill under nvcc 13.0 for sm_80 or sm_90 (ptxas -v,
// 2026-11-25); d 128 reaches FlashAttention-2's shape only through fwd_kernel.cuh's register
// economies (see its row); see docs/perf-notes.md for the measurements behind each choice. Registers are ptxas's (sm_90 / sm_80) for bf16.
constexpr FwdTileConfig kFwdTileConfigs[] = {
    // d 64: FlashAttention-2's shape, 128 x 128 with 32 rows per warp (254 / 253 regs, 0 spills on sm_90 /
    // sm_80, 54 KB: 2 CTAs per SM). It fits since park_loop_state; before, it spilled 32-104 bytes. Over
    // 128 x 64 (H200, 2026-11-26, bf16 2k-16k, 3 processes per variant, three A/Bs): median per row +10%,
    // +8%, +2%, +5% non-causal, +1%, +13%, +2%, -2% causal, one A/B of the three flat; at ncu's locked
    // base clock the two take the same time non-causal and 128 x 128 is 1-3% slower causal, so what the
    // bench gains is clock under its power cap, if it is real (a guess, not measured; docs/perf-notes.md,
    // "Session 15"). 32 rows per warp ran 13-17% faster than 64 rows per CTA (H100). Two K/V stages (at
    // block_n 64): -2% to -15% on 7 of 8 rows. Query blocks in launch order (FA2's): +1.7% geometric mean
    // over last first on bf16 2k-16k, +8% on causal 2k (H100, 2026-11-25, block_n 64).
    {64, false, 128, FLASHCUTE_SM80_FWD_D64_BLOCK_N, 4, FLASHCUTE_SM80_FWD_D64_KV_STAGES, FLASHCUTE_SM80_FWD_D64_REVERSE_M,
     FLASHCUTE_SM80_FWD_D64_FRAG_PREFETCH, 0, /*park_loop_state=*/true},
    // d 64 with softcap/ALiBi: the 128-row shape spills 412 bytes, 64x128 4-8 bytes; 64x64 fits
    // (215 / 211 regs).
    {64, true, 64, 64, 4},
    // d 96: 96 % 64 != 0 uses 32-wide swizzle atoms; 254 regs; 36 KB.
    {96, false, 64, 64, 4},
    {96, true, 64, 64, 4},
    // d 128: FlashAttention-2's shape, 128 x 64 with 32 rows per warp (255 / 255 regs, 0 spills, 98 KB:
    // 2 CTAs per SM). It fits through fwd_kernel.cuh's per-step smem address rebuild, XOR ldmatrix
    // addressing, K/V gmem sources parked in smem and per-step mask bounds; before those it spilled
    // 172-184 bytes and block_n 32 (64 KB) was the default. block_n 64 over 32: +5-13% on 7 of 8 rows
    // of bf16 2k-16k (H100, 2026-11-25). Two K/V stages: +2-3% non-causal, causal flat (measured at
    // block_n 32). Query blocks last first measured 3-6% slower here. Operand fragments loaded slice by
    // slice, not one slice ahead: +2-3% non-causal, +0-1% causal (block_n 32). Lazy rescale
    // (threshold 8): +1-3% non-causal, +1-8% causal; at d 64 it lost 3-6% at 16k, so d 64 keeps 0.
    {128, false, 128, FLASHCUTE_SM80_FWD_D128_BLOCK_N, 4, FLASHCUTE_SM80_FWD_D128_KV_STAGES, false,
     FLASHCUTE_SM80_FWD_D128_FRAG_PREFETCH, FLASHCUTE_SM80_FWD_D128_RESCALE_THRESHOLD},
    // d 128 with softcap/ALiBi: block_n 128 spills 356 bytes on sm_80; 64x64 fits (255 regs); 48 KB.
    {128, true, 64, 64, 4},
    // d 192: 254 regs; 72 KB.
    {192, false, 64, 64, 4},
    {192, true, 64, 64, 4},
    // d 256: acc_o alone is 128 regs; block_n 64 spilled 212 bytes for sm_80 and block_n 32 still
    // 4-32 bytes; block_n 16 fits (220 / 229 regs); 48 KB.
    {256, false, 64, 16, 4},
    {256, true, 64, 16, 4},
};

constexpr FwdTileConfig fwd_tile_config(int head_dim, bool transform) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    if (c.head_dim == head_dim && c.transform == transform) return c;
  return FwdTileConfig{0, false, 0, 0, 0};
}

}  // namespace flashcute::sm80
