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

  constexpr int threads() const { return (consumer_wgs + 1) * 128; }
  // Q tile + `stages` K tiles + `stages` V tiles, 16-bit; O is staged in Q's space at the end.
  constexpr int64_t tile_smem_bytes() const {
    return (static_cast<int64_t>(block_m) + 2 * static_cast<int64_t>(stages) * block_n) * head_dim * 2;
  }
};

// The step-4 features are compile-time switches until they have been measured on the H100 (each
// defaults to off; e.g. -DCMAKE_CUDA_FLAGS="-DFLASHCUTE_SM90_FWD_OVERLAP=1 -DFLASHCUTE_SM90_FWD_PINGPONG=1
// -DFLASHCUTE_SM90_FWD_PERSISTENT=1" builds them all in). Once measured, the winners become the rows'
// literal values and the switches go.
#ifndef FLASHCUTE_SM90_FWD_OVERLAP
#define FLASHCUTE_SM90_FWD_OVERLAP 0
#endif
#ifndef FLASHCUTE_SM90_FWD_PINGPONG
#define FLASHCUTE_SM90_FWD_PINGPONG 0
#endif
#ifndef FLASHCUTE_SM90_FWD_PERSISTENT
#define FLASHCUTE_SM90_FWD_PERSISTENT 0
#endif
// One thread per consumer warpgroup frees a K/V stage instead of all 128 (FA3 measured the
// all-threads release of CUTLASS >= 3.6 as a regression at d 128 causal).
#ifndef FLASHCUTE_SM90_FWD_WG_RELEASE
#define FLASHCUTE_SM90_FWD_WG_RELEASE 0
#endif
inline constexpr bool kFwdOverlap = FLASHCUTE_SM90_FWD_OVERLAP != 0;
inline constexpr bool kFwdPingPong = kFwdOverlap && FLASHCUTE_SM90_FWD_PINGPONG != 0;
inline constexpr bool kFwdPersistent = FLASHCUTE_SM90_FWD_PERSISTENT != 0;
inline constexpr bool kFwdWgRelease = FLASHCUTE_SM90_FWD_WG_RELEASE != 0;

// First version (2026-11-22, not yet measured): two consumer warpgroups (128 query rows) everywhere
// and two pipeline stages. block_n is bounded by the consumer register budget (acc_o is d/2 fp32
// registers per thread, S is block_n/2, P block_n/4) and by 227 KB of shared memory.
// ptxas (nvcc 13.0, 2026-11-22) with every switch on: 0 spills for d 64, 96, 128, 192; the d 256
// softcap/ALiBi kernel spills 16 bytes with the overlapped loop, so d 256 keeps the plain loop.
constexpr FwdTileConfig kFwdTileConfigs[] = {
    // d, block_m, block_n, stages, consumer warpgroups, overlap, pingpong, persistent
    {64, 128, 128, 2, 2, kFwdOverlap, kFwdPingPong, kFwdPersistent},   // 80 KB
    {96, 128, 128, 2, 2, kFwdOverlap, kFwdPingPong, kFwdPersistent},   // 120 KB; 96 % 64 != 0: 64-byte swizzle atoms
    {128, 128, 128, 2, 2, kFwdOverlap, kFwdPingPong, kFwdPersistent},  // 160 KB
    {192, 128, 96, 2, 2, kFwdOverlap, kFwdPingPong, kFwdPersistent},   // 192 KB; acc_o 96 + S 48 registers
    // 192 KB; acc_o 128 + S 32 registers (block_n 80, as FA3, needs CUTLASS's extended wgmma N shapes)
    {256, 128, 64, 2, 2, false, false, kFwdPersistent},
};

constexpr FwdTileConfig fwd_tile_config(int head_dim) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    if (c.head_dim == head_dim) return c;
  return FwdTileConfig{0, 0, 0, 0, 0, false, false, false};
}

}  // namespace flashcute::sm90
