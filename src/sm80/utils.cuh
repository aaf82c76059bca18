#pragma once
// CuTe building blocks of the SM80 path: predicated tile copies, the two MMA loops (both operands
// from smem; A from registers), layout views of mma.sync accumulators, register dtype conversion.

#include <cute/tensor.hpp>
#include <cutlass/array.h>
#include <cutlass/numeric_conversion.h>

#include <type_traits>
#include <utility>

namespace flashcute::sm80 {

// Special registers read afresh: ptxas does not rematerialize S2R, so threadIdx/blockIdx read once at
// the top stay live through the whole main loop (or are spilled) when only the epilogue needs them.
__device__ __forceinline__ int fresh_tid_x() {
  int v;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(v));
  return v;
}
__device__ __forceinline__ int3 fresh_ctaid() {
  int3 v;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(v.x));
  asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(v.y));
  asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(v.z));
  return v;
}

// Copies a thread's (CPY, CPY_M, CPY_K) partition of a tile; `coord` is the same partition of an
// identity tensor. Rows >= max_rows and columns >= max_cols are zero-filled in the destination
// instead of read (out-of-range rows of the last tile; columns beyond d of a padded bucket).
template <class TiledCopy, class Src, class Dst, class Coord>
__device__ __forceinline__ void copy_zfill(const TiledCopy& tiled_copy, const Src& src, Dst&& dst, const Coord& coord,
                                           int max_rows, int max_cols) {
  using namespace cute;
  // Interior tiles (all but the last K/V block and padded head dims): this thread's last row and
  // column are in range, so every copy is; one test instead of one per copy.
  constexpr int kLastM = decltype(size<1>(src))::value - 1;
  constexpr int kLastK = decltype(size<2>(src))::value - 1;
  if (get<0>(coord(0, kLastM, 0)) < max_rows && get<1>(coord(0, 0, kLastK)) < max_cols) {
    copy(tiled_copy, src, dst);
    return;
  }
  CUTE_UNROLL
  for (int m = 0; m < size<1>(src); ++m) {
    if (get<0>(coord(0, m, 0)) < max_rows) {
      CUTE_UNROLL
      for (int k = 0; k < size<2>(src); ++k) {
        if (get<1>(coord(0, m, k)) < max_cols) {
          copy(tiled_copy, src(_, m, k), dst(_, m, k));
        } else {
          clear(dst(_, m, k));
        }
      }
    } else {
      clear(dst(_, m, _));
    }
  }
}

// copy_zfill for a tile whose rows are all in range (an interior K/V block): only columns >= max_cols
// (a padded bucket) are zero-filled. The full-width test is uniform (max_cols vs the tile width), and
// the coordinate partition is built only on the padded path (make_coord()), so no per-thread bound
// has to stay live across a loop for it.
template <class TiledCopy, class Src, class Dst, class MakeCoord>
__device__ __forceinline__ void copy_zfill_cols(const TiledCopy& tiled_copy, const Src& src, Dst&& dst,
                                                const MakeCoord& make_coord, int max_cols, int tile_cols) {
  using namespace cute;
  if (max_cols >= tile_cols) {
    copy(tiled_copy, src, dst);
    return;
  }
  const auto coord = make_coord();
  CUTE_UNROLL
  for (int k = 0; k < size<2>(src); ++k) {
    if (get<1>(coord(0, 0, k)) < max_cols) {
      copy(tiled_copy, src(_, _, k), dst(_, _, k));
    } else {
      clear(dst(_, _, k));
    }
  }
}

// Stores a thread's (CPY, CPY_M, CPY_K) register partition to gmem, skipping out-of-range rows/cols.
template <class TiledCopy, class Src, class Dst, class Coord>
__device__ __forceinline__ void copy_predicated(const TiledCopy& tiled_copy, const Src& src, Dst&& dst,
                                                const Coord& coord, int max_rows, int max_cols) {
  using namespace cute;
  CUTE_UNROLL
  for (int m = 0; m < size<1>(src); ++m) {
    if (get<0>(coord(0, m, 0)) < max_rows) {
      CUTE_UNROLL
      for (int k = 0; k < size<2>(src); ++k) {
        if (get<1>(coord(0, m, k)) < max_cols) copy(tiled_copy, src(_, m, k), dst(_, m, k));
      }
    }
  }
}

// ldmatrix sources in a swizzled smem tile, one XOR per copy. cute partitions a Swizzle<B,M,S> tile
// into per-thread runtime strides (+-16, +-32 elements along k), two registers per operand kept live
// across a kernel's main loop next to the thread's base offset. The swizzle F is XOR-linear and the
// partition's static offsets d have no bits in F's source field (static_assert below), so with the
// thread's unswizzled offset t, whose bits in F's target field are disjoint from every d's (every fwd
// tile config, thread and copy is checked against cute on the host: tests/gpu/test_fwd_sm80_ldsm_xor.cu),
//   F(t + d) = (F(t) ^ (d & Z)) + (d & ~Z),   Z = F's target bits:
// one register per operand (F(t)) and one LOP3 per distinct d & Z, the rest an immediate. Offsets are
// tile-relative, as cute's are.
template <class Element, class SmemLayout, class ThrCopy>
struct LdsmXorSource {
  using Swz = decltype(cute::get_swizzle_portion(SmemLayout{}));
  using NoSwz = decltype(cute::get_nonswizzle_portion(SmemLayout{}));
  // (CPY, CPY_M/N, CPY_K) offsets of a thread's partition, relative to its first element.
  using Part = decltype(std::declval<const ThrCopy&>()
                            .partition_S(cute::make_tensor(cute::make_smem_ptr(static_cast<Element*>(nullptr)), NoSwz{}))
                            .layout());
  static constexpr int kZ = ((1 << Swz::num_bits) - 1) << Swz::num_base;
  static constexpr int kY = kZ << Swz::num_shft;
  static constexpr bool kStaticOffsetsOk = [] {
    for (int i = 0; i < int(cute::size(Part{})); ++i)
      if (int(Part{}(i)) & kY) return false;
    return true;
  }();
  static_assert(kStaticOffsetsOk, "a partition offset moves the swizzle's source bits");

  // F(t) of this thread; `tile` is any tile of this layout (only the offset is kept).
  CUTE_HOST_DEVICE static int thread_offset(const ThrCopy& thr, Element* tile) {
    const Element* first = cute::raw_pointer_cast(thr.partition_S(cute::make_tensor(cute::make_smem_ptr(tile), NoSwz{})).data());
    return Swz{}(static_cast<int>(first - tile));
  }

  Element* tile;
  int thr;  // thread_offset()

  // The (CPY) source of copy (m, k) of the partition.
  template <class M, class K>
  CUTE_HOST_DEVICE auto operator()(M m, K k) const {
    const int d = Part{}(0, m, k);
    return cute::make_tensor(cute::make_smem_ptr(tile + ((thr ^ (d & kZ)) + (d & ~kZ))),
                             cute::make_layout(cute::layout<0>(Part{})));
  }
};

template <class T>
struct is_ldsm_xor_source : std::false_type {};
template <class E, class L, class T>
struct is_ldsm_xor_source<LdsmXorSource<E, L, T>> : std::true_type {};

// copy(copy, src(_, _, k), dst(_, _, k)) for a cute smem partition or an LdsmXorSource.
template <class TiledCopy, class Src, class Dst, class K>
__device__ __forceinline__ void copy_k_slice(const TiledCopy& tiled_copy, const Src& src, Dst&& dst, K k) {
  using namespace cute;
  if constexpr (is_ldsm_xor_source<Src>::value) {
    static_assert(decltype(size<1>(typename Src::Part{}))::value == decltype(size<1>(dst))::value &&
                      decltype(size<2>(typename Src::Part{}))::value == decltype(size<2>(dst))::value,
                  "source and fragment partitions disagree");
    CUTE_UNROLL
    for (int m = 0; m < size<1>(dst); ++m) {
      Tensor dst_m = dst(_, m, k);
      copy(tiled_copy, src(m, k), dst_m);
    }
  } else {
    copy(tiled_copy, src(_, _, k), dst(_, _, k));
  }
}

// acc += A B^T with both operands in smem. kPrefetch: the ldmatrix of k-slice i+1 is issued before
// the MMAs of slice i so shared-memory latency hides behind the tensor cores (two slices of operand
// fragments live); without it each slice is loaded right before its MMAs and ptxas schedules the
// loads within the registers it has.
template <bool kPrefetch = true, class TiledMma, class Acc, class FragA, class FragB, class SmemA, class SmemB, class CopyA, class CopyB,
          class ThrCopyA, class ThrCopyB>
__device__ __forceinline__ void gemm_ss(const TiledMma& mma, Acc& acc, FragA& tCrA, FragB& tCrB, const SmemA& tCsA,
                                        const SmemB& tCsB, const CopyA& copy_a, const CopyB& copy_b,
                                        const ThrCopyA& thr_copy_a, const ThrCopyB& thr_copy_b) {
  using namespace cute;
  Tensor tCrA_view = thr_copy_a.retile_D(tCrA);  // (CPY, CPY_M, CPY_K)
  Tensor tCrB_view = thr_copy_b.retile_D(tCrB);  // (CPY, CPY_N, CPY_K)
  if constexpr (!kPrefetch) {
    CUTE_UNROLL
    for (int i = 0; i < size<2>(tCrA); ++i) {
      copy_k_slice(copy_a, tCsA, tCrA_view, i);
      copy_k_slice(copy_b, tCsB, tCrB_view, i);
      gemm(mma, tCrA(_, _, i), tCrB(_, _, i), acc);
    }
    return;
  }
  copy_k_slice(copy_a, tCsA, tCrA_view, _0{});
  copy_k_slice(copy_b, tCsB, tCrB_view, _0{});
  CUTE_UNROLL
  for (int i = 0; i < size<2>(tCrA); ++i) {
    if (i + 1 < size<2>(tCrA)) {
      copy_k_slice(copy_a, tCsA, tCrA_view, i + 1);
      copy_k_slice(copy_b, tCsB, tCrB_view, i + 1);
    }
    gemm(mma, tCrA(_, _, i), tCrB(_, _, i), acc);
  }
}

// acc += A B^T with A already in registers (P) and B in smem (V^T); kPrefetch as in gemm_ss.
template <bool kPrefetch = true, class TiledMma, class Acc, class FragA, class FragB, class SmemB, class CopyB, class ThrCopyB>
__device__ __forceinline__ void gemm_rs(const TiledMma& mma, Acc& acc, const FragA& tCrA, FragB& tCrB,
                                        const SmemB& tCsB, const CopyB& copy_b, const ThrCopyB& thr_copy_b) {
  using namespace cute;
  Tensor tCrB_view = thr_copy_b.retile_D(tCrB);
  if constexpr (!kPrefetch) {
    CUTE_UNROLL
    for (int i = 0; i < size<2>(tCrA); ++i) {
      copy_k_slice(copy_b, tCsB, tCrB_view, i);
      gemm(mma, tCrA(_, _, i), tCrB(_, _, i), acc);
    }
    return;
  }
  copy_k_slice(copy_b, tCsB, tCrB_view, _0{});
  CUTE_UNROLL
  for (int i = 0; i < size<2>(tCrA); ++i) {
    if (i + 1 < size<2>(tCrA)) copy_k_slice(copy_b, tCsB, tCrB_view, i + 1);
    gemm(mma, tCrA(_, _, i), tCrB(_, _, i), acc);
  }
}

// An m16n8 accumulator fragment ((2 cols, 2 rows), MMA_M, MMA_N) seen as (rows, cols) =
// ((2, MMA_M), (2, MMA_N)), so softmax code can loop over a thread's rows.
template <class Layout>
__device__ __forceinline__ auto rowcol_layout(Layout acc) {
  using namespace cute;
  static_assert(rank(Layout{}) == 3 && size<0>(Layout{}) == 4, "expects an SM80 m16n8 accumulator layout");
  return make_layout(make_layout(get<0, 1>(acc), get<1>(acc)), make_layout(get<0, 0>(acc), get<2>(acc)));
}

// The same registers re-read as the A operand of the next m16n8k16 MMA: two n8 accumulator tiles
// side by side hold exactly one k16 slice of A, so ((2,2), M, N) becomes ((2,2,2), M, N/2).
template <class Layout>
__device__ __forceinline__ auto acc_as_a_layout(Layout acc) {
  using namespace cute;
  static_assert(size<2>(Layout{}) % 2 == 0, "needs an even number of n8 tiles");
  auto split = logical_divide(acc, Shape<Underscore, Underscore, _2>{});  // (4, M, (2, N/2))
  return make_layout(make_layout(get<0>(split), get<2, 0>(split)), get<1>(split), get<2, 1>(split));
}

// Converts a register tensor's values to `To` (packed conversions where the ISA has them).
template <class To, class Engine, class Layout>
__device__ __forceinline__ auto convert_to(const cute::Tensor<Engine, Layout>& src) {
  using namespace cute;
  using From = typename Engine::value_type;
  constexpr int N = decltype(size(src))::value;
  Tensor dst = make_tensor<To>(src.layout());
  cutlass::NumericArrayConverter<To, From, N> converter;
  *reinterpret_cast<cutlass::Array<To, N>*>(dst.data()) =
      converter(*reinterpret_cast<const cutlass::Array<From, N>*>(src.data()));
  return dst;
}

}  // namespace flashcute::sm80
