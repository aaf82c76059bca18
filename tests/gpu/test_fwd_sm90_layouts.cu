// Host-side checks of the register and shared-memory layout assumptions of the SM90 forward
// (src/sm90/): they need no GPU (CuTe layouts are evaluated on the host), so they run everywhere.
//   - P, converted in place from the S = Q K^T accumulator, is exactly the register A operand of the
//     P V wgmma (gmma_acc_as_a_layout against the RS TiledMMA's own A partition);
//   - the (rows, cols) view of an accumulator: rows constant along a row, the four lanes of a quad
//     share rows, lane 4k owns column 0, consumer warpgroup w owns rows [64 w, 64 w + 64), and S and O
//     give a thread the same rows (the softmax statistics apply to both);
//   - the O epilogue writes each (row, col) of the tile to smem exactly once at its accumulator's
//     coordinate, each warp only its own 16 rows, the 16-byte read-back covers a warpgroup's 64 rows
//     exactly once, the two warpgroups' O rows never share a smem address, and the TMA store's
//     source rows (a warpgroup's 64, or a warp's 16) are laid out as its smem layout says;
//   - V^T is the same smem as V with transposed coordinates;
//   - the persistent tile order visits every (query block, head, batch) once, and inside a group of
//     batch x head indices the query blocks never increase (longest first under a causal mask).

#include <gtest/gtest.h>

#include <vector>

#include "sm90/fwd_kernel.cuh"
#include "sm90/fwd_traits.cuh"
#include "sm90/utils.cuh"

namespace flashcute::sm90 {
namespace {

using namespace cute;

template <class Tr>
void check_layouts() {
  using BM = typename Tr::BlockM;
  using BN = typename Tr::BlockN;
  using D = typename Tr::HeadDim;
  typename Tr::TiledMmaQK mma_qk;
  typename Tr::TiledMmaPV mma_pv;
  for (int t = 0; t < Tr::kConsumerThreads; ++t) {
    auto thr_qk = mma_qk.get_thread_slice(t);
    auto thr_pv = mma_pv.get_thread_slice(t);
    Tensor cS = thr_qk.partition_C(make_identity_tensor(Shape<BM, BN>{}));  // (MMA, MMA_M, MMA_N) -> (m, n)
    Tensor cA_mine = make_tensor(cS.data(), gmma_acc_as_a_layout(cS.layout()));
    Tensor cA_true = thr_pv.partition_A(make_identity_tensor(Shape<BM, BN>{}));
    ASSERT_EQ(size(cA_mine), size(cA_true));
    for (int i = 0; i < size<0>(cA_true); ++i)
      for (int m = 0; m < size<1>(cA_true); ++m)
        for (int k = 0; k < size<2>(cA_true); ++k)
          ASSERT_TRUE(cA_mine(i, m, k) == cA_true(i, m, k)) << "thread " << t << " P value " << i << "," << m << "," << k;

    Tensor rc = make_tensor(cS.data(), gmma_rowcol_layout(cS.layout()));  // (rows, cols) -> (m, n)
    Tensor rc_quad0 = make_tensor(mma_qk.get_thread_slice(t & ~3).partition_C(make_identity_tensor(Shape<BM, BN>{})).data(),
                                  gmma_rowcol_layout(cS.layout()));
    Tensor cO = thr_pv.partition_C(make_identity_tensor(Shape<BM, D>{}));
    Tensor rcO = make_tensor(cO.data(), gmma_rowcol_layout(cO.layout()));
    ASSERT_EQ(size<0>(rcO), size<0>(rc));
    EXPECT_EQ(get<1>(rc(0, 0)) == 0, t % 4 == 0) << "thread " << t;
    for (int r = 0; r < size<0>(rc); ++r) {
      for (int c = 0; c < size<1>(rc); ++c) {
        ASSERT_EQ(get<0>(rc(r, c)), get<0>(rc(r, 0))) << "thread " << t;
        ASSERT_EQ(get<1>(rc(r, c)), get<1>(rc(0, c))) << "thread " << t;
      }
      EXPECT_EQ(get<0>(rc(r, 0)), get<0>(rc_quad0(r, 0))) << "thread " << t;
      EXPECT_EQ(get<0>(rc(r, 0)) / 64, t / 128) << "thread " << t;
      EXPECT_EQ(get<0>(rcO(r, 0)), get<0>(rc(r, 0))) << "thread " << t;
    }
  }

  std::vector<int> hits(Tr::kBlockM * Tr::kHeadDim, 0);
  auto r2s = make_tiled_copy_C(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<32>, typename Tr::Element>{}, mma_pv);
  for (int t = 0; t < Tr::kConsumerThreads; ++t) {
    auto thr = r2s.get_thread_slice(t);
    Tensor src = thr.retile_S(mma_pv.get_thread_slice(t).partition_C(make_identity_tensor(Shape<BM, D>{})));
    Tensor dst = thr.partition_D(make_identity_tensor(Shape<BM, D>{}));
    ASSERT_EQ(size(src), size(dst));
    for (int i = 0; i < size(src); ++i) {
      ASSERT_TRUE(src(i) == dst(i)) << "thread " << t;
      // Each warp writes only its own 16 rows (what the per-warp TMA stores, kWarpStore, rely on).
      ASSERT_EQ(get<0>(dst(i)) / 16, t / 32) << "thread " << t;
      hits[get<0>(dst(i)) * Tr::kHeadDim + get<1>(dst(i))]++;
    }
  }
  for (int h : hits) ASSERT_EQ(h, 1);
  std::vector<int> hits_wg(64 * Tr::kHeadDim, 0);
  typename Tr::GmemCopyOut gmem_copy_o;
  for (int t = 0; t < kWarpgroupThreads; ++t) {
    Tensor c = gmem_copy_o.get_thread_slice(t).partition_S(make_identity_tensor(Shape<_64, D>{}));
    for (int i = 0; i < size(c); ++i) hits_wg[get<0>(c(i)) * Tr::kHeadDim + get<1>(c(i))]++;
  }
  for (int h : hits_wg) ASSERT_EQ(h, 1);

  typename Tr::SmemLayoutO lo;
  std::vector<int> owner(cosize(lo), -1);
  for (int m = 0; m < Tr::kBlockM; ++m)
    for (int d = 0; d < Tr::kHeadDim; ++d) {
      int& o = owner[lo(m, d)];
      ASSERT_TRUE(o == -1 || o == m / 64) << "row " << m << " col " << d;
      o = m / 64;
    }
  // The O store's smem source: rows [r0, r0 + OTmaRows) of sO (r0 a multiple of OTmaRows: a
  // warpgroup's 64, or with kWarpStore a warp's 16) start at element lo(r0, 0) and are laid out as
  // SmemLayoutOTma, for every column of a chunk.
  typename Tr::SmemLayoutOTma lt;
  constexpr int kTmaRows = Tr::OTmaRows::value;
  static_assert(Tr::kWarpStore ? kTmaRows == 16 : kTmaRows == 64, "the O store's box rows");
  for (int r0 = 0; r0 < Tr::kBlockM; r0 += kTmaRows)
    for (int r = 0; r < kTmaRows; ++r)
      for (int d = 0; d < Tr::kOCols; ++d)
        ASSERT_EQ(lo(r0 + r, d), lo(r0, 0) + lt(r, d)) << "rows from " << r0 << ": row " << r << " col " << d;
  typename Tr::SmemLayoutV lv;
  typename Tr::SmemLayoutVt lvt;
  for (int s = 0; s < Tr::kStages; ++s)
    for (int n = 0; n < Tr::kBlockN; ++n)
      for (int d = 0; d < Tr::kHeadDim; ++d) ASSERT_EQ(lv(n, d, s), lvt(d, n, s));
}

TEST(Sm90FwdLayouts, D64) { check_layouts<FwdTraits<cutlass::bfloat16_t, fwd_tile_config(64)>>(); }
TEST(Sm90FwdLayouts, D96) { check_layouts<FwdTraits<cutlass::half_t, fwd_tile_config(96)>>(); }
TEST(Sm90FwdLayouts, D128) { check_layouts<FwdTraits<cutlass::bfloat16_t, fwd_tile_config(128)>>(); }
TEST(Sm90FwdLayouts, D192) { check_layouts<FwdTraits<cutlass::half_t, fwd_tile_config(192)>>(); }
TEST(Sm90FwdLayouts, D256) { check_layouts<FwdTraits<cutlass::bfloat16_t, fwd_tile_config(256)>>(); }
// The per-warp O stores in a row that does not have them on (d 64's three warpgroups).
TEST(Sm90FwdLayouts, D64WarpStore) {
  check_layouts<FwdTraits<cutlass::bfloat16_t, with_warp_store(fwd_tile_config(64), true)>>();
}

TEST(Sm90FwdTileOrder, EveryTileOnceLongestFirstPerGroup) {
  for (int m_blocks : {1, 3, 64})
    for (int heads : {1, 6})
      for (int batch : {1, 5})
        for (int group : {1, 4, 7, 1000}) {
          const int bh = heads * batch;
          const TileOrder order{m_blocks, heads, bh, group < bh ? group : bh};
          std::vector<int> seen(m_blocks * bh, 0), last_m(bh, m_blocks);
          for (int t = 0; t < m_blocks * bh; ++t) {
            int m, h, b;
            order.decode(t, &m, &h, &b);
            ASSERT_TRUE(m >= 0 && m < m_blocks && h >= 0 && h < heads && b >= 0 && b < batch);
            ++seen[(b * heads + h) * m_blocks + m];
            EXPECT_LT(m, last_m[b * heads + h]) << "query blocks of one head must come last to first";
            last_m[b * heads + h] = m;
          }
          for (int x : seen) ASSERT_EQ(x, 1) << "m_blocks " << m_blocks << " heads " << heads << " batch " << batch;
        }
}

}  // namespace
}  // namespace flashcute::sm90
