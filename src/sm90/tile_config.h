#pragma once
// Tile configurations of the SM90 forward, one row per head-dim bucket; each row says why.
// The CTA has one producer warpgroup (TMA) and `consumer_wgs` consumer warpgroups, each owning
// 64 query rows (block_m = 64 * consumer_wgs).

#include <cstdint>

namespace flashcute::sm90 {

struct FwdTileConfig {
  int head_dim;      // bucket
  int block_m;       // query rows per CTA (64 per consumer warpgroup)
  int block_n;       // key rows per main-loop step (wgmma N of Q K^T, K of P V)
  int stages;        // K and V pipeline depth
  int consumer_wgs;  // consumer warpgroups
  // Inside a consumer warpgroup, S = Q K[n]^T and O += P[n+1] V[n+1] are issued together and the
  // softmax of block n runs while the P V product is on the tensor cores (O is rescaled after it).
  bool overlap;
  // The two consumer warpgroups take turns issuing their wgmma batches (named barriers), so one's
  // softmax runs under the other's products. Needs `overlap` and two consumer warpgroups.
  bool pingpong;
  // One CTA per SM looping over the tiles (static round-robin in TileOrder: last query blocks first),
  // instead of one CTA per tile: hides launch and prologue costs and the grid's tail.
  bool persistent;
  // One thread per consumer warpgroup frees a K/V stage instead of all 128.
  bool wg_release;

  constexpr int threads() const { return (consumer_wgs + 1) * 128; }
  // Q tile + `stages` K tiles + `stages` V tiles, 16-bit; O is staged in Q's space at the end.
  constexpr int64_t tile_smem_bytes() const {
    return (static_cast<int64_t>(block_m) + 2 * static_cast<int64_t>(stages) * block_n) * head_dim * 2;
  }
};

// Each row's overlap / pingpong / persistent choice is the measured winner (H100, bf16, d 64/128/256,
// seqlen 512-8k, causal and not; docs/perf-notes.md, "SM90 switches"). The FLASHCUTE_SM90_FWD_*
// macros force a choice into every row for A/B builds (-DCMAKE_CUDA_FLAGS="-DFLASHCUTE_SM90_FWD_
// OVERLAP=1 ..."); -1 (the default) keeps the rows' values.
#ifndef FLASHCUTE_SM90_FWD_OVERLAP
#define FLASHCUTE_SM90_FWD_OVERLAP -1
#endif
#ifndef FLASHCUTE_SM90_FWD_PINGPONG
#define FLASHCUTE_SM90_FWD_PINGPONG -1
#endif
#ifndef FLASHCUTE_SM90_FWD_PERSISTENT
#define FLASHCUTE_SM90_FWD_PERSISTENT -1
#endif
// One thread per consumer warpgroup frees a K/V stage instead of all 128 (FA3 measured the
// all-threads release of CUTLASS >= 3.6 as a regression at d 128 causal). Measured here: 0-2% ahead
// of the all-threads release with overlap + pingpong at d 64/128/256, so on, except d 256 (plain loop):
// there it spilled 4 bytes (nvcc 13.0, sm_90a) for a 0.6% gain.
#ifndef FLASHCUTE_SM90_FWD_WG_RELEASE
#define FLASHCUTE_SM90_FWD_WG_RELEASE 1
#endif
constexpr bool wg_release_choice(bool measured) { return measured && FLASHCUTE_SM90_FWD_WG_RELEASE != 0; }

constexpr bool measured_or_forced(int forced, bool measured) { return forced < 0 ? measured : forced != 0; }
constexpr bool overlap_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_OVERLAP, measured); }
// Ping-pong needs the overlapped loop.
constexpr bool pingpong_choice(bool overlap, bool measured) {
  return overlap && measured_or_forced(FLASHCUTE_SM90_FWD_PINGPONG, measured);
}
constexpr bool persistent_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_PERSISTENT, measured); }

// Two consumer warpgroups (128 query rows) everywhere and two pipeline stages. block_n is bounded by
// the consumer register budget (acc_o is d/2 fp32 registers per thread, S is block_n/2, P
// block_n/4) and by 227 KB of shared memory. Switches, measured (TFLOP/s at 8k non-causal / causal,
// plain -> chosen): d 64 overlap 383 -> 444 / 360 -> 415 (ping-pong on top was 7-9% slower);
// d 128 overlap + ping-pong 596 -> 669 / 542 -> 611; d 256 plain (the overlapped loop spills in the
// softcap/ALiBi kernel; ping-pong needs it). Persistent lost 3-16% on every causal row (d 128
// causal 8k: 614 -> 518), so it is off. d 96 and d 192 were not measured: d 96 follows d 64's
// choice, d 192 d 128's.
// ptxas (nvcc 13.0, 2026-11-22) with every switch on: 0 spills for d 64, 96, 128, 192.
constexpr FwdTileConfig kFwdTileConfigs[] = {
    // d, block_m, block_n, stages, consumer warpgroups,
    //     overlap, pingpong, persistent, wg_release
    {64, 128, 128, 2, 2,  // 80 KB
     overlap_choice(true), pingpong_choice(overlap_choice(true), false), persistent_choice(false),
     wg_release_choice(true)},
    {96, 128, 128, 2, 2,  // 120 KB; 96 % 64 != 0: 64-byte swizzle atoms
     overlap_choice(true), pingpong_choice(overlap_choice(true), false), persistent_choice(false),
     wg_release_choice(true)},
    {128, 128, 128, 2, 2,  // 160 KB
     overlap_choice(true), pingpong_choice(overlap_choice(true), true), persistent_choice(false),
     wg_release_choice(true)},
    {192, 128, 96, 2, 2,  // 192 KB; acc_o 96 + S 48 registers
     overlap_choice(true), pingpong_choice(overlap_choice(true), true), persistent_choice(false),
     wg_release_choice(true)},
    // 192 KB; acc_o 128 + S 32 registers (block_n 80, as FA3, needs CUTLASS's extended wgmma N shapes)
    {256, 128, 64, 2, 2, false, false, persistent_choice(false), wg_release_choice(false)},
};

constexpr FwdTileConfig fwd_tile_config(int head_dim) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    if (c.head_dim == head_dim) return c;
  return FwdTileConfig{0, 0, 0, 0, 0, false, false, false, false};
}

}  // namespace flashcute::sm90
