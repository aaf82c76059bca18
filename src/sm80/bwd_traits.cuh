#pragma once
// Compile-time types of the SM80 backward for one (element, tile config): the three TiledMMAs, the
// swizzled shared-memory layouts with their transposed views, and the copy atoms.

#include <cutlass/numeric_types.h>
#include <cute/tensor.hpp>

#include "sm80/bwd_tile_config.h"

namespace flashcute::sm80 {

template <class Element_, BwdTileConfig C>
struct BwdTraits {
  using Element = Element_;
  static constexpr BwdTileConfig kConfig = C;
  static constexpr int kHeadDim = C.head_dim;
  static constexpr int kBlockM = C.block_m;
  static constexpr int kBlockN = C.block_n;
  static constexpr int kWarps = C.warps;
  static constexpr int kThreads = C.threads();
  static constexpr int kStages = C.stages;
  static constexpr int kSdpSlices = C.sdp_slices;
  static constexpr int kSdpSlicesTransform = C.sdp_slices_transform > 0 ? C.sdp_slices_transform : C.sdp_slices;
  static constexpr int kDqSlices = C.dq_slices;
  // __syncwarp between the dV, dK and dQ products (bwd_kernel.cuh): scheduling fences that keep ptxas
  // from overlapping them. Off: 0 spills in every row without them and +0-4% (d 64 +2-4%, d 128
  // -0.3% to +3%; H100, 2026-11-24); -DFLASHCUTE_SM80_BWD_SCHED_FENCES=1 puts them back for A/B.
#ifndef FLASHCUTE_SM80_BWD_SCHED_FENCES
#define FLASHCUTE_SM80_BWD_SCHED_FENCES 0
#endif
  static constexpr bool kSchedFences = FLASHCUTE_SM80_BWD_SCHED_FENCES != 0;
  static_assert(kHeadDim % (kDqSlices * 16 * (kWarps / C.dq_warps_m)) == 0, "dQ slices must be whole MMA tiles");
  // 16-wide k-slices per step of the products' rolled k loops (bwd_kernel.cuh, bwd_gemm); 0 = all.
  static constexpr int kSlicesPerStep = C.k_step > 0 ? C.k_step : 1 << 20;
  static_assert(kBlockM % (kSdpSlices * 16 * C.sdp_warps_m) == 0 &&
                    kBlockM % (kSdpSlicesTransform * 16 * C.sdp_warps_m) == 0,
                "S/dP slices must be whole MMA tiles");
  static_assert(kStages == 1 || kStages == 2, "Q/dO are single- or double-buffered");
  static_assert(kHeadDim % 32 == 0 && kBlockM % 64 == 0 && kBlockN % 64 == 0, "bad tile config");
  static_assert(kBlockM % kBwdMinBlockM == 0, "turn counters are sized for kBwdMinBlockM-row query blocks");

  using MmaAtom = std::conditional_t<std::is_same_v<Element, cutlass::half_t>, cute::SM80_16x8x16_F32F16F16F32_TN,
                                     cute::SM80_16x8x16_F32BF16BF16F32_TN>;
  // A (warps_m x warps_n) arrangement whose tile is 16 x 16 per warp: each warp's B slice of one
  // k-step is one ldmatrix.x4.
  template <int WarpsM>
  using TiledMmaOf = cute::TiledMMA<cute::MMA_Atom<MmaAtom>,
                                    cute::Layout<cute::Shape<cute::Int<WarpsM>, cute::Int<kWarps / WarpsM>, cute::_1>>,
                                    cute::Tile<cute::Int<16 * WarpsM>, cute::Int<16 * (kWarps / WarpsM)>, cute::_16>>;
  using TiledMmaSdP = TiledMmaOf<C.sdp_warps_m>;  // (BM, BN) = Q K^T, dO V^T
  using TiledMmadKV = TiledMmaOf<C.dkv_warps_n>;  // (BN, D)  = P^T dO, dS^T Q
  using TiledMmadQ = TiledMmaOf<C.dq_warps_m>;    // (BM, D)  = dS K
  static_assert(kBlockM % (16 * C.sdp_warps_m) == 0 && kBlockN % (16 * (kWarps / C.sdp_warps_m)) == 0,
                "S/dP tile does not divide (block_m, block_n)");
  static_assert(kBlockN % (16 * C.dkv_warps_n) == 0 && kHeadDim % (16 * (kWarps / C.dkv_warps_n)) == 0,
                "dK/dV tile does not divide (block_n, d)");
  static_assert(kBlockM % (16 * C.dq_warps_m) == 0 && kHeadDim % (16 * (kWarps / C.dq_warps_m)) == 0,
                "dQ tile does not divide (block_m, d)");

  // Rows of d elements are read in 64-element (128-byte) slices when d allows, else 32; P and dS
  // rows (block_n >= 64 keys) always in 64. The swizzle spreads the 16-byte chunks of 8 consecutive
  // rows over all 32 banks, so cp.async writes, ldmatrix reads (normal and transposed) and the
  // register -> smem staging of P, dS, dK and dV are conflict-free.
  static constexpr int kSmemK = kHeadDim % 64 == 0 ? 64 : 32;
  template <int Cols>
  using SmemAtomOf = decltype(cute::composition(
      cute::Swizzle<(Cols == 64 ? 3 : 2), 3, 3>{},
      cute::Layout<cute::Shape<cute::_8, cute::Int<Cols>>, cute::Stride<cute::Int<Cols>, cute::_1>>{}));
  using SmemLayoutQ =
      decltype(cute::tile_to_shape(SmemAtomOf<kSmemK>{}, cute::Shape<cute::Int<kBlockM>, cute::Int<kHeadDim>>{}));
  using SmemLayoutKV =
      decltype(cute::tile_to_shape(SmemAtomOf<kSmemK>{}, cute::Shape<cute::Int<kBlockN>, cute::Int<kHeadDim>>{}));
  using SmemLayoutPdS =
      decltype(cute::tile_to_shape(SmemAtomOf<64>{}, cute::Shape<cute::Int<kBlockM>, cute::Int<kBlockN>>{}));

  // Transposed views (a product's operand whose contraction index is the tile's row index), read
  // with transposing ldmatrix: Q^T and dO^T (d, BM) for dK/dV, K^T (d, BN) for dQ, P^T and dS^T
  // (BN, BM) for dV/dK. The non-swizzled portions give the register fragments their shapes.
  template <class L, int Rows, int Cols>
  using Transposed = decltype(cute::composition(
      L{}, cute::make_layout(cute::Shape<cute::Int<Rows>, cute::Int<Cols>>{}, cute::GenRowMajor{})));
  using SmemLayoutQt = Transposed<SmemLayoutQ, kHeadDim, kBlockM>;
  using SmemLayoutKt = Transposed<SmemLayoutKV, kHeadDim, kBlockN>;
  using SmemLayoutPdSt = Transposed<SmemLayoutPdS, kBlockN, kBlockM>;
  using SmemLayoutQtNoSwizzle = decltype(cute::get_nonswizzle_portion(SmemLayoutQt{}));
  using SmemLayoutKtNoSwizzle = decltype(cute::get_nonswizzle_portion(SmemLayoutKt{}));
  using SmemLayoutPdStNoSwizzle = decltype(cute::get_nonswizzle_portion(SmemLayoutPdSt{}));

  using SmemCopyAtom = cute::Copy_Atom<cute::SM75_U32x4_LDSM_N, Element>;
  using SmemCopyAtomT = cute::Copy_Atom<cute::SM75_U16x8_LDSM_T, Element>;
  using SmemCopyAtomStage = cute::Copy_Atom<cute::AutoVectorizingCopyWithAssumedAlignment<32>, Element>;

  // gmem <-> smem: 8 elements (16 bytes) per thread per access; a row of kSmemK elements is
  // covered by kSmemK/8 threads, so a warp reads whole 128-byte lines.
  static constexpr int kThreadsPerRow = kSmemK / 8;
  using GmemThreadLayout = cute::Layout<cute::Shape<cute::Int<kThreads / kThreadsPerRow>, cute::Int<kThreadsPerRow>>,
                                        cute::Stride<cute::Int<kThreadsPerRow>, cute::_1>>;
  using GmemCopyIn =
      decltype(cute::make_tiled_copy(cute::Copy_Atom<cute::SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, Element>{},
                                     GmemThreadLayout{}, cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));
  using GmemCopyOut =
      decltype(cute::make_tiled_copy(cute::Copy_Atom<cute::UniversalCopy<cute::uint128_t>, Element>{},
                                     GmemThreadLayout{}, cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));

  static constexpr int kSmemQ = cute::cosize_v<SmemLayoutQ>;
  static constexpr int kSmemKV = cute::cosize_v<SmemLayoutKV>;
  static constexpr int kSmemPdS = cute::cosize_v<SmemLayoutPdS>;
  static constexpr int64_t kSmemBytes = (2 * kSmemKV + 2 * kStages * kSmemQ + 2 * kSmemPdS) * sizeof(Element) +
                                        2 * kStages * kBlockM * sizeof(float) + kBwdScalarBytes;
  static_assert(kSmemBytes == C.smem_bytes(), "bwd_tile_config.h's smem formula disagrees with the layouts");
};

// Floats per reduction of the dQ accumulator (bwd_kernel.cuh, dq_accum_add): red.global.add.v4.f32
// (or .v2: -DFLASHCUTE_SM80_BWD_DQ_VEC_SM90=2) on sm_90, scalar red.global.add.f32 on sm_80. The main kernel and the dQ postprocess are compiled
// in the same pass, so they agree on it (BwdDqTile::offset).
#ifndef FLASHCUTE_SM80_BWD_DQ_VEC_SM90
#define FLASHCUTE_SM80_BWD_DQ_VEC_SM90 4
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
inline constexpr int kDqAccumVec = FLASHCUTE_SM80_BWD_DQ_VEC_SM90;
#else
inline constexpr int kDqAccumVec = 1;
#endif

// Where element i of thread t's fp32 accumulator fragment goes in a tile stored in reduction order:
// each reduction instruction of a warp (kDqAccumVec floats per thread) covers 32 x kDqAccumVec
// consecutive floats. The dQ tiles (BwdDqTile) and the split units' dK/dV slots (bwd_kernel.cuh's
// bwd_merge_pieces) are laid out this way.
template <int kThreads>
__host__ __device__ constexpr int reduction_order_offset(int i, int t) {
  return (i / kDqAccumVec) * (kThreads * kDqAccumVec) + t * kDqAccumVec + i % kDqAccumVec;
}

// One query block's tile of the fp32 dQ accumulator (bwd_workspace.h): kBlockM x kHeadDim floats,
// stored in the order the main kernel's reductions produce them, not row-major. Slice s of the dQ
// product (kHeadDim / kDqSlices columns) owns kSliceFloats consecutive floats; in it, element i of
// thread t's accumulator fragment (the dQ TiledMMA's partition_C) lies at
//   (i / kDqAccumVec) * kThreads * kDqAccumVec + t * kDqAccumVec + i % kDqAccumVec,
// so each reduction instruction of a warp covers 32 x kDqAccumVec consecutive floats (whole 128-byte
// lines; a row-major tile spread each one over 8 rows and 8 L2 requests). The postprocess reads a
// tile in the same order and maps element (t, i) back to its (row, column) through the same
// partition. Every slot of a tile belongs to exactly one (t, i), so rows past the sequence and the
// bucket's padded columns only ever fill slots the postprocess skips.
template <class Tr>
struct BwdDqTile {
  static constexpr int kSliceCols = Tr::kHeadDim / Tr::kDqSlices;
  static constexpr int kSliceFloats = Tr::kBlockM * kSliceCols;
  static constexpr int kFloats = Tr::kBlockM * Tr::kHeadDim;
  static constexpr int kFragment = kSliceFloats / Tr::kThreads;  // fragment elements per thread per slice
  static_assert(kSliceFloats % Tr::kThreads == 0 && kFragment % 4 == 0, "dQ fragment must split in groups of 4");
  __host__ __device__ static constexpr int offset(int slice, int i, int t) {
    return slice * kSliceFloats + reduction_order_offset<Tr::kThreads>(i, t);
  }
};

}  // namespace flashcute::sm80
