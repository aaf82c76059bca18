// The SM90 forward's tile-config rules that the dispatch (src/sm90/fwd.cuh) applies at run time:
// which problems take d 64's short tiles, what each instantiation's configuration is, and the
// property the short causal kernel's per-warpgroup key range rests on.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "common/mask.h"
#include "sm90/tile_config.h"

namespace flashcute::sm90 {
namespace {

constexpr FwdTileConfig kD64 = fwd_tile_config(64);

// fn(kernel config, short_rows) for every instantiation for_kernel can make of row c (each
// combination of its six flags).
template <class Fn>
void for_each_kernel(const FwdTileConfig& c, Fn&& fn) {
  for (int bits = 0; bits < 64; ++bits) {
    const bool short_rows = bits & 16;
    fn(c.for_kernel(bits & 1, bits & 2, bits & 4, bits & 8, short_rows, bits & 32), short_rows);
  }
}

TEST(Sm90TileConfig, ShortRowsPickedByPadding) {
  if (kD64.short_wgs == 0) GTEST_SKIP() << "d 64's short tiles are off (FLASHCUTE_SM90_FWD_D64_SHORT_WGS=0)";
  ASSERT_EQ(kD64.block_m, 192);
  ASSERT_EQ(kD64.short_wgs, 4);
  // Rows padded to 256 against 192: taken where that pads at least 5% less.
  EXPECT_TRUE(kD64.short_pays(512));    // 512 against 576
  EXPECT_TRUE(kD64.short_pays(1000));   // 1024 against 1152
  EXPECT_TRUE(kD64.short_pays(1024));
  EXPECT_TRUE(kD64.short_pays(255));    // 256 against 384
  EXPECT_FALSE(kD64.short_pays(2048));  // 2048 against 2112: under 5%
  EXPECT_FALSE(kD64.short_pays(300));   // 512 against 384
  EXPECT_FALSE(kD64.short_pays(192));
  EXPECT_FALSE(kD64.short_pays(1));     // 256 against 192
  EXPECT_FALSE(kD64.short_pays(0));
  for (const FwdTileConfig& c : kFwdTileConfigs)
    if (c.short_wgs == 0) {
      EXPECT_FALSE(c.short_pays(512)) << "d " << c.head_dim;
    }
}

// What every short_wgs instantiation `k` of `row` has: the short tiles' warpgroups, key step and
// stages on the overlapped loop, persistent, and no dispatch fields left in the template argument.
void expect_short_instantiation(const FwdTileConfig& row, const FwdTileConfig& k) {
  EXPECT_EQ(k.consumer_wgs, row.short_wgs) << "d " << row.head_dim;
  EXPECT_EQ(k.block_m, 64 * row.short_wgs) << "d " << row.head_dim;
  EXPECT_EQ(k.block_n, row.short_block_n) << "d " << row.head_dim;
  EXPECT_EQ(k.stages, row.short_stages) << "d " << row.head_dim;
  EXPECT_TRUE(k.overlap) << "d " << row.head_dim;
  EXPECT_TRUE(k.persistent) << "d " << row.head_dim;
  EXPECT_EQ(k.short_wgs, 0) << "d " << row.head_dim;  // normalized: no dispatch fields
  EXPECT_EQ(k.short_masked_max_seqlen_k + k.short_full_max_seqlen_k, 0) << "d " << row.head_dim;
  EXPECT_EQ(k.threads(), (row.short_wgs + 1) * 128) << "d " << row.head_dim;
}

TEST(Sm90TileConfig, InstantiationConfigs) {
  if (kD64.short_wgs == 0) GTEST_SKIP() << "d 64's short tiles are off (FLASHCUTE_SM90_FWD_D64_SHORT_WGS=0)";
  constexpr FwdTileConfig plain = kD64.for_kernel(false, true, false, false, true);
  constexpr FwdTileConfig masked = kD64.for_kernel(false, true, false, true, true);
  for (const FwdTileConfig& c : {plain, masked}) {
    expect_short_instantiation(kD64, c);
    EXPECT_FALSE(c.pingpong);
    EXPECT_LE(c.tile_smem_bytes() + int64_t(c.block_m) * c.head_dim * 2, 227 * 1024);  // with O's own space
  }
  EXPECT_FALSE(plain.wg_key_blocks);
  EXPECT_TRUE(masked.wg_key_blocks);
  // The masked kernel without the short tiles: block_n_masked on the plain loop, no per-warpgroup range.
  constexpr FwdTileConfig wide = kD64.for_kernel(false, true, false, true);
  EXPECT_EQ(wide.block_m, kD64.block_m);
  EXPECT_EQ(wide.block_n, kD64.block_n_masked);
  EXPECT_FALSE(wide.overlap);
  EXPECT_FALSE(wide.wg_key_blocks);
  // No other row or instantiation turns the per-warpgroup range on.
  for (const FwdTileConfig& c : kFwdTileConfigs) {
    for (const bool transform : {false, true})
      for (const bool persistent : {false, true})
        for (const bool full : {false, true})
          for (const bool m : {false, true}) {
            EXPECT_FALSE(c.for_kernel(transform, persistent, full, m).wg_key_blocks);
          }
  }
}

// Ping-pong (round-robin turns, fwd_kernel.cuh) needs every consumer warpgroup to run the same
// number of turns per tile: never with per-warpgroup key ranges, always on the overlapped loop.
// d 64's row takes it in its own kernels (session 30), not in the short rows' or block_n_masked's.
TEST(Sm90TileConfig, PingPongConfigs) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    for (const bool transform : {false, true})
      for (const bool persistent : {false, true})
        for (const bool full : {false, true})
          for (const bool m : {false, true})
            for (const bool short_rows : {false, true}) {
              const FwdTileConfig k = c.for_kernel(transform, persistent, full, m, short_rows);
              if (k.pingpong) {
                EXPECT_TRUE(k.overlap) << "d " << c.head_dim;
                EXPECT_FALSE(k.wg_key_blocks) << "d " << c.head_dim;
              }
            }
  if (!FLASHCUTE_SM90_FWD_D64_PINGPONG || kD64.consumer_wgs != 3 || FLASHCUTE_SM90_FWD_PINGPONG == 0)
    GTEST_SKIP() << "d 64's ping-pong is not the default in this build";
  EXPECT_TRUE(kD64.for_kernel(false, false).pingpong);
  EXPECT_TRUE(kD64.for_kernel(false, true).pingpong);
  EXPECT_FALSE(kD64.for_kernel(false, true, false, true).pingpong);  // block_n_masked: the plain loop
  if (kD64.short_wgs > 0 && !FLASHCUTE_SM90_FWD_SHORT_PINGPONG) {
    EXPECT_FALSE(kD64.for_kernel(false, true, false, false, true).pingpong);
  }
}

// A row's choice in its own kernels, and in its softcap/ALiBi kernel only where the row's flag for
// that kernel is set too (fast_decode / transform_fast_decode, early_q_release / transform_early_q).
void ExpectTransformSplit(bool FwdTileConfig::*choice, bool FwdTileConfig::*in_transform) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    for (const bool persistent : {false, true}) {
      EXPECT_EQ(c.for_kernel(false, persistent).*choice, c.*choice) << "d " << c.head_dim;
      EXPECT_EQ(c.for_kernel(true, persistent).*choice, c.*choice && c.*in_transform) << "d " << c.head_dim;
    }
}

// The early Q release: the row's choice in its own kernels, transform_early_q's in its softcap/ALiBi
// kernel (d 128: off there, that kernel spilled 16 bytes with it, session 72).
TEST(Sm90TileConfig, EarlyQConfigs) {
  ExpectTransformSplit(&FwdTileConfig::early_q_release, &FwdTileConfig::transform_early_q);
  EXPECT_FALSE(fwd_tile_config(128).transform_early_q);
  // d 128 with the release on (what FLASHCUTE_SM90_FWD_EARLY_Q=1 builds): the plain kernels only.
  constexpr FwdTileConfig kEq = with_early_q(fwd_tile_config(128), true, fwd_tile_config(128).transform_early_q);
  EXPECT_TRUE(kEq.for_kernel(false, true).early_q_release);
  EXPECT_FALSE(kEq.for_kernel(true, true).early_q_release);
  if (FLASHCUTE_SM90_FWD_EARLY_Q >= 0) GTEST_SKIP() << "FLASHCUTE_SM90_FWD_EARLY_Q forces the rows";
  EXPECT_TRUE(kD64.early_q_release);
  // d 128: measured (session 73), up to the limit below (session 74's GPU tests ran on it).
  EXPECT_TRUE(fwd_tile_config(128).early_q_release);
  EXPECT_TRUE(fwd_tile_config(256).early_q_release);
}

// The early-Q limit is dispatch only: no kernel's configuration keeps it, and the kernel past it is
// the row's plain persistent kernel with only the release off (what the row without it builds).
TEST(Sm90TileConfig, EarlyQLimit) {
  for (const FwdTileConfig& c : kFwdTileConfigs) {
    for (const bool transform : {false, true})
      for (const bool persistent : {false, true})
        EXPECT_EQ(c.for_kernel(transform, persistent).early_q_max_seqlen_k, 0) << "d " << c.head_dim;
    const FwdTileConfig late = c.for_kernel(false, true).without_early_q();
    EXPECT_FALSE(late.early_q_release) << "d " << c.head_dim;
    EXPECT_TRUE(late == with_early_q(c, false, c.transform_early_q).for_kernel(false, true)) << "d " << c.head_dim;
  }
  EXPECT_EQ(fwd_tile_config(128).early_q_max_seqlen_k, FLASHCUTE_SM90_FWD_D128_EARLY_Q_MAX);
  EXPECT_EQ(kD64.early_q_max_seqlen_k, 0);
  EXPECT_EQ(fwd_tile_config(256).early_q_max_seqlen_k, 0);
}

// The fast tile decode: the row's choice in its own kernels, transform_fast_decode's in its
// softcap/ALiBi kernel (d 64: off, that kernel spilled with it; d 256: on in both since session 49).
TEST(Sm90TileConfig, FastDecodeConfigs) {
  ExpectTransformSplit(&FwdTileConfig::fast_decode, &FwdTileConfig::transform_fast_decode);
  if (FLASHCUTE_SM90_FWD_FAST_DECODE >= 0) GTEST_SKIP() << "FLASHCUTE_SM90_FWD_FAST_DECODE forces every row";
  EXPECT_TRUE(kD64.fast_decode);
  EXPECT_FALSE(kD64.for_kernel(true, true).fast_decode);
  EXPECT_TRUE(fwd_tile_config(128).for_kernel(true, true).fast_decode);
  EXPECT_TRUE(fwd_tile_config(256).for_kernel(false, true).fast_decode);  // session 49, with early Q
  EXPECT_TRUE(fwd_tile_config(256).for_kernel(true, true).fast_decode);
}

// Clusters of two CTAs: only the instantiation Fwd::run asks for with `clustered` has them, on the
// non-persistent kernel, and only rows with cluster_min_seqlen_k; the template argument keeps no
// dispatch field.
TEST(Sm90TileConfig, ClusterConfigs) {
  bool any = false;
  for (const FwdTileConfig& c : kFwdTileConfigs) {
    const FwdTileConfig clustered = c.for_kernel(false, false, true, false, false, true);
    EXPECT_EQ(clustered.cluster, c.cluster_min_seqlen_k > 0 ? 2 : 1) << "d " << c.head_dim;
    EXPECT_EQ(clustered.cluster_min_seqlen_k, 0) << "d " << c.head_dim;
    EXPECT_FALSE(clustered.persistent);
    any |= c.cluster_min_seqlen_k > 0;
    for (const bool transform : {false, true})
      for (const bool persistent : {false, true})
        for (const bool full : {false, true})
          for (const bool m : {false, true})
            for (const bool short_rows : {false, true}) {
              EXPECT_EQ(c.for_kernel(transform, persistent, full, m, short_rows).cluster, 1) << "d " << c.head_dim;
            }
  }
  if (!any) GTEST_SKIP() << "no row has clusters (FLASHCUTE_SM90_FWD_CLUSTER_MIN_SEQLEN_K=0)";
  EXPECT_EQ(fwd_tile_config(256).cluster_min_seqlen_k, 4096);
}

// dynamic_plain_max_seqlen_k is dispatch only: Fwd::run reads it from the row, no instantiation's
// config carries it (so the kernels' code and names do not depend on it), and it only lengthens the
// row's dynamic range (plain problems never leave the dynamic scheduler short of dynamic_max_seqlen_k).
TEST(Sm90TileConfig, DynamicPlainLimitIsDispatchOnly) {
  bool any = false;
  for (const FwdTileConfig& c : kFwdTileConfigs) {
    any |= c.dynamic_plain_max_seqlen_k > 0;
    if (c.dynamic_plain_max_seqlen_k > 0) {
      EXPECT_GE(c.dynamic_plain_max_seqlen_k, c.dynamic_max_seqlen_k) << "d " << c.head_dim;
    }
    for_each_kernel(c, [&](const FwdTileConfig& k, bool) {
      EXPECT_EQ(k.dynamic_plain_max_seqlen_k, 0) << "d " << c.head_dim;
    });
  }
  if (FLASHCUTE_SM90_FWD_DYNAMIC >= 0) GTEST_SKIP() << "FLASHCUTE_SM90_FWD_DYNAMIC forces every row's limits";
  ASSERT_TRUE(any);
  EXPECT_EQ(kD64.dynamic_plain_max_seqlen_k, 16384);
  EXPECT_EQ(fwd_tile_config(128).dynamic_plain_max_seqlen_k, 8192);
  EXPECT_EQ(fwd_tile_config(256).dynamic_plain_max_seqlen_k, 0);
}

// masked_full_min_seqlen_k is dispatch only too (no instantiation's config carries it), and only a
// row with a masked kernel (block_n_masked) has one: the unmasked problems it sends there need that
// kernel.
TEST(Sm90TileConfig, MaskedFullLimitIsDispatchOnly) {
  for (const FwdTileConfig& c : kFwdTileConfigs) {
    if (c.block_n_masked == 0) {
      EXPECT_EQ(c.masked_full_min_seqlen_k, 0) << "d " << c.head_dim;
    }
    for_each_kernel(c, [&](const FwdTileConfig& k, bool) {
      EXPECT_EQ(k.masked_full_min_seqlen_k, 0) << "d " << c.head_dim;
    });
  }
  EXPECT_EQ(with_masked_full(fwd_tile_config(128), 4096).masked_full_min_seqlen_k, 0);
  if (FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K >= 0 || FLASHCUTE_SM90_FWD_BLOCK_N_MASKED >= 0)
    GTEST_SKIP() << "FLASHCUTE_SM90_FWD_MASKED_FULL_MIN_SEQLEN_K / _BLOCK_N_MASKED force the rows' values";
  EXPECT_EQ(kD64.masked_full_min_seqlen_k, 4096);
  EXPECT_EQ(fwd_tile_config(128).masked_full_min_seqlen_k, 0);
  EXPECT_EQ(fwd_tile_config(256).masked_full_min_seqlen_k, 0);
}

// Rows with the masked short tiles only (with_short_masked: short_wgs is the row's own consumer_wgs):
// the instantiation Fwd::run takes for plain causal / windowed problems up to
// short_masked_max_seqlen_k keys (unmasked ones up to short_full_max_seqlen_k) keeps the row's
// tiles along M and narrows the key step; short_unmasked(), which guards the unmasked short
// instantiation, is false.
TEST(Sm90TileConfig, MaskedShortTiles) {
  EXPECT_TRUE(kD64.short_wgs == 0 || kD64.short_unmasked());
  int rows = 0;
  for (const FwdTileConfig& c : kFwdTileConfigs) {
    if ((c.short_masked_max_seqlen_k == 0 && c.short_full_max_seqlen_k == 0) || c.short_unmasked()) continue;
    ++rows;
    EXPECT_EQ(c.short_wgs, c.consumer_wgs) << "d " << c.head_dim;
    EXPECT_FALSE(c.short_pays(512)) << "d " << c.head_dim;
    EXPECT_FALSE(c.short_pays(1000)) << "d " << c.head_dim;
    const FwdTileConfig k = c.for_kernel(false, true, false, true, true);
    expect_short_instantiation(c, k);
    EXPECT_EQ(k.block_m, c.block_m) << "d " << c.head_dim;
    EXPECT_EQ(k.consumer_wgs, c.consumer_wgs) << "d " << c.head_dim;
    EXPECT_LT(k.block_n, c.block_n) << "d " << c.head_dim;
    EXPECT_TRUE(k.wg_key_blocks) << "d " << c.head_dim;
    EXPECT_FALSE(k.pingpong) << "d " << c.head_dim;
    EXPECT_LE(k.tile_smem_bytes(), 227 * 1024) << "d " << c.head_dim;
  }
  if (rows == 0) GTEST_SKIP() << "no row has the masked short tiles only (their switches are 0)";
  // The measured defaults: d 256 causal up to 4k keys (session 31), non-causal up to 2k (session 32);
  // d 128 off.
  if (FLASHCUTE_SM90_FWD_D256_SHORT_MASKED_MAX == 4096 && FLASHCUTE_SM90_FWD_D256_SHORT_FULL_MAX == 2048) {
    constexpr FwdTileConfig d256 = fwd_tile_config(256);
    EXPECT_EQ(d256.short_masked_max_seqlen_k, 4096);
    EXPECT_EQ(d256.short_full_max_seqlen_k, 2048);
    constexpr FwdTileConfig k = d256.for_kernel(false, true, false, true, true);
    EXPECT_EQ(k.block_n, 64);
    // Half of O's columns fit beside Q and the two K/V stages (fwd_traits.cuh, kSplitO: O in two
    // chunks through its own buffer, session 32); the whole of O does not.
    EXPECT_LE(k.tile_smem_bytes() + int64_t(k.block_m) * k.head_dim, 227 * 1024);
    EXPECT_GT(k.tile_smem_bytes() + int64_t(k.block_m) * k.head_dim * 2, 227 * 1024);
  }
  if (FLASHCUTE_SM90_FWD_D128_SHORT_MASKED_MAX == 0) {
    EXPECT_EQ(fwd_tile_config(128).short_wgs, 0);
  }
}

// wg_key_blocks: a warpgroup runs the key blocks below ceil(end(last row) / block_n), end() from
// visible_key_range of its last row (fwd_kernel.cuh). That skips no key any of its rows sees iff
// end() does not decrease with the row, for every window the contract allows.
TEST(Sm90TileConfig, WarpgroupKeyRangeCoversItsRows) {
  const int seqlens[] = {1, 7, 63, 64, 65, 130, 255, 256, 300, 511, 777, 1000};
  const int windows[][2] = {{-1, 0}, {-1, -1}, {0, 0}, {100, 50}, {200, 0}, {5, 3}, {-1, 17}, {3, -1}};
  for (int sq : seqlens)
    for (int sk : seqlens)
      for (const auto& lr : windows) {
        const Window w = make_window(false, lr[0], lr[1]);
        for (int first = 0; first < sq; first += 64) {
          const int last = std::min(first + 64, sq) - 1;
          int b_last, e_last;
          visible_key_range_i32(last, sq, sk, w, &b_last, &e_last);
          for (int i = first; i <= last; ++i) {
            int b, e;
            visible_key_range_i32(i, sq, sk, w, &b, &e);
            if (e > b) {
              ASSERT_LE(e, e_last) << "sq " << sq << " sk " << sk << " window " << lr[0] << "," << lr[1]
                                   << " row " << i;
            }
          }
        }
      }
}

// half_first (fwd_kernel.cuh): a warpgroup for which rows_see_no_key_from (common/mask.h) holds at
// the second half of its first key block computes that block's S over the first half only and sets
// the second half to -inf. That is exact only if no row of the warpgroup, including rows past
// seqlen_q (the kernel computes them, never stores them), sees a key of the second half under the
// contract's predicate.
TEST(Sm90TileConfig, HalfFirstSecondHalfIsMasked) {
  constexpr int kBlockM = 128, kBlockN = 128;  // d 128's tiles
  const int seqlens[] = {1, 63, 64, 65, 127, 128, 129, 200, 255, 256, 300, 511, 512, 777, 1000, 1024};
  const int windows[][2] = {{-1, 0}, {-1, -1}, {0, 0}, {100, 50}, {200, 0}, {5, 3}, {-1, 17}, {64, 0}};
  int halves = 0;
  for (int sq : seqlens)
    for (int sk : seqlens)
      for (const auto& lr : windows) {
        const Window w = make_window(false, lr[0], lr[1]);
        for (int m0 = 0; m0 < sq; m0 += kBlockM) {
          // The tile's key blocks (make_tile_work): from the first row's begin to the last row's end.
          int first_begin, first_end, last_begin, last_end;
          visible_key_range_i32(m0, sq, sk, w, &first_begin, &first_end);
          visible_key_range_i32(std::min(m0 + kBlockM, sq) - 1, sq, sk, w, &last_begin, &last_end);
          const int n_min = first_begin / kBlockN;
          const int n_max = last_end > first_begin ? (last_end + kBlockN - 1) / kBlockN : n_min;
          if (n_max <= n_min) continue;  // no key: the overlapped loop does not run
          const int n0 = (n_max - 1) * kBlockN;
          for (int wg = 0; wg < kBlockM / 64; ++wg) {
            if (!rows_see_no_key_from(m0 + 64 * wg, 64, sq, sk, w, n0 + kBlockN / 2)) continue;
            ++halves;
            for (int i = m0 + 64 * wg; i < m0 + 64 * wg + 64; ++i)
              for (int j = n0 + kBlockN / 2; j < n0 + kBlockN; ++j)
                ASSERT_FALSE(key_visible(i, j, sq, sk, w)) << "sq " << sq << " sk " << sk << " window " << lr[0]
                                                           << "," << lr[1] << " row " << i << " key " << j;
          }
        }
      }
  EXPECT_GT(halves, 0);
  // Causal self-attention: warpgroup 0 of every tile takes the half block, warpgroup 1 never.
  const Window causal = make_window(true, -1, -1);
  for (int m0 = 0; m0 < 1024; m0 += kBlockM) {
    const int n0 = m0;  // the tile's last key block is its diagonal
    EXPECT_TRUE(rows_see_no_key_from(m0, 64, 1024, 1024, causal, n0 + kBlockN / 2)) << "tile " << m0;
    EXPECT_FALSE(rows_see_no_key_from(m0 + 64, 64, 1024, 1024, causal, n0 + kBlockN / 2)) << "tile " << m0;
  }
  if (FLASHCUTE_SM90_FWD_HALF_FIRST < 0) {
    EXPECT_TRUE(fwd_tile_config(128).half_first);
    EXPECT_FALSE(kD64.half_first);
    EXPECT_FALSE(fwd_tile_config(256).half_first);
  }
}

// Q in registers (short_q_regs): only the short_wgs instantiations of a row that asks for it hold Q
// in registers; the row field itself never reaches a kernel, and no row asks by default (session 45:
// it did not fit d 64's 256 x 64 tiles and lost on 192 x 64 ones).
TEST(Sm90TileConfig, QRegsOnlyInShortTiles) {
  for (const FwdTileConfig& c : kFwdTileConfigs)
    for_each_kernel(c, [&](const FwdTileConfig& k, bool short_rows) {
      EXPECT_FALSE(k.short_q_regs) << "d " << c.head_dim;
      if (c.main_q_regs) return;  // QRegsInMainKernels
      EXPECT_EQ(k.q_regs, short_rows && c.short_wgs > 0 && c.short_q_regs) << "d " << c.head_dim;
      EXPECT_FALSE(k.q_regs_keep_sq) << "d " << c.head_dim;
    });
  constexpr FwdTileConfig asked = with_short_q_regs(kD64, true);
  EXPECT_TRUE(asked.for_kernel(false, true, false, true, true).q_regs);
  EXPECT_FALSE(asked.for_kernel(false, true, false, true).q_regs);  // the masked kernel: not short tiles
  if (FLASHCUTE_SM90_FWD_SHORT_Q_REGS >= 0) GTEST_SKIP() << "FLASHCUTE_SM90_FWD_SHORT_Q_REGS forces the rows' choice";
  for (const FwdTileConfig& c : kFwdTileConfigs) EXPECT_FALSE(c.short_q_regs) << "d " << c.head_dim;
}

// Q in registers in a row's overlapped kernels (main_q_regs), persistent or not: the softcap/ALiBi
// kernel and the plain-loop (masked) kernel never; such kernels keep sQ (q_regs_keep_sq), and the row
// field never reaches a kernel.
TEST(Sm90TileConfig, QRegsInMainKernels) {
  constexpr FwdTileConfig asked = with_main_q_regs(fwd_tile_config(128), true);
  const FwdTileConfig plain = asked.for_kernel(false, false);
  EXPECT_TRUE(plain.q_regs && plain.q_regs_keep_sq);
  EXPECT_FALSE(plain.main_q_regs);
  EXPECT_FALSE(asked.for_kernel(true, false).q_regs);  // softcap / ALiBi
  EXPECT_TRUE(asked.for_kernel(false, true).q_regs);  // persistent
  EXPECT_FALSE(with_main_q_regs(kD64, true).for_kernel(false, true, false, true).q_regs);  // masked: the plain loop
  const FwdTileConfig not_asked = fwd_tile_config(128).for_kernel(false, false);
  EXPECT_EQ(not_asked.q_regs, FLASHCUTE_SM90_FWD_MAIN_Q_REGS > 0);
}

}  // namespace
}  // namespace flashcute::sm90
