#pragma once
// The backward's row-wise kernels around the main one (bwd_kernel.cuh):
//   preprocess   D = rowsum(dO * O) in fp32 per (row, q head) and the LSE in log2 units (+inf for a
//                row that sees no key, so that its P is exactly 0); clears the fp32 dQ tiles and,
//                in deterministic mode, the per-query-block turn counters (and the split units'
//                dK/dV slots and counters, bwd_grid.h). D is computed with the
//                main kernel's MMA atom in its k order (bwd_rowsum_do_o), so that dP - D cancels
//                exactly where it should
//   postprocess  dQ tiles (bwd_traits.cuh's BwdDqTile order) * softmax_scale -> dq (input dtype,
//                caller's strides), one CTA of the main kernel's threads per query block
//   GQA/MQA      dK, dV: the per-q-head fp32 shares summed over each group in q-head order -> dk, dv
// Memory-bound and simple: 16-byte accesses of the 16-bit tensors, 8 elements per thread per step: a
// quad of lanes per 32 columns of a row for D (the words then shuffled into MMA fragments), one
// thread per 8-column chunk for dK/dV. They are templated on the main kernel's traits so that every
// generated TU owns its instantiations.

#include <cuda_runtime.h>

#include <cmath>

#include <cutlass/array.h>

#include <cute/tensor.hpp>

#include "common/bwd_params.h"
#include "sm80/bwd_traits.cuh"

namespace flashcute::sm80 {

inline constexpr int kBwdRowThreads = 128;
inline constexpr int kBwdRowsPerCta = 64;
inline constexpr int kBwdLanesPerRow = 8;  // threads per row in the log2-LSE step (lane 0 writes it)
inline constexpr int kBwdRowsPerStep = kBwdRowThreads / kBwdLanesPerRow;
static_assert(kBwdRowsPerCta % kBwdRowsPerStep == 0, "rows per CTA must be whole steps");

// Sequence b's rows: first row in the workspace arrays (and varlen tensors) and length.
struct BwdSeq {
  int64_t row0 = 0;
  int64_t len = 0;
};

__device__ __forceinline__ BwdSeq bwd_seq_q(const BwdParams& p, int b) {
  if (p.cu_seqlens_q != nullptr) return {p.cu_seqlens_q[b], int64_t(p.cu_seqlens_q[b + 1]) - p.cu_seqlens_q[b]};
  return {int64_t(b) * p.seqlen_q, p.seqlen_q};
}

__device__ __forceinline__ BwdSeq bwd_seq_k(const BwdParams& p, int b) {
  if (p.cu_seqlens_k != nullptr) return {p.cu_seqlens_k[b], int64_t(p.cu_seqlens_k[b + 1]) - p.cu_seqlens_k[b]};
  return {int64_t(b) * p.seqlen_k, p.seqlen_k};
}

// Offset of (batch b, row i of the sequence, head h) in a tensor with the given strides.
__device__ __forceinline__ int64_t bwd_tensor_offset(const BwdParams& p, int b, const BwdSeq& s, int64_t i, int h,
                                                     int64_t batch_stride, int64_t row_stride, int64_t head_stride) {
  const bool varlen = p.cu_seqlens_q != nullptr;
  return (varlen ? (s.row0 + i) * row_stride : b * batch_stride + i * row_stride) + h * head_stride;
}

template <class Element>
__device__ __forceinline__ void store8(Element* dst, const float (&x)[8]) {
  cutlass::AlignedArray<Element, 8> a;
#pragma unroll
  for (int k = 0; k < 8; ++k) a[k] = static_cast<Element>(x[k]);
  *reinterpret_cast<cutlass::AlignedArray<Element, 8>*>(dst) = a;
}

__device__ __forceinline__ void add8(const float* src, float (&x)[8]) {
  const float4 a = *reinterpret_cast<const float4*>(src);
  const float4 b = *reinterpret_cast<const float4*>(src + 4);
  x[0] += a.x, x[1] += a.y, x[2] += a.z, x[3] += a.w;
  x[4] += b.x, x[5] += b.y, x[6] += b.z, x[7] += b.w;
}

// A 4 x 4 transpose of 32-bit words across a quad (the 4 lanes t = lane % 4 that share lane / 4): on
// entry lane t holds x[j] = M[t][j], on return x[j] = M[j][t]. Two rounds of butterfly shuffles,
// partner t ^ 2 then t ^ 1. In the round of bit b a lane keeps the two words whose j agrees with t in
// bit b and replaces the other two with what the partner sends: the partner's words at j ^ b, which
// are the ones the partner does not keep. After round 1, x[j] = (bit 1 of j == bit 1 of t) ? M[t][j]
// : M[t ^ 2][j ^ 2]; round 2 does the same in bit 0 to that matrix, giving M[j][t]. The selects keep
// the array's indices compile-time constants (registers); all 32 lanes must call it (full mask).
__device__ __forceinline__ void quad_transpose(uint32_t (&x)[4], int t) {
  const bool t2 = (t & 2) != 0;
  const uint32_t r0 = __shfl_xor_sync(0xffffffffu, t2 ? x[0] : x[2], 2);
  const uint32_t r1 = __shfl_xor_sync(0xffffffffu, t2 ? x[1] : x[3], 2);
  x[0] = t2 ? r0 : x[0], x[1] = t2 ? r1 : x[1];
  x[2] = t2 ? x[2] : r0, x[3] = t2 ? x[3] : r1;
  const bool t1 = (t & 1) != 0;
  const uint32_t s0 = __shfl_xor_sync(0xffffffffu, t1 ? x[0] : x[1], 1);
  const uint32_t s1 = __shfl_xor_sync(0xffffffffu, t1 ? x[2] : x[3], 1);
  x[0] = t1 ? s0 : x[0], x[2] = t1 ? s1 : x[2];
  x[1] = t1 ? x[1] : s0, x[3] = t1 ? x[3] : s1;
}

// D = rowsum(dO * O) for the 64 rows [r0, r0 + 64) of the CTA, one warp per 16 rows, computed as the
// diagonal of dO * O^T with the main kernel's MMA atom (m16n8k16) walking k in the same 16-wide
// slices, in the same order, from a zero accumulator as its dP = dO V^T (bwd_gemm). An MMA's output
// element depends only on its A row, B column and C input, so where O_i equals V_j bitwise (row i
// sees the single key j, P = 1) D_i equals dP_ij bitwise and dS = P (dP - D) is exactly 0, as the
// exact gradient is. A scalar fp32 sum here leaves ~1 ulp of noise in dS and so in dQ and dK.
// Fragments (PTX m16n8k16, g = lane / 4, t = lane % 4): A regs (row g | g + 8) x (k 2t | 2t + 8);
// B regs (k 2t | 2t + 8) at column g; C (row g | g + 8) x (column 2t, 2t + 1). With B = O's rows
// 0-7 the diagonal (i, i) sits at row g = i, column i: thread t = g / 2, c[g % 2]; with B = O's
// rows 8-15, (8 + j, j) sits at row g + 8 = 8 + j: thread t = g / 2, c[2 + g % 2].
// Loads: per k slice a lane's operands are 2 words (4 bytes: columns k + 2t and k + 8 + 2t) of each
// of its 4 rows, and a warp's 4-byte load touches only 16 bytes of each of 8 rows. Instead the quad
// reads each 32-column group [c, c + 32) of a row (k slices c and c + 16) as 4 16-byte chunks, lane t
// chunk t, whose word j is columns c + 8t + 2j, + 1: M[t][j]. The lane's words are M[0][t] (columns
// c + 2t: a0 / a1 and the first B reg of slice c), M[1][t] (c + 8 + 2t: a2 / a3, the second B reg),
// M[2][t] and M[3][t] (the same for slice c + 16): column t of M, which quad_transpose delivers. So
// every MMA receives the very registers the per-slice 4-byte loads gave it, in the same k order, and
// D is unchanged bitwise. ptxas orders the loads: under these launch bounds it keeps about one group
// (4 16-byte loads) ahead of the shuffles, 43 registers at d 128 (CUDA 13.0; 10 CTAs per SM). A
// minimum-blocks bound makes it hoist more at the cost of occupancy (5: d 128's 16 loads at once, 96
// registers), and spills at d 192 / 256 from 7 up.
template <class Tr>
__device__ __forceinline__ void bwd_rowsum_do_o(const BwdParams& p, int batch, int head, const BwdSeq& s, int64_t r0) {
  using Element = typename Tr::Element;
  static_assert(kBwdRowThreads / 32 * 16 == kBwdRowsPerCta, "one warp per 16 rows");
  constexpr int kGroupCols = 32;  // 4 lanes x 8 elements: one 16-byte chunk per lane, two k slices
  static_assert(Tr::kHeadDim % kGroupCols == 0, "the bucket must be whole 32-column groups");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  // The quad's 4 rows: dO rows g and g + 8 (the A operand), O rows g (B of `lo`) and g + 8 (B of
  // `hi`); nullptr past the sequence. Each starts on a 16-byte boundary: the API checks that the
  // base pointers and outer strides of out and dout are (validate.cpp, check_alignment).
  enum { kDo0, kDo1, kO0, kO1, kRows };
  const Element* row[kRows] = {nullptr, nullptr, nullptr, nullptr};
  int64_t rows[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    rows[h] = r0 + warp * 16 + g + 8 * h;
    if (rows[h] < s.len) {
      row[kDo0 + h] =
          static_cast<const Element*>(p.dout) +
          bwd_tensor_offset(p, batch, s, rows[h], head, p.do_batch_stride, p.do_row_stride, p.do_head_stride);
      row[kO0 + h] = static_cast<const Element*>(p.out) +
                     bwd_tensor_offset(p, batch, s, rows[h], head, p.o_batch_stride, p.o_row_stride, p.o_head_stride);
    }
  }
  float lo[4] = {0.0f, 0.0f, 0.0f, 0.0f}, hi[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  const int cols = p.head_dim_v;  // a multiple of 8: a chunk is all data or all of the bucket's padding
#pragma unroll
  for (int c = 0; c < Tr::kHeadDim; c += kGroupCols) {
    const int chunk = c + 8 * t;
    uint32_t w[kRows][4];  // then quad-transposed: w[r][m] = columns c + 8m + 2t, + 1 of row r
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      uint4 v = make_uint4(0u, 0u, 0u, 0u);  // padding and rows past the sequence: 0, not read
      if (row[r] != nullptr && chunk < cols) v = *reinterpret_cast<const uint4*>(row[r] + chunk);
      w[r][0] = v.x, w[r][1] = v.y, w[r][2] = v.z, w[r][3] = v.w;
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) quad_transpose(w[r], t);
#pragma unroll
    for (int k = 0; k < 2; ++k) {  // slices c, c + 16: k increasing, as in the main kernel
      const uint32_t a0 = w[kDo0][2 * k], a1 = w[kDo1][2 * k], a2 = w[kDo0][2 * k + 1], a3 = w[kDo1][2 * k + 1];
      Tr::MmaAtom::fma(lo[0], lo[1], lo[2], lo[3], a0, a1, a2, a3, w[kO0][2 * k], w[kO0][2 * k + 1], lo[0], lo[1],
                       lo[2], lo[3]);
      Tr::MmaAtom::fma(hi[0], hi[1], hi[2], hi[3], a0, a1, a2, a3, w[kO1][2 * k], w[kO1][2 * k + 1], hi[0], hi[1],
                       hi[2], hi[3]);
    }
  }
  if (t == g / 2) {
    const float d[2] = {g % 2 == 0 ? lo[0] : lo[1], g % 2 == 0 ? hi[2] : hi[3]};
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (rows[h] < s.len) p.softmax_d[head * p.total_q + s.row0 + rows[h]] = d[h];
  }
}

// The dQ accumulator's first tile of sequence `s` (batch b) and q head `head` (bwd_workspace.h).
template <class Tr>
__device__ __forceinline__ float* bwd_dq_tiles(const BwdParams& p, int batch, int head, const BwdSeq& s) {
  return p.dq_accum + (head * p.dq_accum_rows + s.row0 + int64_t(batch) * Tr::kBlockM) * Tr::kHeadDim;
}

// grid (ceil(seqlen_q / kBwdRowsPerCta), heads_q, batch).
template <class Tr>
__global__ void __launch_bounds__(kBwdRowThreads) bwd_preprocess_kernel(const __grid_constant__ BwdParams p) {
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  if (p.deterministic && blockIdx.x == 0) {
    int* sem = p.dq_semaphore + (int64_t(batch) * p.heads_q + head) * p.semaphore_m_blocks;
    for (int i = threadIdx.x; i < p.semaphore_m_blocks; i += kBwdRowThreads) sem[i] = 0;
  }
  const BwdSeq s = bwd_seq_q(p, batch);
  // Clear this sequence's dQ tiles, whole (every slot may receive a reduction): rows up to a whole
  // number of query blocks, which may pass the rows the grid covers, hence the stride loop.
  {
    const int64_t tile_rows = (s.len + Tr::kBlockM - 1) / Tr::kBlockM * Tr::kBlockM;
    float4* dq = reinterpret_cast<float4*>(bwd_dq_tiles<Tr>(p, batch, head, s));
    const int64_t n = tile_rows * (Tr::kHeadDim / 4);
    for (int64_t v = int64_t(blockIdx.x) * kBwdRowThreads + threadIdx.x; v < n; v += int64_t(gridDim.x) * kBwdRowThreads)
      dq[v] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  // The split units' dK/dV slots and counters (bwd_grid.h), spread over the whole grid.
  if (p.split_tail > 0) {
    const int64_t cta = blockIdx.x + int64_t(gridDim.x) * (blockIdx.y + int64_t(gridDim.y) * blockIdx.z);
    const int64_t stride = int64_t(gridDim.x) * gridDim.y * gridDim.z * kBwdRowThreads;
    float4* slots = reinterpret_cast<float4*>(p.dkv_split);
    const int64_t n = int64_t(p.split_tail) * (2 * Tr::kBlockN * Tr::kHeadDim / 4);
    for (int64_t v = cta * kBwdRowThreads + threadIdx.x; v < n; v += stride)
      slots[v] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int64_t v = cta * kBwdRowThreads + threadIdx.x; v < p.split_tail; v += stride) p.split_count[v] = 0;
  }
  const int64_t r0 = int64_t(blockIdx.x) * kBwdRowsPerCta;
  if (r0 >= s.len) return;
  bwd_rowsum_do_o<Tr>(p, batch, head, s, r0);
  const int lane = threadIdx.x % kBwdLanesPerRow;
#pragma unroll
  for (int step = 0; step < kBwdRowsPerCta / kBwdRowsPerStep; ++step) {
    const int64_t i = r0 + step * kBwdRowsPerStep + threadIdx.x / kBwdLanesPerRow;
    if (i >= s.len) return;
    const int64_t ws_row = head * p.total_q + s.row0 + i;
    if (lane == 0) {
      const float lse = p.lse[p.cu_seqlens_q != nullptr ? head * p.lse_head_stride + s.row0 + i
                                                        : batch * p.lse_batch_stride + head * p.lse_head_stride + i];
      constexpr float kLog2e = 1.4426950408889634f;
      p.lse_log2[ws_row] = lse == -INFINITY ? INFINITY : lse * kLog2e;  // a row that sees no key: P = 0
    }
  }
}

// One query block's dQ tile -> dq: grid (ceil(seqlen_q / kBlockM), heads_q, batch), the main kernel's
// threads. Thread t reads its fragment elements (BwdDqTile order: coalesced), scales them and puts
// each at its (row, column) of an smem tile through the dQ product's partition_C; then 16-byte
// stores of the rows and columns that exist.
template <class Tr>
__global__ void __launch_bounds__(Tr::kThreads) bwd_postprocess_dq_kernel(const __grid_constant__ BwdParams p) {
  using namespace cute;
  using Element = typename Tr::Element;
  using Tile = BwdDqTile<Tr>;
  constexpr int kBlockM = Tr::kBlockM;
  constexpr int kHeadDim = Tr::kHeadDim;
  constexpr int kPad = 8;  // row stride kHeadDim + 8 elements: the scattered 2-byte writes of 8 rows spread over the banks
  const int m_block = blockIdx.x;
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  const BwdSeq s = bwd_seq_q(p, batch);
  const int64_t m0 = int64_t(m_block) * kBlockM;
  if (m0 >= s.len) return;
  const float* tile = bwd_dq_tiles<Tr>(p, batch, head, s) + m0 * kHeadDim;
  __shared__ Element staged[kBlockM][kHeadDim + kPad];

  typename Tr::TiledMmadQ mma;
  const Tensor coords =
      mma.get_thread_slice(threadIdx.x).partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<Tile::kSliceCols>>{}));
  static_assert(decltype(size(coords))::value == Tile::kFragment, "BwdDqTile disagrees with the dQ partition");
#pragma unroll
  for (int slice = 0; slice < Tr::kDqSlices; ++slice) {
#pragma unroll
    for (int i = 0; i < Tile::kFragment; i += kDqAccumVec) {
      float v[kDqAccumVec];
      const float* src = tile + Tile::offset(slice, i, threadIdx.x);
      if constexpr (kDqAccumVec == 4) {
        const float4 x = *reinterpret_cast<const float4*>(src);
        v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
      } else if constexpr (kDqAccumVec == 2) {
        const float2 x = *reinterpret_cast<const float2*>(src);
        v[0] = x.x, v[1] = x.y;
      } else {
        v[0] = *src;
      }
#pragma unroll
      for (int j = 0; j < kDqAccumVec; ++j) {
        const auto rc = coords(i + j);
        staged[get<0>(rc)][slice * Tile::kSliceCols + get<1>(rc)] = static_cast<Element>(v[j] * p.softmax_scale);
      }
    }
  }
  __syncthreads();  // RAW: rows are written by the threads that own their fragments, read by others
  Element* dq = static_cast<Element*>(p.dq);
  constexpr int kChunksPerRow = kHeadDim / 8;
  for (int c = threadIdx.x; c < kBlockM * kChunksPerRow; c += Tr::kThreads) {
    const int r = c / kChunksPerRow;
    const int col = c % kChunksPerRow * 8;
    if (m0 + r < s.len && col < p.head_dim) {
      Element* dst =
          dq + bwd_tensor_offset(p, batch, s, m0 + r, head, p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride) + col;
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(&staged[r][col]);
    }
  }
}

// GQA/MQA: one thread per (key row, 8-column chunk of the bucket), kBwdRowThreads per CTA:
// grid (ceil(seqlen_k * kHeadDim / 8 / kBwdRowThreads), heads_kv, batch).
template <class Tr>
__global__ void __launch_bounds__(kBwdRowThreads) bwd_postprocess_dkv_kernel(const __grid_constant__ BwdParams p) {
  using Element = typename Tr::Element;
  constexpr int kChunks = Tr::kHeadDim / 8;
  const int kv_head = blockIdx.y;
  const int batch = blockIdx.z;
  const BwdSeq s = bwd_seq_k(p, batch);
  const int64_t t = int64_t(blockIdx.x) * kBwdRowThreads + threadIdx.x;
  const int64_t j = t / kChunks;
  const int c = static_cast<int>(t % kChunks) * 8;
  if (j >= s.len) return;
  const int64_t row = kv_head * int64_t(p.head_ratio) * p.total_k + s.row0 + j;  // the group's first q head
  if (c < p.head_dim) {
    float x[8] = {};
    const float* at = p.dk_accum + row * p.head_dim + c;
    for (int g = 0; g < p.head_ratio; ++g, at += p.total_k * p.head_dim) add8(at, x);  // fixed order: deterministic
    store8(static_cast<Element*>(p.dk) +
               bwd_tensor_offset(p, batch, s, j, kv_head, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride) + c,
           x);
  }
  if (c < p.head_dim_v) {
    float x[8] = {};
    const float* at = p.dv_accum + row * p.head_dim_v + c;
    for (int g = 0; g < p.head_ratio; ++g, at += p.total_k * p.head_dim_v) add8(at, x);
    store8(static_cast<Element*>(p.dv) +
               bwd_tensor_offset(p, batch, s, j, kv_head, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride) + c,
           x);
  }
}

}  // namespace flashcute::sm80
