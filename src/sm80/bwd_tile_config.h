#pragma once
// Tile configurations of the SM80 backward, one row per head-dim bucket (the same struct is the
// compile-time template argument, through the KernelKey's bucket, and what the host reads for shared
// memory and launch shape). Each row says why.
//
// One CTA owns block_n keys of one (batch, q head) and walks the block_m-row query blocks that see
// them. Five products per query block, each with its own warp arrangement (all `warps` warps):
//   S  = Q K^T, dP = dO V^T   (block_m x block_n)   warps sdp_warps_m along the query rows
//   dV += P^T dO, dK += dS^T Q (block_n x d)        warps dkv_warps_n along the keys
//   dQ  = dS K                (block_m x d)         warps dq_warps_m along the query rows
// dK and dV stay in registers for the whole loop; S and dP die once P and dS are in smem, before dQ's
// accumulator is born, so the peak is dK + dV + max(S + dP, dQ) plus operand fragments.

#include <cstdint>

// A/B builds: -DFLASHCUTE_SM80_BWD_D64_SDP_SLICES=1|2 (and _TRANSFORM), -DFLASHCUTE_SM80_BWD_D64_SDP_WARPS_M=2|4,
// -DFLASHCUTE_SM80_BWD_D128_SDP_SLICES=1|2, -DFLASHCUTE_SM80_BWD_D128_DQ_SLICES=1|2 (the
// defaults are the row's measured choices).
#ifndef FLASHCUTE_SM80_BWD_D64_SDP_SLICES
#define FLASHCUTE_SM80_BWD_D64_SDP_SLICES 1
#endif
#ifndef FLASHCUTE_SM80_BWD_D64_SDP_SLICES_TRANSFORM
#define FLASHCUTE_SM80_BWD_D64_SDP_SLICES_TRANSFORM 2
#endif
#ifndef FLASHCUTE_SM80_BWD_D64_SDP_WARPS_M
#define FLASHCUTE_SM80_BWD_D64_SDP_WARPS_M 2
#endif
#ifndef FLASHCUTE_SM80_BWD_D128_SDP_SLICES
#define FLASHCUTE_SM80_BWD_D128_SDP_SLICES 1
#endif
#ifndef FLASHCUTE_SM80_BWD_D128_DQ_SLICES
#define FLASHCUTE_SM80_BWD_D128_DQ_SLICES 1
#endif

namespace flashcute::sm80 {

struct BwdTileConfig {
  int head_dim;     // bucket
  int block_m;      // query rows per main-loop step
  int block_n;      // key rows per CTA (K and V stay in smem)
  int warps;        // warps per CTA
  int sdp_warps_m;  // S/dP: warps along the query rows (the rest along the keys)
  int dkv_warps_n;  // dK/dV: warps along the keys (the rest along d)
  int dq_warps_m;   // dQ: warps along the query rows (the rest along d)
  int stages;       // Q/dO buffers: 2 = the next block's loads overlap this block's products
  int sdp_slices;   // S/dP computed in this many slices of block_m / sdp_slices rows (fewer live registers)
  int dq_slices;    // dQ computed in this many slices of head_dim / dq_slices columns (fewer live registers)
  int k_step;       // 16-wide k-slices per step of the products' rolled k loops; 0 = all (fully unrolled)
  int sdp_slices_transform = 0;  // S/dP slices of the softcap/ALiBi kernel; 0 = sdp_slices

  constexpr int threads() const { return warps * 32; }
  // K + V + stages x (Q + dO) + P + dS, 16-bit elements, stages x (LSE + D) of block_m rows in
  // fp32, and the per-CTA scalars; the dK/dV output staging reuses K and V.
  constexpr int64_t smem_bytes() const;
};

// Shared memory for the main kernel's per-CTA scalars (bwd_kernel.cuh, BwdCtaScalars).
inline constexpr int kBwdScalarBytes = 128;

constexpr int64_t BwdTileConfig::smem_bytes() const {
  return (2 * static_cast<int64_t>(block_n) * head_dim + 2 * static_cast<int64_t>(stages) * block_m * head_dim +
          2 * static_cast<int64_t>(block_m) * block_n) *
             2 +
         2 * static_cast<int64_t>(stages) * block_m * 4 + kBwdScalarBytes;
}

// Every row fits the 163 KB (166912-byte) opt-in shared memory of an A100, so it runs on every
// sm_80/sm_90 part; the 99 KB parts (sm_86/89) are refused by the launcher with the byte counts.
// One CTA per SM (8 warps): dK + dV are 64-128 registers per thread before anything else, and every
// row sits at 211-255 registers. Registers: main kernel, ptxas -v of nvcc 13.0, plain kernel sm_80 /
// sm_90, then the softcap/ALiBi kernel sm_80 / sm_90; both dtypes the same, 0 bytes spilled in all
// eight kernels of every row (2026-11-25). The shapes follow FlashAttention-2's sm80 choices where
// they fit; measurements in docs/perf-notes.md.
constexpr BwdTileConfig kBwdTileConfigs[] = {
    // d 64: 255 / 254, 239 / 227 regs; 166016 B. block_m 128 halves the query-block steps (and their
    // three barriers) per CTA. S/dP in one slice with warps 2 x 4 (FlashAttention-2's shape): +1-9%
    // over two slices with warps 4 x 2 (H100, 2026-11-25, measured while it still spilled 32 bytes);
    // it fits since the dQ reductions lost their predicates (bwd_traits.cuh's BwdDqTile). The
    // softcap/ALiBi kernel keeps two 64-row slices: one spilled 48 bytes on sm_80.
    {64, 128, 128, 8, FLASHCUTE_SM80_BWD_D64_SDP_WARPS_M, 4, 4, 2, FLASHCUTE_SM80_BWD_D64_SDP_SLICES, 1, 0,
     FLASHCUTE_SM80_BWD_D64_SDP_SLICES_TRANSFORM},
    // d 96: 222 / 211, 213 / 215 regs; 132224 B. dQ warps 4 x 2 because 96 is not a multiple of the
    // 64-wide N tile of 2 x 4; S/dP in one slice spilled 8 bytes on sm_80 (a day-one revision).
    {96, 64, 128, 8, 2, 4, 4, 2, 2, 1, 0},
    // d 128: 255 / 255, 255 / 255 regs; 164992 B. block_n 128: half the Q/dO reloads and dQ
    // reductions of block_n 64; dK + dV 128 registers. S/dP and dQ in one slice each (FlashAttention-2's
    // shape): +10-17% over two slices each (H100, 2026-11-25), which re-read K/V and dS from smem
    // once per slice (25% more ldmatrix; the loop is shared-memory-bound). It fits only with the
    // fresh thread indices and opaque scalar reads of bwd_kernel.cuh. Fully unrolled products: k
    // steps of 2 slices spent ~700 of the loop's ~1780 instructions recomputing ldmatrix addresses.
    {128, 64, 128, 8, 2, 4, 2, 2, FLASHCUTE_SM80_BWD_D128_SDP_SLICES, FLASHCUTE_SM80_BWD_D128_DQ_SLICES, 0},
    // d 192: 236 / 230, 235 / 228 regs; 164992 B. block_n 128 would need dK + dV = 192 registers per
    // thread; block_n 64 needs 96.
    {192, 64, 64, 8, 2, 2, 2, 2, 1, 1, 0},
    // d 256: 253 / 255, 242 / 248 regs; 148096 B. Two Q/dO stages (208 KB) do not fit an A100;
    // dK + dV 128 registers, dQ in four 64-column slices (16 each), S/dP in two; fully unrolled
    // products (k steps of 2 slices only before the softcap/ALiBi split).
    {256, 64, 64, 8, 2, 2, 2, 1, 2, 4, 0},
};

constexpr BwdTileConfig bwd_tile_config(int head_dim) {
  for (const BwdTileConfig& c : kBwdTileConfigs)
    if (c.head_dim == head_dim) return c;
  return BwdTileConfig{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
}

// The smallest block_m of any row: the deterministic mode's per-(batch, head) turn counters are
// sized for it (bwd_workspace.h); a config with a bigger block_m uses every (block_m / 64)-th one.
inline constexpr int kBwdMinBlockM = 64;

}  // namespace flashcute::sm80
