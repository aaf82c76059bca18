#pragma once
// Definition of the smoke-test product (see smoke_mma.h). One CTA of 4 warps computes a 64x64 tile
// of C, stepping over k in 32-wide slices: cp.async into swizzled smem, ldmatrix into registers,
// mma.sync m16n8k16 accumulating in fp32.

#include <cuda_runtime.h>

#include <cute/tensor.hpp>

#include "common/element.cuh"
#include "smoke/smoke_mma.h"

namespace flashcute::smoke {

template <class Element>
struct SmokeTraits {
  using TileM = cute::Int<kSmokeTileM>;
  using TileN = cute::Int<kSmokeTileN>;
  using TileK = cute::Int<kSmokeTileK>;
  static constexpr int kThreads = 128;

  using MmaAtom = std::conditional_t<std::is_same_v<Element, cutlass::half_t>,
                                     cute::SM80_16x8x16_F32F16F16F32_TN, cute::SM80_16x8x16_F32BF16BF16F32_TN>;
  // 4 warps stacked along M; each warp's 16x16 N slice matches one ldmatrix.x4 of B.
  using TiledMma = cute::TiledMMA<cute::MMA_Atom<MmaAtom>, cute::Layout<cute::Shape<cute::_4, cute::_1, cute::_1>>,
                                  cute::Tile<cute::Int<64>, cute::_16, cute::_16>>;

  // Rows of 32 elements (64 bytes): Swizzle<2,3,3> spreads the eight 16-byte chunks of 8 rows over
  // all banks, so both the cp.async stores and the ldmatrix loads are conflict-free.
  using SmemAtom = decltype(cute::composition(
      cute::Swizzle<2, 3, 3>{}, cute::Layout<cute::Shape<cute::_8, TileK>, cute::Stride<TileK, cute::_1>>{}));
  using SmemLayoutA = decltype(cute::tile_to_shape(SmemAtom{}, cute::Shape<TileM, TileK>{}));
  using SmemLayoutB = decltype(cute::tile_to_shape(SmemAtom{}, cute::Shape<TileN, TileK>{}));

  // 128 threads x 8 elements: 4 threads cover a 32-element row, 32 rows per pass.
  using GmemCopy = decltype(cute::make_tiled_copy(
      cute::Copy_Atom<cute::SM80_CP_ASYNC_CACHEGLOBAL<cute::uint128_t>, Element>{},
      cute::Layout<cute::Shape<cute::_32, cute::_4>, cute::Stride<cute::_4, cute::_1>>{},
      cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));
  using SmemCopyAtom = cute::Copy_Atom<cute::SM75_U32x4_LDSM_N, Element>;
};

template <class Element>
__global__ void __launch_bounds__(SmokeTraits<Element>::kThreads)
    smoke_mma_kernel(const Element* __restrict__ a, const Element* __restrict__ b, float* __restrict__ c, int64_t m,
                     int64_t n, int64_t k) {
  using namespace cute;
  using Tr = SmokeTraits<Element>;
  __shared__ alignas(128) Element smem_a[cosize_v<typename Tr::SmemLayoutA>];
  __shared__ alignas(128) Element smem_b[cosize_v<typename Tr::SmemLayoutB>];

  Tensor mA = make_tensor(make_gmem_ptr(a), make_shape(m, k), make_stride(k, _1{}));  // (M, K)
  Tensor mB = make_tensor(make_gmem_ptr(b), make_shape(n, k), make_stride(k, _1{}));  // (N, K)
  Tensor mC = make_tensor(make_gmem_ptr(c), make_shape(m, n), make_stride(n, _1{}));  // (M, N)
  auto tiler = make_shape(typename Tr::TileM{}, typename Tr::TileN{}, typename Tr::TileK{});
  auto coord = make_coord(blockIdx.x, blockIdx.y, _);
  Tensor gA = local_tile(mA, tiler, coord, Step<_1, X, _1>{});  // (TM, TK, k_tiles)
  Tensor gB = local_tile(mB, tiler, coord, Step<X, _1, _1>{});  // (TN, TK, k_tiles)
  Tensor gC = local_tile(mC, tiler, coord, Step<_1, _1, X>{});  // (TM, TN)
  Tensor sA = make_tensor(make_smem_ptr(smem_a), typename Tr::SmemLayoutA{});  // (TM, TK)
  Tensor sB = make_tensor(make_smem_ptr(smem_b), typename Tr::SmemLayoutB{});  // (TN, TK)

  typename Tr::GmemCopy gmem_copy;
  auto g2s = gmem_copy.get_slice(threadIdx.x);
  Tensor tAgA = g2s.partition_S(gA);  // (CPY, CPY_M, CPY_K, k_tiles)
  Tensor tAsA = g2s.partition_D(sA);  // (CPY, CPY_M, CPY_K)
  Tensor tBgB = g2s.partition_S(gB);  // (CPY, CPY_N, CPY_K, k_tiles)
  Tensor tBsB = g2s.partition_D(sB);  // (CPY, CPY_N, CPY_K)

  typename Tr::TiledMma mma;
  auto thr_mma = mma.get_slice(threadIdx.x);
  Tensor tCrA = thr_mma.partition_fragment_A(sA);  // (MMA, MMA_M, MMA_K)
  Tensor tCrB = thr_mma.partition_fragment_B(sB);  // (MMA, MMA_N, MMA_K)
  Tensor tCgC = thr_mma.partition_C(gC);           // (MMA, MMA_M, MMA_N)
  Tensor tCrC = partition_fragment_C(mma, select<0, 1>(tiler));  // (MMA, MMA_M, MMA_N)
  clear(tCrC);

  auto s2r_copy_a = make_tiled_copy_A(typename Tr::SmemCopyAtom{}, mma);
  auto s2r_copy_b = make_tiled_copy_B(typename Tr::SmemCopyAtom{}, mma);
  auto s2r_a = s2r_copy_a.get_slice(threadIdx.x);
  auto s2r_b = s2r_copy_b.get_slice(threadIdx.x);
  Tensor tXsA = s2r_a.partition_S(sA);    // (CPY, CPY_M, CPY_K)
  Tensor tXrA = s2r_a.retile_D(tCrA);     // (CPY, CPY_M, CPY_K)
  Tensor tXsB = s2r_b.partition_S(sB);    // (CPY, CPY_N, CPY_K)
  Tensor tXrB = s2r_b.retile_D(tCrB);     // (CPY, CPY_N, CPY_K)

  const int k_tiles = size<2>(gA);
  for (int kt = 0; kt < k_tiles; ++kt) {
    copy(gmem_copy, tAgA(_, _, _, kt), tAsA);
    copy(gmem_copy, tBgB(_, _, _, kt), tBsB);
    cp_async_fence();
    cp_async_wait<0>();
    __syncthreads();  // RAW: the whole tile is in smem before any warp's ldmatrix reads it
    CUTE_UNROLL
    for (int kb = 0; kb < size<2>(tCrA); ++kb) {
      copy(s2r_copy_a, tXsA(_, _, kb), tXrA(_, _, kb));
      copy(s2r_copy_b, tXsB(_, _, kb), tXrB(_, _, kb));
      gemm(mma, tCrA(_, _, kb), tCrB(_, _, kb), tCrC);
    }
    __syncthreads();  // WAR: every warp is done reading the tile before the next cp.async overwrites it
  }
  copy(tCrC, tCgC);
}

template <KernelKey K>
Status SmokeMma<K>::run(const SmokeMmaArgs& args) {
  // mma.sync runs on every target: the sm90 key proves the sm_90a build (compiled with the SM90
  // path's -gencode) as the sm80 key proves sm_80 SASS, compute_80 PTX and sm_90 SASS.
  using Element = element_t<K.dtype>;
  if (args.m <= 0 || args.n <= 0 || args.k <= 0 || args.m % kSmokeTileM || args.n % kSmokeTileN ||
      args.k % kSmokeTileK)
    return Status::Invalid("smoke_mma: m, n, k must be positive multiples of 64, 64, 32");
  const dim3 grid(static_cast<unsigned>(args.m / kSmokeTileM), static_cast<unsigned>(args.n / kSmokeTileN));
  smoke_mma_kernel<Element><<<grid, SmokeTraits<Element>::kThreads, 0, reinterpret_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const Element*>(args.a), static_cast<const Element*>(args.b), args.c, args.m, args.n, args.k);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return Status::Cuda(std::string("smoke_mma launch: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  return Status::Ok();
}

}  // namespace flashcute::smoke
