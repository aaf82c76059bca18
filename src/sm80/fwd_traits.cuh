#pragma once
// Compile-time types of the SM80 forward for one (element, tile config): the TiledMMA, swizzled
// shared-memory layouts and the gmem/smem copy atoms.

#include <cute/tensor.hpp>
#include <cutlass/numeric_types.h>

#include "common/softmax.cuh"
#include "sm80/tile_config.h"

namespace flashcute::sm80 {

template <class Element_, FwdTileConfig C>
struct FwdTraits {
  using Element = Element_;
  static constexpr int kHeadDim = C.head_dim;
  static constexpr int kBlockM = C.block_m;
  static constexpr int kBlockN = C.block_n;
  static constexpr int kWarps = C.warps;
  static constexpr int kThreads = C.threads();
  static constexpr int kKvStages = C.kv_stages;
  static constexpr bool kReverseM = C.reverse_m;
  static constexpr bool kFragPrefetch = C.frag_prefetch;
  static constexpr bool kParkLoopState = C.park_loop_state;
  static constexpr SoftmaxPolicy kSoftmaxPolicy{0, 3, C.rescale_threshold};
  static_assert(kHeadDim % 32 == 0 && kBlockM % (16 * kWarps) == 0 && kBlockN % 16 == 0 &&
                    (kKvStages == 1 || kKvStages == 2), "bad tile config");

  using MmaAtom = std::conditional_t<std::is_same_v<Element, cutlass::half_t>, cute::SM80_16x8x16_F32F16F16F32_TN,
                                     cute::SM80_16x8x16_F32BF16BF16F32_TN>;
  // Warps stacked along M (each owns whole query rows, so row reductions stay inside a quad); the
  // 16-wide N tile matches one ldmatrix.x4 of the B operand.
  using TiledMma = cute::TiledMMA<cute::MMA_Atom<MmaAtom>, cute::Layout<cute::Shape<cute::Int<kWarps>, cute::_1, cute::_1>>,
                                  cute::Tile<cute::Int<16 * kWarps>, cute::_16, cute::_16>>;

  // Shared-memory rows are read in 64-element (128-byte) slices when d allows, else 32: the
  // swizzle spreads the 16-byte chunks of 8 consecutive rows over all 32 banks, so cp.async
  // writes, ldmatrix reads (normal and transposed) and the output staging are conflict-free.
  static constexpr int kSmemK = kHeadDim % 64 == 0 ? 64 : 32;
  static constexpr int kSwizzleBits = kSmemK == 64 ? 3 : 2;
  using SmemAtom = decltype(cute::composition(
      cute::Swizzle<kSwizzleBits, 3, 3>{},
      cute::Layout<cute::Shape<cute::_8, cute::Int<kSmemK>>, cute::Stride<cute::Int<kSmemK>, cute::_1>>{}));
  using SmemLayoutQ = decltype(cute::tile_to_shape(SmemAtom{}, cute::Shape<cute::Int<kBlockM>, cute::Int<kHeadDim>>{}));
  using SmemLayoutKV = decltype(cute::tile_to_shape(SmemAtom{}, cute::Shape<cute::Int<kBlockN>, cute::Int<kHeadDim>>{}));
  // V seen as (d, kBlockN): the B operand of O += P V, read with transposing ldmatrix.
  using SmemLayoutVt = decltype(cute::composition(
      SmemLayoutKV{}, cute::make_layout(cute::Shape<cute::Int<kHeadDim>, cute::Int<kBlockN>>{}, cute::GenRowMajor{})));
  using SmemLayoutVtNoSwizzle = decltype(cute::get_nonswizzle_portion(SmemLayoutVt{}));
  using SmemLayoutO = SmemLayoutQ;

  using SmemCopyAtom = cute::Copy_Atom<cute::SM75_U32x4_LDSM_N, Element>;
  using SmemCopyAtomVt = cute::Copy_Atom<cute::SM75_U16x8_LDSM_T, Element>;
  using SmemCopyAtomO = cute::Copy_Atom<cute::AutoVectorizingCopyWithAssumedAlignment<32>, Element>;

  // gmem <-> smem: 8 elements (16 bytes) per thread per access; a row of kSmemK elements is
  // covered by kSmemK/8 threads, so a warp reads whole 128-byte lines.
  static constexpr int kThreadsPerRow = kSmemK / 8;
  using GmemThreadLayout = cute::Layout<cute::Shape<cute::Int<kThreads / kThreadsPerRow>, cute::Int<kThreadsPerRow>>,
                                        cute::Stride<cute::Int<kThreadsPerRow>, cute::_1>>;
  using GmemCopyIn = decltype(cute::make_tiled_copy(
      cute::Copy_Atom<cute::SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, Element>{}, GmemThreadLayout{},
      cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));
  using GmemCopyOut = decltype(cute::make_tiled_copy(cute::Copy_Atom<cute::UniversalCopy<cute::uint128_t>, Element>{},
                                                     GmemThreadLayout{}, cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));

  static constexpr int kSmemQ = cute::cosize_v<SmemLayoutQ>;
  static constexpr int kSmemKV = cute::cosize_v<SmemLayoutKV>;
  // Past the tiles: each thread's parked K/V sources (fwd_kernel.cuh's KvSrc, 16 bytes) or, with
  // kParkLoopState, its parked loop state (LoopPark, 48 bytes).
  static constexpr int64_t kSmemParkBytes = C.park_bytes();
  static constexpr int64_t kSmemKvSrcOffset = (kSmemQ + 2 * kKvStages * kSmemKV) * sizeof(Element);
  static constexpr int64_t kSmemBytes = kSmemKvSrcOffset + kThreads * kSmemParkBytes;
  static_assert(kSmemBytes == C.smem_bytes(), "tile_config.h's smem formula disagrees with the layouts");
};

}  // namespace flashcute::sm80
