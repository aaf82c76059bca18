#pragma once
// Tile configurations of the SM90 forward, one row per head-dim bucket; each row says why.
// The CTA has one producer warpgroup (TMA) and `consumer_wgs` consumer warpgroups, each owning
// 64 query rows (block_m = 64 * consumer_wgs).

#include <cstdint>

// The short rows' kernel (unmasked problems) keeps the row's ping-pong (round-robin turns among its
// short_wgs consumer warpgroups); off: the short kernel runs without it.
#ifndef FLASHCUTE_SM90_FWD_SHORT_PINGPONG
#define FLASHCUTE_SM90_FWD_SHORT_PINGPONG 0
#endif
// The short_wgs instantiations free each K/V stage once per consumer warpgroup (1), whatever the
// row's wg_release, or keep the row's (0). d 64's row has it on anyway; it turns it on in d 256's
// masked short tiles, whose row kernel has it off (a spill there). Session 47 (H200, ab_steady,
// bf16, 3 rounds, with SKIP_WARP's per-warp skip arrivals, which it needs there): d 256 causal 512
// 1.002 (0.999-1.003), 1k 1.008 (1.003-1.010), non-causal 1k 1.003 (1.002-1.004); the kernel's
// instructions 4384 -> 3840.
#ifndef FLASHCUTE_SM90_FWD_SHORT_WG_RELEASE
#define FLASHCUTE_SM90_FWD_SHORT_WG_RELEASE 1
#endif

// Q in registers in a row's overlapped kernels (the rows' main_q_regs; -1 keeps the rows', 0 off, 1
// on in every row that has with_main_q_regs: d 128's). An A/B switch; session 71 measured it at d 128
// (perf-notes: 0.98-1.01 of main, not taken).
#ifndef FLASHCUTE_SM90_FWD_MAIN_Q_REGS
#define FLASHCUTE_SM90_FWD_MAIN_Q_REGS -1
#endif

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
  // Dispatch: problems with seqlen_k <= this run the persistent instantiation (one CTA per SM
  // looping over the tiles: hides each tile's prologue and epilogue under the next one's loads),
  // longer ones one CTA per tile. 0: never persistent.
  int persistent_max_seqlen_k;
  // One thread per consumer warpgroup frees a K/V stage instead of all 128.
  bool wg_release;
  // The softcap/ALiBi kernel runs the overlapped loop too (false: the plain loop, where the
  // overlapped one spills with the score transform's extra registers).
  bool transform_overlap = true;
  // Softmax: every exp2_poly_every-th score's exp2 on the FMA units (0: all on MUFU), and the lazy
  // rescale threshold in log2 units (0: the reference max moves on any growth); common/softmax.cuh.
  int exp2_poly_every = 0;
  int rescale_threshold = 0;
  bool fused_exp2 = false;  // p = 2^fma(s, mult, -R): one FFMA per score instead of FADD + FMUL
  // Key rows per step for plain (no softcap/ALiBi) problems with no causal mask or window, where no
  // block is masked and a wider step amortizes the per-step work; 0: block_n. A separate
  // instantiation, picked by Fwd::run.
  int block_n_full = 0;
  // Dispatch: with a counter word in the caller's workspace, problems with seqlen_k <= this run the
  // persistent instantiation with the dynamic tile scheduler (fwd_kernel.cuh: a CTA that finishes
  // early takes the next tile in TileOrder); 0: never. Without a workspace only
  // persistent_max_seqlen_k applies (the static deal).
  int dynamic_max_seqlen_k = 0;
  // Key rows per step for plain (no softcap/ALiBi) problems with a causal mask or window up to
  // masked_max_seqlen_k keys, on the plain loop (no overlap, no ping-pong) of the persistent
  // instantiation: short masked problems spend most of their steps on boundary blocks, and a wider
  // step means fewer of them. A separate instantiation, picked by Fwd::run; 0: off.
  int block_n_masked = 0;
  // The non-persistent kernel runs one CTA per tile on a 1-D grid in TileOrder (fwd_kernel.cuh), so
  // the hardware's in-order dispatch is a list schedule of that order, with groups of this many
  // batch x head indices for problems with a causal mask or window, and groups of 1 otherwise (the
  // order of the (query blocks, heads, batch) grid, which it runs when this is 0). Groups of one
  // head give a sawtooth of long-to-short tiles per head whose last head's long tiles make the
  // wave's tail; a few heads per group keep the long tiles of the last ones ahead of the short ones.
  // Up to kMaskedTileGroupMaxSeqlenK keys (beyond, the sawtooth's tail is short against the wave and
  // the CTAs running together share fewer heads' K/V in L2 with groups of one). The dynamic
  // scheduler takes causal and windowed problems' tiles in groups of this many too, at any length.
  // 0: off.
  int masked_tile_group = 0;
  // Dispatch: the masked kernel (block_n_masked, persistent) runs masked plain problems up to the
  // longest of this and the persistent / dynamic limits; past those two on the dynamic scheduler
  // given a workspace, else with one CTA per tile (Fwd::run).
  int masked_max_seqlen_k = 0;
  // Plain (no softcap/ALiBi) problems with no causal mask or window, up to persistent_max_seqlen_k
  // keys (so that a workspace changes the schedule only), whose query rows pad at least 5% less to
  // tiles of 64 * short_wgs rows than to block_m (short_pays): short_wgs consumer warpgroups
  // (roles.h's budgets), short_block_n keys per step, short_stages K/V stages, the overlapped loop
  // without ping-pong. A separate instantiation, picked by Fwd::run; 0: off.
  int short_wgs = 0;
  int short_block_n = 0;
  int short_stages = 0;
  // Plain problems with a causal mask or window up to this many keys run the short_wgs
  // instantiation too, before the masked kernel; there each consumer warpgroup skips the key blocks
  // that every one of its own 64 rows masks (wg_key_blocks). 0: none. A row whose short_wgs is its
  // own consumer_wgs (with_short_masked) has these masked short tiles only: short_pays never holds.
  int short_masked_max_seqlen_k = 0;
  // Plain problems with no causal mask or window up to this many keys run that masked-short
  // instantiation too, with and without a workspace (its per-warpgroup ranges are the whole range
  // there); for rows whose block_n pads short key ranges (d 256's 80: 512 keys in 7 blocks of 80).
  // 0: none.
  int short_full_max_seqlen_k = 0;
  // Dispatch: plain problems with no causal mask or window, not varlen, with seqlen_k >= this and an
  // even number of query blocks run the non-persistent kernel on clusters of two CTAs (adjacent query
  // blocks of one head, so the same key blocks), each CTA's producer loading half of every K and V
  // block and multicasting it to both, with or without a workspace. A separate instantiation, picked
  // by Fwd::run before the persistent limits; 0: off.
  int cluster_min_seqlen_k = 0;
  // The persistent overlapped kernels with O in its own smem free Q's space after a tile's last
  // S = Q K^T instead of its last P V, so the next tile's Q loads under this tile's last softmax,
  // P V and epilogue (fwd_traits.cuh's kEarlyQ says which instantiations can).
  bool early_q_release = false;
  bool transform_early_q = false;  // the same in the softcap/ALiBi kernel
  // The overlapped loop's steps after a tile's first block run their exps with the rows' current
  // reference maxima and check the block max after them (OnlineSoftmax::update_speculative), so the
  // block max is off the path from S to P; not in the softcap/ALiBi kernels.
  bool spec_exp = false;
  // The persistent instantiation decodes each tile index with the launcher's fast divisions
  // (TileOrder::decode_fast, tile_order.h) instead of three integer divisions.
  bool fast_decode = false;
  bool transform_fast_decode = false;  // the same in the softcap/ALiBi kernel
  // O's TMA store per consumer warp (each warp's lane 0 stores the 16 rows the warp wrote, and the
  // epilogue's warpgroup barriers on sO become __syncwarp) in this row's ping-pong kernels, not in
  // its softcap/ALiBi one (fwd_traits.cuh: kWarpStore).
  bool warp_store = false;
  // The overlapped loop's persistent plain kernel (not softcap/ALiBi) computes a consumer
  // warpgroup's first key block (its diagonal under a causal mask) as S = Q K^T of block_n / 2
  // columns where its own rows see none of the block's second half (fwd_traits.cuh: kHalfFirst).
  bool half_first = false;
  // The short_wgs instantiations (persistent, overlapped) hold each warpgroup's 64 rows of Q in
  // registers: S = Q K^T by wgmma with A from registers (loaded once per tile by ldmatrix), so the
  // 64-key products read only K from smem, and Q's space is freed after the tile's first S
  // (fwd_traits.cuh: kQRegs).
  bool short_q_regs = false;
  // The row's overlapped kernels (not the softcap/ALiBi one) hold each consumer warpgroup's 64 rows
  // of Q in registers too (S = Q K^T with A from registers, loaded once
  // per tile by ldmatrix), so every S reads only K from smem: at d 128, 64 bytes of shared memory
  // per tensor cycle for S instead of 96. Unlike short_q_regs, Q's smem stays until the row's usual
  // release (the speculative exps' rare recompute reads it). fwd_traits.cuh: kQRegs, kQRegsKeepSq.
  bool main_q_regs = false;
  // Set by for_kernel, not in the rows: this instantiation holds Q in registers (short_q_regs or
  // main_q_regs), and (q_regs_keep_sq) keeps Q's smem until the usual release (main_q_regs).
  bool q_regs = false;
  bool q_regs_keep_sq = false;
  // Set by for_kernel, not in the rows: the CTAs per cluster of this instantiation (1: no cluster).
  int cluster = 1;
  // Set by for_kernel, not in the rows: each consumer warpgroup runs only the key blocks its own
  // rows see (waiting for and freeing the others' stages), on the overlapped loop without ping-pong.
  bool wg_key_blocks = false;
  // Set by for_kernel, not in the rows: this instantiation is the persistent one.
  bool persistent = false;
  // Dispatch: plain problems (no softcap/ALiBi) given a workspace run the persistent instantiation
  // with the dynamic tile scheduler up to the longer of this and dynamic_max_seqlen_k keys; the
  // softcap/ALiBi kernels keep dynamic_max_seqlen_k. Set by with_dynamic_plain; for_kernel clears it
  // (no kernel reads it).
  int dynamic_plain_max_seqlen_k = 0;
  // Dispatch: plain problems (no softcap/ALiBi) with no causal mask or window and at least this many
  // keys run the masked kernel too (block_n_masked's plain loop, with its sum check), up to its limit;
  // 0: never. Set by with_masked_full; for_kernel clears it (no kernel reads it).
  int masked_full_min_seqlen_k = 0;
  // Dispatch: plain problems (no softcap/ALiBi) on the persistent overlapped kernel keep the row's
  // early_q_release up to this many keys and run that kernel without it (without_early_q, a second
  // instantiation) beyond; 0: no limit. Set by with_early_q; for_kernel clears it (no kernel reads it).
  int early_q_max_seqlen_k = 0;

  // The configuration one kernel instantiation runs: the row, for the softcap/ALiBi kernel
  // (`transform`) without overlap and ping-pong when transform_overlap is off, persistent or not,
  // with block_n_full's width for `full` (unmasked, plain) problems, with block_n_masked's width and
  // the plain loop for `masked` (plain, persistent) ones, and the short_wgs tiles for `short_rows`
  // (plain, persistent; `masked` there turns on wg_key_blocks instead); `clustered`: clusters of two
  // CTAs (plain, unmasked, non-persistent; cluster_min_seqlen_k).
  constexpr FwdTileConfig for_kernel(bool transform, bool persistent_kernel, bool full = false,
                                     bool masked = false, bool short_rows = false, bool clustered = false) const {
    FwdTileConfig c = *this;
    c.cluster = clustered && cluster_min_seqlen_k > 0 ? 2 : 1;
    c.cluster_min_seqlen_k = 0;
    if (transform && !transform_overlap) c.overlap = c.pingpong = false;
    if (transform) c.fast_decode = fast_decode && transform_fast_decode;
    if (transform) c.early_q_release = early_q_release && transform_early_q;
    if (transform) c.warp_store = false;
    c.persistent = persistent_kernel;
    if (short_rows && short_wgs > 0) {
      c.consumer_wgs = short_wgs;
      c.block_m = 64 * short_wgs;
      c.block_n = short_block_n;
      c.stages = short_stages;
      c.overlap = true;
      c.pingpong = FLASHCUTE_SM90_FWD_SHORT_PINGPONG != 0 && c.pingpong && !masked;
      c.wg_key_blocks = masked;
      c.q_regs = short_q_regs;
      if (FLASHCUTE_SM90_FWD_SHORT_WG_RELEASE != 0) c.wg_release = true;
    } else {
      if (full && block_n_full > 0) c.block_n = block_n_full;
      if (masked && block_n_masked > 0) {
        c.block_n = block_n_masked;
        c.overlap = c.pingpong = false;
      }
      c.q_regs = c.q_regs_keep_sq = main_q_regs && !transform && c.overlap;
    }
    c.short_q_regs = false;
    c.main_q_regs = false;
    c.block_n_full = 0;
    c.block_n_masked = 0;
    c.dynamic_plain_max_seqlen_k = 0;
    c.masked_full_min_seqlen_k = 0;
    c.early_q_max_seqlen_k = 0;
    c.short_wgs = c.short_block_n = c.short_stages = c.short_masked_max_seqlen_k = c.short_full_max_seqlen_k = 0;
    return c;
  }

  // This instantiation with Q's space freed after the tile's last P V (early_q_max_seqlen_k).
  constexpr FwdTileConfig without_early_q() const {
    FwdTileConfig c = *this;
    c.early_q_release = false;
    return c;
  }

  // The short_wgs instantiation pays for seqlen_q query rows: its tiles pad them at least 5% less
  // than block_m's (512 rows: 512 against 576; 2k: 2048 against 2112, not taken: its step is ~4%
  // slower per row, perf-notes "Session 21").
  constexpr bool short_pays(int64_t seqlen_q) const {
    if (short_wgs == 0 || seqlen_q < 1) return false;
    const int64_t rows_short = 64 * short_wgs;
    const int64_t padded_short = (seqlen_q + rows_short - 1) / rows_short * rows_short;
    const int64_t padded = (seqlen_q + block_m - 1) / block_m * block_m;
    return padded_short * 20 <= padded * 19;
  }

  // The short_wgs instantiation serves unmasked problems too (its tiles differ from block_m's).
  constexpr bool short_unmasked() const { return short_wgs > 0 && short_wgs != consumer_wgs; }

  constexpr bool operator==(const FwdTileConfig&) const = default;

  constexpr int threads() const { return (consumer_wgs + 1) * 128; }
  // Q tile + `stages` K tiles + `stages` V tiles, 16-bit; O is staged in Q's space at the end.
  constexpr int64_t tile_smem_bytes() const {
    return (static_cast<int64_t>(block_m) + 2 * static_cast<int64_t>(stages) * block_n) * head_dim * 2;
  }
};

// The row with cluster_min_seqlen_k set (the rows' aggregate initializers stop before it).
constexpr FwdTileConfig with_cluster(FwdTileConfig c, int cluster_min_seqlen_k) {
  c.cluster_min_seqlen_k = cluster_min_seqlen_k;
  return c;
}
// The row with spec_exp set.
constexpr FwdTileConfig with_spec_exp(FwdTileConfig c, bool spec_exp) {
  c.spec_exp = spec_exp;
  return c;
}
// The row with early_q_release set, in its own kernels and in its softcap/ALiBi kernel; in the plain
// persistent kernel up to max_seqlen_k keys (0: every length).
constexpr FwdTileConfig with_early_q(FwdTileConfig c, bool early_q_release, bool in_transform_kernel,
                                     int max_seqlen_k = 0) {
  c.early_q_release = early_q_release;
  c.transform_early_q = in_transform_kernel;
  c.early_q_max_seqlen_k = max_seqlen_k;
  return c;
}
constexpr FwdTileConfig with_warp_store(FwdTileConfig c, bool warp_store) {
  c.warp_store = warp_store;
  return c;
}
constexpr FwdTileConfig with_half_first(FwdTileConfig c, bool half_first) {
  c.half_first = half_first;
  return c;
}
constexpr FwdTileConfig with_short_q_regs(FwdTileConfig c, bool short_q_regs) {
  c.short_q_regs = short_q_regs;
  return c;
}
constexpr FwdTileConfig with_main_q_regs(FwdTileConfig c, bool main_q_regs) {
  c.main_q_regs = main_q_regs;
  return c;
}
// The row with the masked short tiles only: the row's own consumer warpgroups, block_n keys per
// step and `stages` stages, each warpgroup on its own rows' key blocks, for plain problems with a
// causal mask or window up to max_seqlen_k keys (0: off).
// full_max_seqlen_k: unmasked plain problems up to that many keys run them too (0: none).
constexpr FwdTileConfig with_short_masked(FwdTileConfig c, int block_n, int stages, int max_seqlen_k,
                                          int full_max_seqlen_k = 0) {
  if (max_seqlen_k > 0 || full_max_seqlen_k > 0) {
    c.short_wgs = c.consumer_wgs;
    c.short_block_n = block_n;
    c.short_stages = stages;
    c.short_masked_max_seqlen_k = max_seqlen_k;
    c.short_full_max_seqlen_k = full_max_seqlen_k;
  }
  return c;
}
// The row with dynamic_plain_max_seqlen_k set.
constexpr FwdTileConfig with_dynamic_plain(FwdTileConfig c, int max_seqlen_k) {
  c.dynamic_plain_max_seqlen_k = max_seqlen_k;
  return c;
}
// The row with masked_full_min_seqlen_k set (only a row with block_n_masked has a masked kernel).
constexpr FwdTileConfig with_masked_full(FwdTileConfig c, int min_seqlen_k) {
  c.masked_full_min_seqlen_k = c.block_n_masked > 0 ? min_seqlen_k : 0;
  return c;
}
// The row with fast_decode set.
constexpr FwdTileConfig with_fast_decode(FwdTileConfig c, bool fast_decode, bool in_transform_kernel) {
  c.fast_decode = fast_decode;
  c.transform_fast_decode = in_transform_kernel;
  return c;
}

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
// FLASHCUTE_SM90_FWD_PERSISTENT: 1 = every problem persistent, 0 = none, -1 = the rows' limits.
constexpr int persistent_limit_choice(int measured) {
  return FLASHCUTE_SM90_FWD_PERSISTENT < 0 ? measured : (FLASHCUTE_SM90_FWD_PERSISTENT != 0 ? 0x7fffffff : 0);
}
// d 256: key rows per step (80 uses wgmma n 80: CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED, set for every
// CuTe user by cmake/deps.cmake).
#ifndef FLASHCUTE_SM90_FWD_D256_BLOCK_N
#define FLASHCUTE_SM90_FWD_D256_BLOCK_N 80
#endif
// d 256 and d 128: the masked short tiles (with_short_masked): causal / windowed problems up to
// _SHORT_MASKED_MAX keys, unmasked ones up to _SHORT_FULL_MAX (0: off), key rows per step, K/V
// stages. Session 31 (ab_steady, bf16, 1000 launches, 2 rounds, against the rows' kernels): d 256
// (block_n 64 against 80) causal +10.9% (1.091-1.127) at 512, +5.6% at 1k, +2.9% at 2k, +0.5%
// (1.003-1.007) at 4k; non-causal +1.0% (1.008-1.011) at 512, -2.1% at 1k. d 128 (block_n 64
// against 128 with ping-pong): causal 0.947 / 0.926 / 0.910 at 512 / 1k / 2k (4 stages: 0.961 /
// 0.902 / 0.897): off. Session 32, d 256 with O split (kSplitO), against these defaults with 512
// (800 launches): non-causal 1.029 at 1k, 1.016 at 2k, so up to 2k (4k's even query blocks run on
// the clusters); causal past 4k: 1.005 at 8k, 0.967 at 16k, so 4k stays.
#ifndef FLASHCUTE_SM90_FWD_D256_SHORT_MASKED_MAX
#define FLASHCUTE_SM90_FWD_D256_SHORT_MASKED_MAX 4096
#endif
#ifndef FLASHCUTE_SM90_FWD_D256_SHORT_FULL_MAX
#define FLASHCUTE_SM90_FWD_D256_SHORT_FULL_MAX 2048
#endif
#ifndef FLASHCUTE_SM90_FWD_D256_SHORT_BLOCK_N
#define FLASHCUTE_SM90_FWD_D256_SHORT_BLOCK_N 64
#endif
#ifndef FLASHCUTE_SM90_FWD_D128_SHORT_MASKED_MAX
#define FLASHCUTE_SM90_FWD_D128_SHORT_MASKED_MAX 0
#endif
#ifndef FLASHCUTE_SM90_FWD_D128_SHORT_BLOCK_N
#define FLASHCUTE_SM90_FWD_D128_SHORT_BLOCK_N 64
#endif
#ifndef FLASHCUTE_SM90_FWD_D128_SHORT_STAGES
#define FLASHCUTE_SM90_FWD_D128_SHORT_STAGES 2
#endif
// d 64: consumer warpgroups (2: block_m 128; 3: block_m 192, 160 registers each).
#ifndef FLASHCUTE_SM90_FWD_D64_WGS
#define FLASHCUTE_SM90_FWD_D64_WGS 3
#endif
// d 64: ping-pong (round-robin turns) among the row's three consumer warpgroups. Session 30
// (ab_steady, bf16, 1000 launches, 2 rounds): non-causal +1.1%, +1.3%, +0.4%, +0.8% at 2k, 4k, 8k,
// 16k keys (every round above 1). Not in the short rows' kernel (FLASHCUTE_SM90_FWD_SHORT_PINGPONG,
// above: four warpgroups, 0.985 / 0.996 at 512 / 1k) nor for masked problems (the row's overlapped
// kernel with ping-pong against block_n_masked's plain one: 0.947, 0.974, 0.988, 0.979 causal
// 2k-16k).
#ifndef FLASHCUTE_SM90_FWD_D64_PINGPONG
#define FLASHCUTE_SM90_FWD_D64_PINGPONG 1
#endif
// d 128: key rows per step (A/B builds).
#ifndef FLASHCUTE_SM90_FWD_D128_BLOCK_N
#define FLASHCUTE_SM90_FWD_D128_BLOCK_N 128
#endif
// K/V pipeline depth of the d 64 and d 128 rows (A/B switches; the rows' 2 measured below).
#ifndef FLASHCUTE_SM90_FWD_D64_STAGES
#define FLASHCUTE_SM90_FWD_D64_STAGES 2
#endif
#ifndef FLASHCUTE_SM90_FWD_D128_STAGES
#define FLASHCUTE_SM90_FWD_D128_STAGES 2
#endif
// d 128: the longest seqlen_k whose plain problems take the early Q release (0: every length; A/B
// builds). Longer ones run the persistent kernel without it (early_q_max_seqlen_k).
#ifndef FLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX
#define FLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX 2048
#endif
// d 64: key rows per step.
#ifndef FLASHCUTE_SM90_FWD_D64_BLOCK_N
#define FLASHCUTE_SM90_FWD_D64_BLOCK_N 128
#endif
// d 64's short_wgs instantiation: consumer warpgroups (0: off), keys per step and K/V stages (A/B
// switches). Session 46 (ab_steady, bf16, 5000 / 2500 launches, 3 rounds): cuDNN's shape there, two
// consumer warpgroups on 128 x 128 tiles (SHORT_WGS=2, SHORT_BLOCK_N=128; 0 spills), read 0.790 /
// 0.815 of the 256 x 64 tiles at causal 512 / 1k and 0.841 / 0.904 non-causal; with HALF_FIRST=1 on
// top ptxas serialized its wgmmas (C7511).
#ifndef FLASHCUTE_SM90_FWD_D64_SHORT_WGS
#define FLASHCUTE_SM90_FWD_D64_SHORT_WGS 4
#endif
#ifndef FLASHCUTE_SM90_FWD_D64_SHORT_BLOCK_N
#define FLASHCUTE_SM90_FWD_D64_SHORT_BLOCK_N 64
#endif
#ifndef FLASHCUTE_SM90_FWD_D64_SHORT_STAGES
#define FLASHCUTE_SM90_FWD_D64_SHORT_STAGES 4
#endif
#ifndef FLASHCUTE_SM90_FWD_D64_SHORT_MASKED_MAX
#define FLASHCUTE_SM90_FWD_D64_SHORT_MASKED_MAX 1024
#endif
// The persistent kernels where only half of O fits beside Q and the K/V stages (d 256's masked short
// tiles) stage O in column chunks through its own buffer, so Q's space is freed before the
// epilogue (fwd_traits.cuh, kSplitO); 0 stages O in Q's space there. Session 32 (ab_steady, bf16,
// 800 launches, 2 rounds): causal 1.058 / 1.044 / 1.013 / 1.051 at 512 / 1k / 2k / 4k, non-causal
// 512 1.071. With the early Q release on top (FLASHCUTE_SM90_FWD_EARLY_Q=1): 1.032 / 1.061 /
// 0.999 / 1.020, 1.077: not taken then; session 49 turned it on with the fast decode (the row, below).
#ifndef FLASHCUTE_SM90_FWD_SPLIT_O
#define FLASHCUTE_SM90_FWD_SPLIT_O 1
#endif
// O's TMA store per consumer warp (the rows' warp_store; -1 keeps the rows', 0 off, 1 on in every
// row's ping-pong kernels): each warp stores its own 16 rows of sO (the rows its stmatrix wrote) with
// its own TMA store, so the epilogue's two warpgroup barriers (the WAR wait on sO and the RAW one
// before the store) become __syncwarp; off: one store per warpgroup (64 rows) after the warpgroup's
// barrier. Varlen problems keep the warpgroup's barriers (their O may take the 128-bit copies, whose
// threads read rows other warps wrote).
#ifndef FLASHCUTE_SM90_FWD_WARP_STORE
#define FLASHCUTE_SM90_FWD_WARP_STORE -1
#endif
// A warpgroup's first key block's S as half a block where its rows see only the first half (the
// rows' half_first; -1 keeps the rows', 0 off, 1 on in every row whose block_n allows it). On at
// d 128 (session 44, ab_steady, H200, 5000 / 2500 / 1200 launches, 4 rounds, against main's
// kernels): causal 512 1.012 bf16 / 1.024 fp16, 1k 1.015 / 1.006, 2k 0.999 / 1.002.
// The persistent plain kernel only: in the non-persistent one ptxas serialized the wgmmas (C7511),
// the softcap/ALiBi kernel spilled 88 bytes. The d 64 row takes the switch too (off by default):
// with it on, its 192 x 128 persistent kernel and the two-warpgroup short tiles of session 46
// serialized the wgmmas (C7511); d 256's rows do not take it.
#ifndef FLASHCUTE_SM90_FWD_HALF_FIRST
#define FLASHCUTE_SM90_FWD_HALF_FIRST -1
#endif
// Q in registers in the short_wgs instantiations (the rows' short_q_regs; -1 keeps the rows', 0 off,
// 1 on in the rows that have with_short_q_regs: d 64's). A 64-key S = Q K^T with both operands in
// smem reads 4 KB per 32 tensor cycles, the 128 bytes per cycle shared memory gives; with Q in
// registers only K's 2 KB. Session 45 (bf16 d 64, ptxas): the 256 x 64 tiles' 112 registers do not
// hold Q's 16 more (96-120 bytes spilled, wgmma serialized: C7512). With D64_SHORT_WGS=3 (192 x 64
// tiles, 160 registers: 0 spills), H200 ab_steady, 3 rounds, against main's 256 x 64 tiles, causal
// 512 / 1k: Q from smem 0.863 / 0.855, Q in registers 0.882 / 0.853 (up to 2k keys: 0.899 at 2k
// against the masked kernel). Off.
#ifndef FLASHCUTE_SM90_FWD_SHORT_Q_REGS
#define FLASHCUTE_SM90_FWD_SHORT_Q_REGS -1
#endif
// The plain loop's first key block in 64-key parts (fwd_traits.cuh, kDiagParts; 0 off, 1 on): the
// only plain-loop kernel it applies to is d 64's masked kernel (192 x 192 tiles; the softcap/ALiBi
// plain-loop kernels keep the whole block), where on a causal diagonal
// warpgroup c's rows see only the block's first c + 1 parts, so S, the softmax and P V skip the
// rest (a third of the diagonal block's work over the tile's three warpgroups). Session 49 (H200,
// ab_steady, bf16, 1200 / 500 / 200 launches, 3 rounds, against main's kernels): causal 2k 1.057
// (1.051-1.057), 4k 1.032 (1.029-1.037), 8k 1.009 (1.008-1.019). On.
#ifndef FLASHCUTE_SM90_FWD_DIAG_PARTS
#define FLASHCUTE_SM90_FWD_DIAG_PARTS 1
#endif
// The plain loop skips the products of a consumer warpgroup whose 64 rows all lie past the
// sequence (fwd_kernel.cuh; 0 off, 1 on): the tile of the last query rows, where seqlen_q leaves
// 64 or more of its block_m rows empty (d 64's 192-row tiles at 2k and 4k keys: one and two of
// the three warpgroups of each head's longest causal tile). The warpgroup only keeps the barriers'
// phases. Session 50 (H200, ab_steady, 3 rounds, against main's kernels): causal 2k 1.030 bf16 /
// 1.035 fp16, 4k 1.030 / 1.026, 8k 1.015 bf16. On.
#ifndef FLASHCUTE_SM90_FWD_SKIP_EMPTY_WG
#define FLASHCUTE_SM90_FWD_SKIP_EMPTY_WG 1
#endif
// The plain loop's first key block masked only from its last computed 64-key part where the
// warpgroup's rows see every key of the parts before it (fwd_kernel.cuh, lead_whole; 0 off, 1 on):
// with DIAG_PARTS, d 64's masked kernel, whose 192 x 192 causal diagonal needs the mask in one part
// per warpgroup, not in the 1, 2 and 3 parts its warpgroups compute. Session 51 (H200, ab_steady, 3
// rounds, against main's kernels): causal 2k 1.017 bf16 / 1.021 fp16, 4k 1.016 / 1.019, 8k 1.010
// bf16. On.
#ifndef FLASHCUTE_SM90_FWD_PART_MASK
#define FLASHCUTE_SM90_FWD_PART_MASK 1
#endif
// The plain loop's key blocks after the tile's first through the sum check (OnlineSoftmax::
// update_sum_check: the exps with the rows' current references and no block max; a masked block's
// -inf scores give p = 0, so its edge blocks take it too; fwd_kernel.cuh, plain_step), as the
// overlapped loop's interior blocks do with its speculative exps (1 on, 0 off): the
// plain-loop kernels without softcap/ALiBi, which is d 64's masked kernel. Each warp then frees K and
// V itself (its rare recompute, a called function, reads K), so the stages' empty barriers count
// warps. H200, ab_steady, 3 rounds, against the block max (bf16 d 64 build: 0 spills): causal 2k
// 1.037, 4k 1.047 (session 53's build) / fp16 1.040, 8k 1.063 / fp16 1.075, 16k 1.081. On since
// session 54, after its fp64 checks (with and without FORCE_RECOMPUTE), compute-sanitizer and
// gpu-check with it on. Only d 64's masked kernel is a plain-loop kernel without a score transform.
#ifndef FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK
#define FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK 1
#endif
// The persistent kernels' K/V stage marked warp-uniform at each tile's start (fwd_kernel.cuh); 0 off
// (an A/B switch).
#ifndef FLASHCUTE_SM90_FWD_UNIFORM_STAGE
#define FLASHCUTE_SM90_FWD_UNIFORM_STAGE 1
#endif
// Q's wgmma descriptors made from lane 0's thread index (fwd_kernel.cuh; never in the cluster kernel,
// where it spilled 8 bytes): -1 at d 128 only, where it was measured to pay (session 41: +2.0%
// non-causal 512, +0.7-1.2% 2k, 1.00 causal 2k); 0 off; 1 at every head dim (A/B switches). d 64 lost
// 1% with it at non-causal 2k; d 256 read +0.4% / +1.1% (2 rounds, non-causal 2k) while its
// non-persistent kernel's R2URs went up (98 -> 133); d 96 and d 192 were not measured.
#ifndef FLASHCUTE_SM90_FWD_UNIFORM_Q_DESC
#define FLASHCUTE_SM90_FWD_UNIFORM_Q_DESC -1
#endif
constexpr bool uniform_q_desc_choice(int head_dim, int cluster) {
  const bool on = FLASHCUTE_SM90_FWD_UNIFORM_Q_DESC < 0 ? head_dim == 128 : FLASHCUTE_SM90_FWD_UNIFORM_Q_DESC != 0;
  return on && cluster == 1;
}
// The tail of the overlapped loop: each row's 1 / sum and LSE computed and stored while the tile's
// last P V runs (EARLY_ROWS), and with O in its own smem the epilogue's first WAR wait on it there
// too (EARLY_WAR); 0 puts them after the P V's wait, as before session 33. Only kernels without
// ping-pong take them (fwd_traits.cuh: kEarlyRows, kEarlyWar): on d 128's ping-pong kernels the rows'
// part lost 2-4% (it competes with the other warpgroup's last softmax); elsewhere -1% to +3%
// (perf-notes, session 33).
#ifndef FLASHCUTE_SM90_FWD_EARLY_ROWS
#define FLASHCUTE_SM90_FWD_EARLY_ROWS 1
#endif
#ifndef FLASHCUTE_SM90_FWD_EARLY_WAR
#define FLASHCUTE_SM90_FWD_EARLY_WAR 1
#endif
// The masked short tiles (per-warpgroup key blocks, persistent, O in its own smem) with Q in
// per-warpgroup slices (fwd_traits.cuh, kWgQ): each consumer warpgroup waits for and frees its own
// 64 rows of Q, which the producer loads just before that warpgroup's first key block, so a
// warpgroup whose rows see fewer keys goes on to the next tile without waiting for the others at
// Q (the K/V ring's stages bound how far ahead it gets). 2: besides, every second tile of a CTA
// hands its rows to the warpgroups in reverse order (warpgroup c takes rows 64 (W - 1 - c)), so
// over two tiles each warpgroup runs both ends of the causal diagonal. 0: one Q for the CTA.
// Session 35 (H200, ab_steady, bf16, 600 launches, 2 rounds; d 64's masked short tiles, the only
// instantiations this reaches): 1 read 1.007 / 1.001 at causal 512 / 1k (the warpgroup with the
// most keys is the same on every tile, so nothing to absorb); 2 read 1.056 (1.050-1.061) and
// 1.022 (1.021-1.024). With 2, the masked short tiles at 2k keys matched the masked kernel (1.001;
// without the reversal they lost 6.8% there in session 21), so D64_SHORT_MASKED_MAX stays 1024.
// Session 35: 2 never finished under compute-sanitizer memcheck (d 64 causal 512, batch 2, 40
// heads, a workspace); a CPU model at warp granularity found the race in the release of skipped key
// blocks (SKIP_SYNC below). Session 36, with the barrier (H200): memcheck on that case (3 seeds) and
// at 700, initcheck, synccheck, racecheck (512 and 700) all clean and quick (0-5 s); 30 fp64 checks
// of the short tiles' shapes pass for 2 and for 2 with 6 or 8 stages; ab_steady (600 launches, 2
// rounds) 1.059 (1.051-1.067) causal 512 and 1.009 (1.004-1.013) 1k against 0; fp16 1.049 and 1.015.
// On; 6 and 8 stages read 1.046 / 1.007 and 1.043 / 1.013, no better than 4 (D64_SHORT_STAGES
// stays). The probe's timeline: the four warpgroups' compute shares 0.60-0.83 with 0, 0.67-0.70 with 2.
#ifndef FLASHCUTE_SM90_FWD_WG_Q
#define FLASHCUTE_SM90_FWD_WG_Q 2
#endif
// Per-warpgroup Q (WG_Q): the producer prefetches each tile's Q into L2 (TMA prefetch) when it
// starts the tile's loads, ahead of the slices' own loads (1: on, 0: off). Session 36's timeline: a
// slice landed 2100-3300 cycles after its load was issued, and issuing it earlier (8 K/V stages)
// did not make it land earlier. Measured (call 6, ab_steady, bf16): 0.998 (0.991-1.005) causal 512,
// 0.992 (0.990-0.994) 1k: the wait is not L2 misses. Off.
#ifndef FLASHCUTE_SM90_FWD_Q_PREFETCH
#define FLASHCUTE_SM90_FWD_Q_PREFETCH 0
#endif
// Session 41 (H200, ab_steady, bf16): Q's wgmma descriptors from lane 0's thread index
// (FLASHCUTE_SM90_FWD_UNIFORM_Q_DESC above; on at d 128 only) against main's kernels: d 128
// non-causal 512 1.020, 2k 1.012 / 1.007 (two runs), causal 2k 1.002 / 0.998; d 64 non-causal 2k
// 0.989 / 0.990, causal 1k 1.009; d 256 non-causal 2k 1.007 (2 rounds).
// Session 40 (H200, ab_steady, bf16, 3 rounds): the persistent kernels' K/V stage marked warp-uniform
// at each tile's start (FLASHCUTE_SM90_FWD_UNIFORM_STAGE, fwd_kernel.cuh) against main's kernels:
// d 64 non-causal 2k 1.043 (1.038-1.044), causal 1k 1.001; d 128 non-causal 512 / 2k / 4k 1.003 /
// 1.010 / 1.012, causal 2k 1.007. L2 policies on the TMA loads (K/V EVICT_LAST, Q EVICT_FIRST; not on
// main, patch in bench/results/2026-11-29-h200-session40/): 0.986-1.002 at d 128.
// Session 39 (H200, ab_steady, bf16): O's TMA store per consumer warp (the rows' warp_store, on at
// d 128) against main's kernels, 5 rounds: 1.031 (1.021-1.038) non-causal 4k, 0.993 / 1.000 at 512 /
// 1k, causal 0.990 / 1.001 / 0.996 at 512 / 1k / 2k; 3 rounds: 1.006 at 2k (1.009-1.022 in two
// earlier calls against a base build). Its first form, in every kernel, spilled 4-48 bytes in five
// d 64 kernels and read 0.940 at d 64 causal 512, so the other rows keep one store per warpgroup.
// Three consumer warpgroups at d 128 (192 x 128 tiles, 160 registers: the overlapped loop spills 444
// bytes, so the plain loop; not on main, patch in bench/results/2026-11-29-h200-session39/):
// 0.81-0.96.
// Session 38 (H200, ab_steady, bf16; not on main, patch in bench/results/2026-11-29-h200-session38/):
// the overlapped loop carried across a CTA's tiles (a tile's last P V in one turn with the next
// tile's first S, the epilogue after it) 0.877-1.010, 0.902 at d 128 non-causal 512; session 37's two Q
// buffers and first S outside the turns together 0.991-1.010.
// Session 37 (H200, ab_steady, bf16; not on main, patches in
// bench/results/2026-11-29-h200-session37/): two Q buffers in the persistent kernels, each tile's Q
// loaded at the start of its loads, read 0.985-1.010 at d 64 / d 128, 512-4k keys; O stored under the
// next tile's first S 0.88-1.00 (with spills); a tile's first S outside the ping-pong turns
// 0.977-1.010.
// Per-warpgroup key blocks with one K/V release per warpgroup (d 64's masked short tiles): a
// warpgroup barrier before each release of a block the warpgroup skips, so that no warp is still to
// wait for the stage when it is refilled (fwd_kernel.cuh; without it a lagging warp's parity wait
// can refer to a phase two fills back and hang: session 35's CPU model found it, in every mode of
// WG_Q). -1: with WG_Q only (whose reversed rows make the skipping warpgroup the stage's last
// releaser, so the refill comes at once); 1: also on the one-Q kernel (WG_Q 0), where the same
// drift between a warpgroup's warps has never been seen to happen; 0: never. Session 36 (H200):
// 1 on the one-Q kernel was sanitizer-clean and passed its 30 fp64 checks but read 1.017 / 0.975
// (0.962-0.988) at causal 512 / 1k against -1, so -1 stays: the default kernel (WG_Q 2) has it.
#ifndef FLASHCUTE_SM90_FWD_SKIP_SYNC
#define FLASHCUTE_SM90_FWD_SKIP_SYNC -1
#endif
// The same stages freed without the warpgroup barrier: the kernels with one release per warpgroup
// and per-warpgroup key blocks count one empty-barrier arrival per consumer warp; a computed
// block's stage is freed by the warpgroup's thread 0 with its four warps' arrivals at once (after
// the wgmma, where the warps met), a skipped block's by each warp's lane 0 after that warp saw the
// stage land. No stage is refilled before every warp of a skipping
// warpgroup saw it land, so no parity wait can refer to a later fill (session 47's CPU model,
// bench/results/2026-12-02-h200-session47/skip_free_model.py, mode "warp"). The producer freeing
// skipped stages for the warpgroups instead deadlocks there (mode "free"): a skipping warp's wait
// for a stage can then come after its refill. -1: where the skip loop has no barrier (SKIP_SYNC off:
// the kernels without per-warpgroup Q, d 256's masked short tiles); 1: also in place of the barrier
// (d 64's short tiles: session 47, H200, ab_steady, bf16, 3 rounds, against the barrier: causal 512
// 1.005 (1.004-1.011), 1k 0.997 (0.996-0.999), non-causal 512 0.998: not taken); 0: never (then one
// release per warpgroup there is a compile error, fwd_kernel.cuh).
#ifndef FLASHCUTE_SM90_FWD_SKIP_WARP
#define FLASHCUTE_SM90_FWD_SKIP_WARP -1
#endif
// Every row's early_q_release (-1 keeps the rows'; 0 off; 1 on), not where a row keeps it off in its
// softcap/ALiBi kernel (d 128: that kernel spills 16 bytes with it), and up to the row's
// early_q_max_seqlen_k keys where it has one (d 128: FLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX).
#ifndef FLASHCUTE_SM90_FWD_EARLY_Q
#define FLASHCUTE_SM90_FWD_EARLY_Q -1
#endif
constexpr bool early_q_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_EARLY_Q, measured); }
constexpr bool warp_store_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_WARP_STORE, measured); }
constexpr bool half_first_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_HALF_FIRST, measured); }
constexpr bool short_q_regs_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_SHORT_Q_REGS, measured); }
constexpr bool main_q_regs_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_MAIN_Q_REGS, measured); }
// Every row's fast_decode (-1 keeps the rows'; 0 off; 1 on). Session 29 (d 128, bf16): the
// consumers' ring read -> tile start 897 -> 555 cycles, the gap between tiles 1114 -> 770; A/B
// (ab_steady, 500 launches, 2 rounds) 1.005 non-causal 512, 1.030 (1.022-1.037) causal 1k, 0.999-1.003
// at causal 512, non-causal 1k and 2k, causal 2k. Session 30 (ab_steady, 2000 launches, 2 rounds):
// d 64 +2.9% (1.023-1.034) non-causal 2k, +2.5% (1.016-1.035) causal 512, 0.985-1.015 at 512 / 1k
// non-causal and 1k / 2k causal; with the turns, against c218195 (1500 launches): +3.0% non-causal
// 2k, +0.8% at 4k / 8k, 0.999-1.000 at 512 / 1k, causal 0.992 at 512 (the +2.5% did not repeat),
// 1.007 at 1k, 0.994 at 2k. On, but not in its softcap/ALiBi persistent kernel (spilled 40 bytes
// with it, bf16 and fp16); d 256 0.984-0.989 causal 1k, 0.987-0.991 non-causal 512, 0.993-1.042
// elsewhere at 512-4k: off. The forced value sets both kernels.
#ifndef FLASHCUTE_SM90_FWD_FAST_DECODE
#define FLASHCUTE_SM90_FWD_FAST_DECODE -1
#endif
constexpr bool fast_decode_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_FAST_DECODE, measured); }
// Every row's spec_exp (-1 keeps the rows'; 0 off; 1 on).
#ifndef FLASHCUTE_SM90_FWD_SPEC_EXP
#define FLASHCUTE_SM90_FWD_SPEC_EXP -1
#endif
constexpr bool spec_exp_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_SPEC_EXP, measured); }
// The overlapped kernels' softmax tests the lazy threshold on each thread's own row maxima before the
// quad's shuffles (SoftmaxPolicy::local_max_check; 1 on, 0 off for A/B builds; the plain-loop kernels
// keep the shuffles: d 64's masked kernel spilled 88 bytes with the test). Measured (session 26,
// ab_steady, bf16, 1000 launches, 2 rounds, against the shuffles on every block): d 128 +1.1% / +1.5%
// / +1.0% non-causal at 512 / 2k / 8k, causal +2.2% at 512, +0.9% at 8k; d 64 non-causal 8k +2.7%,
// causal 1k +6.2%; d 256 non-causal 8k +0.7%.
#ifndef FLASHCUTE_SM90_FWD_LOCAL_MAX_CHECK
#define FLASHCUTE_SM90_FWD_LOCAL_MAX_CHECK 1
#endif
constexpr bool local_max_check_choice() { return FLASHCUTE_SM90_FWD_LOCAL_MAX_CHECK != 0; }
// The speculative-exp loop's interior key blocks (every key visible to every row of the tile) test
// each thread's row sums of p instead of taking the block max (OnlineSoftmax::update_sum_check; 1 on,
// 0 off for A/B builds). Measured (session 27, ab_steady, bf16 d 128, 1000 launches, 2 rounds, against
// the block max on every block): non-causal +5.5% / +3.6% / +3.8% at 2k / 8k / 16k, causal +2.7% /
// +2.1% at 2k / 8k, 512 within +-1.2%.
#ifndef FLASHCUTE_SM90_FWD_SUM_CHECK
#define FLASHCUTE_SM90_FWD_SUM_CHECK 1
#endif
constexpr bool sum_check_choice() { return FLASHCUTE_SM90_FWD_SUM_CHECK != 0; }
// The speculative recompute's score coordinates from an opaque thread index made inside its branch
// (1, non-persistent kernels), or from the kernel's (0: ptxas computes every score's smem offset at
// each tile's start, ~320 instructions, and keeps some of them live through the loop). Measured
// (session 28, ab_steady, d 128, against 0): bf16 non-causal 8k +2.5%, +1.6%, +0.9-2.2% (three
// calls; the last a range over rounds), 16k +2.1%, then 0.989-1.005; causal 8k 0.995, then +1.0-1.1%; fp16 non-causal 8k +1.4%,
// causal 8k +1.4%. In the persistent kernels (up to 4k keys) 0.98-1.01, fp16 causal 2k 0.976: those
// keep 0.
#ifndef FLASHCUTE_SM90_FWD_RECOMPUTE_OPAQUE
#define FLASHCUTE_SM90_FWD_RECOMPUTE_OPAQUE 1
#endif
constexpr bool recompute_opaque_choice() { return FLASHCUTE_SM90_FWD_RECOMPUTE_OPAQUE != 0; }
// Check builds only: every speculative step recomputes S and runs the exact update (the recompute's
// own test; 0 in every shipped build).
#ifndef FLASHCUTE_SM90_FWD_FORCE_RECOMPUTE
#define FLASHCUTE_SM90_FWD_FORCE_RECOMPUTE 0
#endif
// cluster_min_seqlen_k of the d 128 and d 256 rows (-1 keeps the rows'; 0 off; N > 0 from N keys).
#ifndef FLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K
#define FLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K -1
#endif
constexpr int cluster_choice(int measured) {
  return FLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K < 0 ? measured : FLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K;
}
// Probe builds: 1 = every SM90 forward kernel writes clock64 stamps at a few points of each tile
// (producer: tile start, Q issued, last V issued; each consumer warpgroup: tile start, its wait for
// Q returned, first S issued, first S complete, last P V complete, epilogue done) to a buffer the
// launcher owns, dumped after each launch to the file named by FLASHCUTE_TIMELINE_OUT
// (bench/tile_timeline.py reads it). Never on in a release build.
#ifndef FLASHCUTE_SM90_FWD_TIMELINE
#define FLASHCUTE_SM90_FWD_TIMELINE 0
#endif
// Stamps per (CTA, tile): 0-2 producer, 3 the SM's id, then kTimelineWgSlots per consumer warpgroup
// from slot 4 for the first kTimelineWgs of them (4-15 warpgroup 0, 16-27 warpgroup 1, ...). Each
// warpgroup's: tile start, Q's wait returned, first S issued, first S complete, last P V complete,
// epilogue done, then inside the epilogue and before the tile: finalize and LSE stored, O in smem,
// O's barrier passed, the tile index read from the ring, sO's WAR barrier passed.
inline constexpr int kTimelineWgSlots = 12;
inline constexpr int kTimelineWgs = 4;  // d 64's short tiles have four (32-slot dumps before session 36: 2)
inline constexpr int kTimelineSlots = 4 + kTimelineWgs * kTimelineWgSlots + 4;
// kWgQ kernels: the last four slots are the producer's issue of warpgroup c's Q slice (after its
// wait for the slice's space); slot 1 (Q issued) stays 0 there.
inline constexpr int kTimelineQSlot = 4 + kTimelineWgs * kTimelineWgSlots;
inline constexpr int kTimelineMaxTiles = 64;  // CTA-local tiles recorded
// Every row's block_n_masked (-1 keeps the rows'; 0 turns the masked kernel off).
#ifndef FLASHCUTE_SM90_FWD_BLOCK_N_MASKED
#define FLASHCUTE_SM90_FWD_BLOCK_N_MASKED -1
#endif
constexpr int block_n_masked_choice(int measured) {
  return FLASHCUTE_SM90_FWD_BLOCK_N_MASKED < 0 ? measured : FLASHCUTE_SM90_FWD_BLOCK_N_MASKED;
}
// Every row's masked_max_seqlen_k (-1 keeps the rows').
#ifndef FLASHCUTE_SM90_FWD_MASKED_MAX_SEQLEN_K
#define FLASHCUTE_SM90_FWD_MASKED_MAX_SEQLEN_K -1
#endif
constexpr int masked_limit_choice(int measured) {
  return FLASHCUTE_SM90_FWD_MASKED_MAX_SEQLEN_K < 0 ? measured : FLASHCUTE_SM90_FWD_MASKED_MAX_SEQLEN_K;
}
// Every row's masked_full_min_seqlen_k (-1 keeps the rows'; 0 sends unmasked problems back to the
// overlapped kernels).
#ifndef FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K
#define FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K -1
#endif
constexpr int masked_full_min_choice(int measured) {
  return FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K < 0 ? measured : FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K;
}
// Softmax policy (common/softmax.cuh) and launch-shape switches for A/B builds; -1 keeps the rows'
// values where a row has one. The lazy-rescale threshold of every row; the fused exponent (0/1);
// d 64's share of exp2s on the FMA units (every Nth; 0: none); d 128's key step for unmasked plain
// problems (0: block_n) and its share of FMA-unit exp2s.
#ifndef FLASHCUTE_SM90_FWD_RESCALE_THRESHOLD
#define FLASHCUTE_SM90_FWD_RESCALE_THRESHOLD -1
#endif
constexpr int rescale_threshold_choice(int measured) {
  return FLASHCUTE_SM90_FWD_RESCALE_THRESHOLD < 0 ? measured : FLASHCUTE_SM90_FWD_RESCALE_THRESHOLD;
}
#ifndef FLASHCUTE_SM90_FWD_FUSED_EXP2
#define FLASHCUTE_SM90_FWD_FUSED_EXP2 -1
#endif
constexpr bool fused_exp2_choice(bool measured) { return measured_or_forced(FLASHCUTE_SM90_FWD_FUSED_EXP2, measured); }
#ifndef FLASHCUTE_SM90_FWD_D64_POLY_EVERY
#define FLASHCUTE_SM90_FWD_D64_POLY_EVERY 0
#endif
#ifndef FLASHCUTE_SM90_FWD_D128_BLOCK_N_FULL
#define FLASHCUTE_SM90_FWD_D128_BLOCK_N_FULL 0
#endif
// Every Nth exp2 of d 128's softmax on the FMA pipe (0 off). Measured against the landed kernels
// (ab_steady, bf16): session 19, N = 8: 0.975-0.989; session 27, with the sum check (block max off
// the interior blocks' path): N = 8 0.955 / 0.970 / 0.991, N = 16 0.968 / 0.983 / 1.005 at
// non-causal 2k / non-causal 8k / causal 8k.
#ifndef FLASHCUTE_SM90_FWD_D128_POLY_EVERY
#define FLASHCUTE_SM90_FWD_D128_POLY_EVERY 0
#endif
// TileOrder's group under the dynamic scheduler for problems with no causal mask or window (those
// take the row's masked_tile_group where it has one; batch x head indices whose query blocks are
// dealt together, longest first): N > 0 = N, 0 = as many as keep their K and V within half of L2
// (fwd.cuh; what the static deal always uses). Measured (H100, bf16, d 64/128, 3 rounds; perf-notes
// "Session 9"): 1 and 2 ahead of the L2-sized group by 1-10% at 512-4k keys; 1 taken.
#ifndef FLASHCUTE_SM90_FWD_DYNAMIC_TILE_GROUP
#define FLASHCUTE_SM90_FWD_DYNAMIC_TILE_GROUP 1
#endif
// masked_tile_group's limit on seqlen_k (measured: groups of 2 or 4 lost 2-2.5% at 16k keys, d 128
// and d 256 causal, where groups of one leave no long tail).
inline constexpr int64_t kMaskedTileGroupMaxSeqlenK = 8192;
// Every row's masked_tile_group (-1 keeps the rows').
#ifndef FLASHCUTE_SM90_FWD_MASKED_TILE_GROUP
#define FLASHCUTE_SM90_FWD_MASKED_TILE_GROUP -1
#endif
constexpr int masked_tile_group_choice(int measured) {
  return FLASHCUTE_SM90_FWD_MASKED_TILE_GROUP < 0 ? measured : FLASHCUTE_SM90_FWD_MASKED_TILE_GROUP;
}
// The dynamic scheduler's limit: 1 = every problem (given a workspace), 0 = none, -1 = the rows'.
#ifndef FLASHCUTE_SM90_FWD_DYNAMIC
#define FLASHCUTE_SM90_FWD_DYNAMIC -1
#endif
constexpr int dynamic_limit_choice(int measured) {
  return FLASHCUTE_SM90_FWD_DYNAMIC < 0 ? measured : (FLASHCUTE_SM90_FWD_DYNAMIC != 0 ? 0x7fffffff : 0);
}
// Session 42 (H200, ab_steady, bf16, 700 launches, 2 rounds; every plain problem on the dynamic
// scheduler against the rows' limits): d 64 non-causal 4k / 8k / 16k 1.029 / 1.014 / 1.010; d 128
// non-causal 8k / 16k 1.011 / 0.993, causal 8k / 16k 1.013 / 0.994; unchanged rows (d 128
// non-causal 4k, d 64 causal 8k) 0.996 / 1.004. So the rows' dynamic_plain_max_seqlen_k: d 64 16384,
// d 128 8192 (the measured range; the softcap/ALiBi kernels were not measured and keep the rows'
// dynamic_max_seqlen_k).

// Two pipeline stages everywhere. block_n is bounded by the consumer register budget (acc_o is d/2
// fp32 registers per thread, S is block_n/2, P block_n/4) and by 227 KB of shared memory.
// Measured (H100, bf16, TFLOP/s; docs/perf-notes.md, "SM90 switches" and "SM90: three consumer
// warpgroups at d 64, block_n 80 at d 256, persistent below 2k keys"):
// - d 64: overlap (ping-pong of two warpgroups on top was 7-9% slower; round-robin turns among the
//   three of today's row +0.4-1.3% non-causal from 2k keys, session 30). Three consumer warpgroups
//   (block_m 192) over two: 8k 438 -> 488 non-causal, 409 -> 430 causal, 2k +9% / -1%, but 512 and
//   1k causal -10%; with the persistent kernel below 2k keys those rows are +6% over two warpgroups.
// - d 128: overlap + ping-pong (596 -> 669 / 542 -> 611 at 8k over the plain loop).
// - d 256: block_n 80 with the overlapped loop: 8k 651 -> 796 non-causal, 571 -> 699 causal, +9-23%
//   at 512-2k over block_n 64 with the plain loop (block_n 80 with the plain loop: +3%). The
//   softcap/ALiBi kernel keeps the plain loop (the overlapped one spilled there at block_n 64).
// - Persistent (early Q release, O in its own smem where it fits, rounds dealt in alternating
//   order): d 64 +7-18% at 512 and 1k keys, d 128 +2-6% at 1k; from 2k keys it lost 1-23% (worst on
//   long causal rows), so rows use it only up to 1k keys. At d 256 (O shares Q's space) it lost.
// - d 96 and d 192 were not re-measured: d 96 keeps two warpgroups and d 192 follows d 128's loop;
//   d 192's softcap/ALiBi kernel runs the plain loop since 2026-11-25 (the overlapped one spilled 16
//   bytes on sm_90a, nvcc 13.0; its speed was not measured either way).
// - Softmax (session 5, interleaved A/B of prebuilt binaries, 3 rounds, bf16, seqlen 1k/2k/8k):
//   the lazy rescale (threshold 8) alone: d 128 +2-6%, d 256 -0.5% to +5%, d 64 -4% to +2%; with
//   the fused FFMA exponent on top: d 64 +0-11% over the exact form (8k 497 -> 552), but at d 128 /
//   d 256 no better than the threshold alone and 3% worse at d 256 1k (ranges apart), so fused was
//   d 64's only. Session 17 (bench/ab_steady.py: 2000 launches per phase at the power cap, 2 rounds)
//   read d 128 +1.9% (1.008-1.029) non-causal 8k and +0.7% (1.002-1.011) causal 8k, and d 128 took
//   it; d 96, d 192 and d 256 were not re-measured and keep the exact form. FMA-unit exp2s at d 64
//   (1 in 8: -5-8% against the fused form; 1 in 4: worse), at d 128 (1 in 8, session 19, ab_steady:
//   0.980 non-causal 8k, 0.975 causal 8k, 0.989 non-causal 2k) and block_n_full 176 at d 128 (-2%
//   to +1%) did not pay and stay off, as did the non-persistent kernel on the TileOrder grid with
//   L2-sized groups for every problem (-1% to -7%; the switch was removed in session 11, after the
//   measurement below).
// - Dynamic scheduler (session 9; given a workspace, TileOrder group 1, against the dispatch without
//   one, median of 3 rounds): d 64 non-causal +6%, +4%, +0% at 512, 1k, 2k keys, then -5% to -10%;
//   causal +8%, +9%, +11% at 512-2k, +2% at 4k, then -5% and -11%; d 128 non-causal +11%, +9%, +9%,
//   +4% at 512-4k, +1% at 8k, -1% at 16k; causal +8%, +5%, +6% at 512-2k, -1%, +0%, -2% at 4k-16k;
//   d 256 (L2-sized group) -9% to +2%. So up to 2k keys at d 64 and 4k at d 128; d 96 and d 192
//   not measured (off). Session 14, d 256 with groups of 1 (causal: masked_tile_group): +3.4%,
//   +1.9%, +1.1%, +0.8% non-causal at 512-4k, causal +0.9%, +0.8%, +1.8%, +3.3%, 8k-16k within
//   noise; so up to 4k keys at d 256.
// - block_n_masked (session 10, 3 rounds, bf16, against the rows' kernels): d 64 with 192 keys per
//   step on the plain loop, for every problem: causal +8%, +10%, +11% at 512, 1k, 2k keys, within
//   +-2% at 4k-16k causal and 8k-16k non-causal, non-causal -10% / -8% / -4% at 512 / 1k / 4k; so
//   masked plain problems up to 2k keys only (persistent; Fwd::run). Two consumer warpgroups
//   (+9-10% causal 512 / 1k, -4% at 2k, -5% to -20% elsewhere) lost to it; d 128 at 192 keys lost
//   5-25% with either loop, so its row keeps 0. (The static deal, used without a workspace, was not
//   measured with this kernel at 2k keys.)
// - masked_tile_group (session 11, 3 rounds, bf16, the non-persistent kernel's causal rows): groups
//   of 4 heads on the TileOrder grid against groups of 1 (the 3-D grid's order): d 64 +7%, +4%, +3%
//   at 4k, 8k, 16k keys; d 128 +4% at 8k, -2% at 16k; d 256 +2%, +8%, +6%, -2.5% at 2k, 4k, 8k,
//   16k; groups of 2 gained less at d 64 / d 256 and the same at d 128. Hence groups of 4 up to 8k
//   keys (kMaskedTileGroupMaxSeqlenK) on these three rows; d 96 and d 192 not measured (off). The
//   L2-sized group for every problem lost 4% at d 128 causal 16k and 5% at d 64 non-causal 8k.
//   Session 12: the same groups of 4 on the dynamic scheduler (causal and windowed problems; groups
//   of FLASHCUTE_SM90_FWD_DYNAMIC_TILE_GROUP otherwise): d 128 causal 2k +2%, 4k +6-8% (two A/Bs),
//   512 / 1k and d 64's masked kernel up to 2k within +-0.5%.
// - masked_max_seqlen_k (session 14, 3 rounds, bf16, d 64 causal, against the 128-key overlapped
//   kernel that ran these rows): given a workspace (dynamic) +10%, +5%, +2% at 4k, 8k, 16k keys;
//   without one, on one CTA per tile, +0%, +0%, +5% (the static deal there: -9%, -21%, -20%, session
//   13). Hence 16k at d 64.
// - Three K/V stages (session 16, H100, bf16, scripts/ab-cli against two; FLASHCUTE_SM90_FWD_D64_STAGES
//   / _D128_STAGES): d 128 0.89-0.96 at 512-4k keys (its persistent kernel no longer has room for
//   O's own space: 224 KB of tiles) and within the noise at 8k-16k; d 64 0.96-1.02 on every row in a
//   5-round A/B (a 3-round one read +2-5% causal, inside that run's ranges). Four at d 64: causal
//   -4% to -16% (the masked kernel spilled 48 bytes). Two stay.
// - d 64 at 192 keys per step on the overlapped loop with P through smem (stmatrix, then P V with
//   both operands in smem: FlashAttention-3's non-causal d 64 shape; session 19, branch
//   sm90-p-smem, ab_steady, bf16): 0.70-0.73 of the rows' kernels at non-causal 4k-16k, 0.79-0.86 at
//   512-2k (persistent), with a warpgroup barrier or a __syncwarp before the product alike. Not taken.
//   Two consumer warpgroups with ping-pong (FLASHCUTE_SM90_FWD_D64_WGS=2, _PINGPONG=1): 0.85-0.97 at
//   512-8k, causal and not; and the third warpgroup of a query block with no rows skipping its
//   products under a branch: ptxas serialized the wgmma (C7514), 0.81-0.87 non-causal. Not taken.
// - d 64 short rows (session 21, ab_steady, bf16, 1500 launches, 3 rounds): four consumer warpgroups
//   on 256 x 64 tiles (112 registers each; 96 keys spilled 292 bytes), 4 stages: non-causal 512 +7.7%,
//   1k +3.1% over the 192-row kernel (2 stages +3.6% / +3.7%, 3 stages +7.0% / +3.3%); at 2k, where
//   192-row tiles pad 3%, the four warpgroups read 0.95-0.99, so short_pays asks for 5% less padding.
//   Causal, with each warpgroup skipping the key blocks its own rows mask (wg_key_blocks), over the
//   masked kernel: +12.8% at 512, +10.0% at 1k, -6.8% at 2k, so up to 1k keys. Without the skip the
//   same tiles read +0.5% / +2.4% (session 21's first A/B). The skip's code in the non-causal kernel
//   cost 1.7% at 512, so that kernel is built without it.
// - Clusters of two CTAs sharing K/V by TMA multicast (session 22, ab_steady, bf16, 1000-1500
//   launches, 2-3 rounds; FLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K): d 256 non-causal +2.6%
//   (1.025-1.026) at 8k keys, +1.4% (1.011-1.015) at 16k; without a workspace (the cluster kernel at
//   every length) against the dynamic persistent kernel +1.6% (1.014-1.022) at 4k, +0.8%
//   (0.999-1.012) at 2k, so from 4k keys. d 128 +0.3% at 8k and +0.5% at 16k over two rounds (one
//   read -0.3%), and 1.5% slower at ncu's locked clock: not taken.
// - Early Q release (session 22, ab_steady, bf16, 1000 launches, 2 rounds; FLASHCUTE_SM90_FWD_EARLY_Q):
//   the persistent overlapped kernels freeing Q's space after a tile's last S = Q K^T: d 64
//   non-causal +4.2% (1.038-1.045) at 512, +3.0% (1.025-1.035) at 2k; d 128 non-causal 0.993, 0.983
//   (0.982-0.984), 1.006 at 512, 1k, 2k, causal 1.023 at 512, 0.997 at 2k. So d 64 only then; d 128
//   up to 2k keys since session 74 (its row, below).
// - Speculative exps (session 23, ab_steady, bf16, 1000 launches, 2 rounds; FLASHCUTE_SM90_FWD_SPEC_EXP):
//   d 128 non-causal +3.6%, +3.3%, +3.3%, +3.9%, +2.2%, -0.6% at 8k, 16k, 4k, 2k, 1k, 512 keys;
//   causal +0.8% at 8k, -0.2% at 2k, +1.0% at 512. d 64 (682 bytes) and d 256 (148-168 bytes) spill
//   with it: off there (d 64 with a recompute that fits: -2.1% at 512, +1.3% at 8k; not taken).
// ptxas (nvcc 13.0, sm_90a): 0 spills in every instantiation.
constexpr FwdTileConfig kFwdTileConfigs[] = {
    // d, block_m, block_n, stages, consumer warpgroups,
    //     overlap, pingpong, persistent up to seqlen_k, wg_release, transform_overlap,
    //     exp2_poly_every, rescale_threshold, fused_exp2, block_n_full, dynamic up to seqlen_k,
    //     block_n_masked, masked_tile_group, masked kernel up to seqlen_k, short_wgs, short_block_n,
    //     short_stages, short kernel for masked problems up to seqlen_k
    // 88 KB (+24 KB O, persistent)
    with_masked_full(with_half_first(with_short_q_regs(with_dynamic_plain(with_spec_exp(with_fast_decode(with_early_q({64, 64 * FLASHCUTE_SM90_FWD_D64_WGS, FLASHCUTE_SM90_FWD_D64_BLOCK_N, FLASHCUTE_SM90_FWD_D64_STAGES, FLASHCUTE_SM90_FWD_D64_WGS,
     overlap_choice(true),
     /*session 30, round-robin turns:*/ pingpong_choice(overlap_choice(true), FLASHCUTE_SM90_FWD_D64_PINGPONG != 0),
     persistent_limit_choice(1024),
     wg_release_choice(true), /*the overlapped loop spills at 160 registers:*/ FLASHCUTE_SM90_FWD_D64_WGS == 2,
     FLASHCUTE_SM90_FWD_D64_POLY_EVERY, rescale_threshold_choice(8), fused_exp2_choice(true), 0,
     dynamic_limit_choice(2048), block_n_masked_choice(192), masked_tile_group_choice(4), masked_limit_choice(16384),
     /*short rows: 256 x 64 tiles (112 registers, 0 spills; 96 keys spilled 292 bytes):*/
     FLASHCUTE_SM90_FWD_D64_SHORT_WGS, FLASHCUTE_SM90_FWD_D64_SHORT_BLOCK_N, FLASHCUTE_SM90_FWD_D64_SHORT_STAGES,
     FLASHCUTE_SM90_FWD_D64_SHORT_MASKED_MAX},
                 /*session 22: +4.2% non-causal 512, +3.0% 2k:*/ early_q_choice(true), early_q_choice(true)),
                 /*session 30: +2.9-3.0% non-causal 2k:*/ fast_decode_choice(true),
                 /*its softcap/ALiBi persistent kernel spilled 40 bytes:*/ fast_decode_choice(false)),
                 /*spills with it (session 43; FLASHCUTE_SM90_FWD_SPEC_EXP=1 builds it):*/ spec_exp_choice(false)),
                 /*session 42: +1.0-2.9% non-causal 4k-16k:*/ dynamic_limit_choice(16384)),
                 /*session 45: the 256 x 64 tiles' registers do not hold Q (C7512):*/ short_q_regs_choice(false)),
                 /*not measured on the 256 x 64 tiles, whose 64-key blocks are never half empty for a
                   warpgroup:*/ half_first_choice(false)),
                 /*session 65 (H100, ab_steady, bf16, 3 rounds, a workspace given): over the overlapped
                   kernels at non-causal 4k / 8k / 16k 1.055 / 1.019 / 1.060:*/ masked_full_min_choice(4096)),
    {96, 128, 128, 2, 2,  // 120 KB; 96 % 64 != 0: 64-byte swizzle atoms
     overlap_choice(true), pingpong_choice(overlap_choice(true), false), persistent_limit_choice(0),
     wg_release_choice(true), true, 0, rescale_threshold_choice(8), fused_exp2_choice(false), 0,
     dynamic_limit_choice(0), block_n_masked_choice(0), masked_tile_group_choice(0)},
    with_main_q_regs(with_half_first(with_dynamic_plain(with_warp_store(with_short_masked(with_fast_decode(with_early_q(with_spec_exp(with_cluster({128, 128, FLASHCUTE_SM90_FWD_D128_BLOCK_N, FLASHCUTE_SM90_FWD_D128_STAGES, 2,  // 160 KB (+32 KB O, persistent)
                  overlap_choice(true), pingpong_choice(overlap_choice(true), true), persistent_limit_choice(1024),
                  wg_release_choice(true), true, FLASHCUTE_SM90_FWD_D128_POLY_EVERY, rescale_threshold_choice(8),
                  fused_exp2_choice(true), FLASHCUTE_SM90_FWD_D128_BLOCK_N_FULL, dynamic_limit_choice(4096),
                  block_n_masked_choice(0), masked_tile_group_choice(4)},
                 /*clusters: +0.3% / +0.5% at 8k / 16k, within the noise:*/ cluster_choice(0)),
                  /*session 23: +3.3-3.9% non-causal 2k-16k:*/ spec_exp_choice(true)),
                 /*session 73 (H100, bf16, ab_steady, 2 rounds, against it off): 1.014 / 1.020 non-causal /
                   causal 512, 1.012 / 1.014 1k, 1.002 / 1.005 2k (fp16 512: 1.023 / 1.009); but 0.975
                   causal 4k, 0.994-1.001 at 4k / 8k, so up to 2k keys (session 74, this tree: GPU
                   tests pass; 1.005-1.030 at 512-2k, causal 4k 1.001 at the locked clock):*/
                 early_q_choice(true), /*its softcap/ALiBi persistent kernel spilled 16 bytes:*/ false,
                 FLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX),
                 /*session 29: +0.5% non-causal 512, +3.0% causal 1k:*/ fast_decode_choice(true),
                 fast_decode_choice(true)),
                 FLASHCUTE_SM90_FWD_D128_SHORT_BLOCK_N, FLASHCUTE_SM90_FWD_D128_SHORT_STAGES,
                 FLASHCUTE_SM90_FWD_D128_SHORT_MASKED_MAX),
                 /*session 39: +3.1% non-causal 4k, +0.6-1.4% 2k:*/ warp_store_choice(true)),
                 /*session 42: +1.1% non-causal 8k, +1.3% causal 8k; 0.99 at 16k:*/ dynamic_limit_choice(8192)),
                 /*session 44: +1.2% / +2.4% causal 512, +1.5% / +0.6% 1k (bf16 / fp16), 1.00 at 2k:*/
                 half_first_choice(true)),
                 /*session 71 (H100, bf16 / fp16, against main): 0.981-1.012 at ncu's locked clock,
                   0.980-1.010 at the power cap; the tensor pipe was already 88-91% busy:*/
                 main_q_regs_choice(false)),
    {192, 128, 96, 2, 2,  // 192 KB; acc_o 96 + S 48 registers
     overlap_choice(true), pingpong_choice(overlap_choice(true), true), persistent_limit_choice(0),
     wg_release_choice(true), /*the overlapped loop spills 16 bytes with softcap/ALiBi:*/ false, 0,
     rescale_threshold_choice(8), fused_exp2_choice(false), 0, dynamic_limit_choice(0),
     block_n_masked_choice(0), masked_tile_group_choice(0)},
    // 224 KB; acc_o 128 + S 40 registers (the masked short tiles: 192 KB, S 32)
    with_short_masked(with_early_q(with_fast_decode(with_cluster({256, 128, FLASHCUTE_SM90_FWD_D256_BLOCK_N, 2, 2, overlap_choice(true), false, persistent_limit_choice(0),
                  wg_release_choice(false), /*transform_overlap=*/false, 0, rescale_threshold_choice(8),
                  fused_exp2_choice(false), 0, dynamic_limit_choice(4096), block_n_masked_choice(0),
                  masked_tile_group_choice(4)},
                 cluster_choice(4096)),
                 /*session 30 (H100): 0.984-0.989 causal 1k, 0.987-0.991 non-causal 512; session 49 (H200),
                   with the early Q release, below:*/ fast_decode_choice(true),
                 fast_decode_choice(true)),
                 /*session 49 (H200, ab_steady, 5000 / 2500 launches, 3 rounds), with the fast decode, against
                   both off: bf16 causal 512 1.016, 1k 1.019; fp16 causal 512 1.002, 1k 1.017, non-causal 512
                   1.006 (each alone in fp16: early Q 0.995-0.996 in session 48, fast decode 0.996-0.999):*/
                 early_q_choice(true), early_q_choice(true)),
                 FLASHCUTE_SM90_FWD_D256_SHORT_BLOCK_N, 2, FLASHCUTE_SM90_FWD_D256_SHORT_MASKED_MAX,
                 FLASHCUTE_SM90_FWD_D256_SHORT_FULL_MAX),
};

constexpr FwdTileConfig fwd_tile_config(int head_dim) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    if (c.head_dim == head_dim) return c;
  return FwdTileConfig{0, 0, 0, 0, 0, false, false, 0, false};
}

}  // namespace flashcute::sm90
