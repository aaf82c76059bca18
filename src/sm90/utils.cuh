#pragma once
// CuTe building blocks of the SM90 path: one warpgroup-wide wgmma product, layout views of wgmma
// accumulators (rows/cols for the softmax; the A-operand view of P).

#include <cute/tensor.hpp>
#include <cutlass/array.h>
#include <cutlass/numeric_conversion.h>

namespace flashcute::sm90 {

// acc (+)= A B^T over all k-blocks as one wgmma batch, committed but not waited on. kZeroInit: the
// first k-block overwrites acc instead of accumulating (no separate clear of S).
template <bool kZeroInit, class TiledMma, class TA, class TB, class TC>
__device__ __forceinline__ void wgmma_gemm(TiledMma& mma, const TA& tCrA, const TB& tCrB, TC& tCrC) {
  using namespace cute;
  constexpr bool kARegs = !std::is_same_v<std::decay_t<decltype(tCrA.data())>, GMMA::DescriptorIterator>;
  if constexpr (kARegs) warpgroup_fence_operand(const_cast<TA&>(tCrA));
  warpgroup_fence_operand(tCrC);
  warpgroup_arrive();
  if constexpr (kZeroInit) mma.accumulate_ = GMMA::ScaleOut::Zero;
  CUTE_UNROLL
  for (int k = 0; k < size<2>(tCrA); ++k) {
    gemm(mma, tCrA(_, _, k), tCrB(_, _, k), tCrC);
    mma.accumulate_ = GMMA::ScaleOut::One;
  }
  warpgroup_commit_batch();
  warpgroup_fence_operand(tCrC);
  if constexpr (kARegs) warpgroup_fence_operand(const_cast<TA&>(tCrA));
}

// A wgmma accumulator ((2 cols, 2 rows, N/8), MMA_M, MMA_N) seen as (rows, cols) =
// ((2, MMA_M), (2, N/8, MMA_N)): a thread's rows r and r+8 of each 64-row tile.
template <class Layout>
CUTE_HOST_DEVICE auto gmma_rowcol_layout(Layout acc) {
  using namespace cute;
  static_assert(rank(Layout{}) == 3 && rank(get<0>(Layout{})) == 3, "expects a wgmma accumulator layout");
  return make_layout(make_layout(get<0, 1>(acc), get<1>(acc)),
                     make_layout(get<0, 0>(acc), get<0, 2>(acc), get<2>(acc)));
}

// The accumulator registers of S (converted to 16 bits) re-read as the register A operand of the
// next wgmma (k = 16 per instruction): ((2, 2, N/8), M, 1) becomes ((2, 2, 2), M, N/16). The value
// order of an m64nNk16 A fragment is (col pair, row +8, col +8), exactly two n8 accumulator tiles.
template <class Layout>
CUTE_HOST_DEVICE auto gmma_acc_as_a_layout(Layout acc) {
  using namespace cute;
  static_assert(size<2>(Layout{}) == 1, "expects one wgmma tile along N");
  auto v = logical_divide(get<0>(acc), Shape<Underscore, Underscore, _2>{});  // (2, 2, (2, N/16))
  return make_layout(make_layout(get<0>(v), get<1>(v), get<2, 0>(v)), get<1>(acc), get<2, 1>(v));
}

// dst = src converted to dst's element type (same layout; packed conversions where the ISA has them).
template <class SrcEngine, class DstEngine, class Layout>
__device__ __forceinline__ void convert_into(const cute::Tensor<SrcEngine, Layout>& src,
                                             cute::Tensor<DstEngine, Layout>& dst) {
  using namespace cute;
  using From = typename SrcEngine::value_type;
  using To = typename DstEngine::value_type;
  constexpr int N = decltype(size(src))::value;
  cutlass::NumericArrayConverter<To, From, N> converter;
  *reinterpret_cast<cutlass::Array<To, N>*>(dst.data()) =
      converter(*reinterpret_cast<const cutlass::Array<From, N>*>(src.data()));
}

}  // namespace flashcute::sm90
