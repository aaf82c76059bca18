#pragma once
// SM80 backward main kernel (FlashAttention-2 class): one CTA per (key block, q head, batch), in the
// grid order of bwd_grid.h (longest first within groups of (batch, q head) pairs). K and V
// of the block stay in smem; the CTA walks the query blocks that see any of its keys, in ascending
// order, with Q and dO (and the rows' LSE and D) double-buffered through cp.async: the next block's
// loads fly during this block's five products (one buffer for d 256, where two do not fit an A100).
// Per query block:
//   S = Q K^T, dP = dO V^T                    (mma.sync, operands from smem; in row slices)
//   P = exp2(S' * mult - lse * log2 e), dS = P * (dP - D) [* (1 - tanh^2) under softcap]
//   P, dS -> smem (16-bit)
//   dV += P^T dO, dK += dS^T Q                (registers, the whole loop; transposing ldmatrix)
//   dQ  = dS K -> fp32 reductions into the workspace (in column slices; deterministic mode: in
//                 key-block order, one turn counter per query block)
// Where bwd_grid.h splits the grid's last units, a piece walks a run of the unit's query blocks and
// the last piece to finish writes the unit's dK and dV from the pieces' sums (bwd_merge_pieces).
// S' is the forward's score transform (softcap, then ALiBi); as in the forward, a separate
// instantiation (kTransform) carries it, so the plain kernel has only the raw forms of P and dS. Masks
// are applied only to the query blocks a row boundary crosses (decided once per block), with the
// forward's per-row interval test (mask.h's visible_key_range_i32).
//
// Registers are the constraint (dK + dV alone are 64-128 per thread): S/dP and dQ are computed in
// slices, the per-CTA scalars live in shared memory (BwdCtaScalars), the dQ reductions are explicit
// .global PTX, and the plain kernel rebuilds its smem views from an opaque base each step. With any
// of these undone, nvcc 13.0 spilled somewhere.

#include <cute/tensor.hpp>

#include <cmath>
#include <type_traits>

#include "common/bwd_params.h"
#include "common/mask.h"
#include "common/math.cuh"
#include "sm80/bwd_grid.h"
#include "sm80/bwd_traits.cuh"
#include "sm80/utils.cuh"

namespace flashcute::sm80 {

// The query rows [*lo, *hi) of a sequence that see some key of [n0, n1) (empty: *lo == *hi). Row i
// sees key j iff 0 <= j < len_k and diag(i) - left <= j <= diag(i) + right with diag(i) = i + len_k -
// len_q (mask.h); for a block [n0, min(n1, len_k)) that is n0 - off - right <= i <= n1' - 1 - off +
// left. This is exactly the set of rows whose visible_key_range meets the block, so a query block
// is visited by precisely the key blocks that its own row range reaches (the deterministic mode's
// turn order depends on that; checked exhaustively against key_visible on small shapes).
__device__ __forceinline__ void bwd_visible_rows(int64_t n0, int64_t n1, int64_t len_q, int64_t len_k, Window w,
                                                 int64_t* lo, int64_t* hi) {
  const int64_t off = len_k - len_q;
  if (n1 > len_k) n1 = len_k;
  int64_t a = w.right >= 0 ? n0 - off - w.right : 0;
  int64_t b = w.left >= 0 ? n1 - off + w.left : len_q;
  if (a < 0) a = 0;
  if (b > len_q) b = len_q;
  if (n1 <= n0 || b < a) b = a;
  *lo = a;
  *hi = b;
}

// The query rows [*lo, *hi) that see every key of [n0, n0 + kBlockN) (empty: *lo == *hi; none when
// the block runs past len_k), in 32-bit in-sequence indices (validation bounds lengths by 2^29; the
// window is clamped as visible_key_range_i32 does). Row i sees the whole block iff begin(i) <= n0 and
// end(i) >= n0 + kBlockN; both ends move right with i, so these rows are one interval, and a query
// block inside it needs no mask. (end(i) clamped up to begin(i) cannot pass: begin(i) <= n0.)
template <int kBlockN>
__device__ __forceinline__ void bwd_unmasked_rows(int n0, int len_q, int len_k, Window w, int* lo, int* hi) {
  const int64_t limit = int64_t(len_q) + len_k;
  const int left = static_cast<int>(w.left > limit ? limit : w.left);
  const int right = static_cast<int>(w.right > limit ? limit : w.right);
  const int off = len_k - len_q;
  int a = right >= 0 ? n0 + kBlockN - off - right - 1 : 0;
  int b = left >= 0 ? n0 - off + left + 1 : len_q;
  if (a < 0) a = 0;
  if (b > len_q) b = len_q;
  if (n0 + kBlockN > len_k || b < a) b = a;
  *lo = a;
  *hi = b;
}

__device__ __forceinline__ int ld_acquire_gpu(const int* ptr) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(__cvta_generic_to_global(ptr)) : "memory");
  return v;
}

__device__ __forceinline__ void st_release_gpu(int* ptr, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(__cvta_generic_to_global(ptr)), "r"(v) : "memory");
}

// 4-byte cp.async; src_size 0 (pred false) zero-fills the destination without reading.
__device__ __forceinline__ void cp_async_f32_zfill(float* smem_dst, const float* gmem_src, bool pred) {
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(pred ? 4 : 0));
}

// Adds kDqAccumVec adjacent fp32 values to global memory without returning anything: one vector
// reduction (sm_90) or one scalar one (sm_80). Explicit .global PTX: the pointer comes from shared
// memory (BwdCtaScalars), where the compiler loses its address space and emits generic atomics with a
// shared/local fallback loop around every one of them.
__device__ __forceinline__ void dq_accum_add(float* ptr, const float* v) {
  const size_t g = __cvta_generic_to_global(ptr);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(kDqAccumVec == 4 || kDqAccumVec == 2);
  if constexpr (kDqAccumVec == 4)
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(g), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
                 : "memory");
  else
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(g), "f"(v[0]), "f"(v[1]) : "memory");
#else
  static_assert(kDqAccumVec == 1);
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(g), "f"(v[0]) : "memory");
#endif
}

// How the raw scores s = q.k become the softmax's logits (the forward's score transform).
enum class BwdScore {
  kRaw,      // no transform: the exp2 multiplier holds softmax_scale * log2(e)
  kScaled,   // s * softmax_scale, then ALiBi
  kSoftcap,  // softcap * tanh(s * softmax_scale / softcap), then ALiBi; dS gets the tanh derivative
};

template <BwdScore kScore, bool kMask, class Scores, class DP, class Coords>
__device__ __forceinline__ void bwd_p_ds(Scores& s, DP& dp, const Coords& coords, const BwdParams& p, int m0, int n0,
                                         int len_q, int len_k, float slope, const float* s_lse2, const float* s_dd) {
  using namespace cute;
  const float mult = p.score_log2_mult;
  const bool alibi = p.alibi_slopes != nullptr;
  // Columns relative to this thread's first one: compile-time offsets, so each mask and ALiBi test
  // below is one compare of a constant against a per-row register.
  const int col0 = get<1>(coords(0, 0));
  CUTE_UNROLL
  for (int r = 0; r < size<0>(s); ++r) {
    const int row = get<0>(coords(r, 0));
    const int i = m0 + row;
    const float lse2 = s_lse2[row];
    const float dd = s_dd[row];
    int lo = 0, hi = 0;  // visible columns [lo, hi), relative to n0 + col0
    if constexpr (kMask) {
      // 32-bit: in-sequence indices are below 2^29, so the bounds and the differences below fit.
      visible_key_range_i32(i, len_q, len_k, p.window, &lo, &hi);
      lo -= n0 + col0;
      hi -= n0 + col0;
    }
    // Row i's diagonal key, same origin, as a float: |diag - col| is then one FADD with an abs
    // modifier (exact below 2^24; integer abs made ptxas precompute a predicate per element).
    const float diag = static_cast<float>(i + len_k - len_q - n0 - col0);
    CUTE_UNROLL
    for (int c = 0; c < size<1>(s); ++c) {
      const int col = get<1>(coords(0, c)) - col0;
      float x = s(r, c);
      float dtanh = 1.0f;
      if constexpr (kScore == BwdScore::kSoftcap) {
        const float t = tanh_fast(x * p.softcap_scale);  // the forward's tanh: P matches its LSE
        x = p.softcap * t;
        dtanh = 1.0f - t * t;  // d/ds of c*tanh(s*scale/c) is scale*(1 - t^2); scale comes at the end
      } else if constexpr (kScore == BwdScore::kScaled) {
        x *= p.softmax_scale;
      }
      if constexpr (kScore != BwdScore::kRaw) {
        if (alibi) x -= slope * fabsf(diag - static_cast<float>(col));
      }
      float prob = exp2_approx(fmaf(x, mult, -lse2));
      float ds = prob * (dp(r, c) - dd);
      if constexpr (kScore == BwdScore::kSoftcap) ds *= dtanh;
      if constexpr (kMask) {
        // Zeroed, not multiplied (a non-finite dP of a key this row cannot see stays out of its dQ),
        // with integer bit operations instead of a predicate per element: keep is all ones iff
        // lo <= col < hi (both differences non-negative), else 0. Predicated selects made ptxas
        // materialize dozens of predicates at once and spill.
        const int keep = ~((col - lo) | (hi - 1 - col)) >> 31;
        prob = __int_as_float(__float_as_int(prob) & keep);
        ds = __int_as_float(__float_as_int(ds) & keep);
      }
      s(r, c) = prob;
      dp(r, c) = ds;
    }
  }
}

// acc += A B^T with both operands in smem, walking k in steps of kU 16-wide k-slices: ldmatrix of
// the step's slices, then their MMAs. tCrA / tCrB hold kU slices (partitioned from a 16*kU-wide
// tile), tCsA / tCsB all of them. With kU = all slices this is one fully unrolled product (ptxas
// schedules it freely, like utils.cuh's gemm_ss); with fewer, the loop over steps stays rolled, which
// bounds the operand fragments ptxas keeps in flight next to the dK/dV accumulators, but recomputes
// the swizzled addresses every step (d 128: ~40% of the loop's instructions). The tile config picks
// kU per head dim (k_step): the rolled form only where the unrolled one spills (none since the
// softcap/ALiBi split).
template <class TiledMma, class Acc, class FragA, class FragB, class SmemA, class SmemB, class CopyA, class CopyB,
          class ThrCopyA, class ThrCopyB>
__device__ __forceinline__ void bwd_gemm(const TiledMma& mma, Acc& acc, FragA& tCrA, FragB& tCrB, const SmemA& tCsA,
                                         const SmemB& tCsB, const CopyA& copy_a, const CopyB& copy_b,
                                         const ThrCopyA& thr_copy_a, const ThrCopyB& thr_copy_b) {
  using namespace cute;
  constexpr int kU = decltype(size<2>(tCrA))::value;
  constexpr int kSlices = decltype(size<2>(tCsA))::value;
  static_assert(kSlices % kU == 0 && decltype(size<2>(tCsB))::value == kSlices, "k extents disagree");
  Tensor tCrA_view = thr_copy_a.retile_D(tCrA);  // (CPY, CPY_M, kU)
  Tensor tCrB_view = thr_copy_b.retile_D(tCrB);  // (CPY, CPY_N, kU)
#pragma unroll 1
  for (int k0 = 0; k0 < kSlices; k0 += kU) {
    CUTE_UNROLL
    for (int u = 0; u < kU; ++u) {
      copy(copy_a, tCsA(_, _, k0 + u), tCrA_view(_, _, u));
      copy(copy_b, tCsB(_, _, k0 + u), tCrB_view(_, _, u));
    }
    CUTE_UNROLL
    for (int u = 0; u < kU; ++u) gemm(mma, tCrA(_, _, u), tCrB(_, _, u), acc);
  }
}

// Per-CTA scalars used inside and after the main loop, parked in shared memory (written once, read
// where needed; bwd_tile_config.h counts kBwdScalarBytes). Kept in registers through the loop they
// were what ptxas spilled whenever the products' operand fragments peaked.
struct BwdCtaScalars {
  const void* q;                        // Q of this (sequence, q head), row 0
  const void* dout;                     // dO, same
  const float* lse2;                    // LSE in log2 units, row 0 of this (sequence, q head) in the workspace
  const float* dd;                      // D, same
  float* dq_acc;                        // dQ accumulator: this (sequence, q head)'s first tile
  int* semaphores;                      // deterministic mode: this (batch, q head)'s turn counters
  int64_t q_row_stride, do_row_stride;  // parked too: their per-thread 64-bit products were spilled
  int len_q, len_k;  // in-sequence indices are 32-bit (validation bounds lengths by 2^29)
  int64_t k_row0;  // first key row of the sequence (workspace / varlen tensors)
  // The walk over the query blocks: block of iteration it = m_first + it * m_dir; the blocks
  // [um_lo, um_hi) need no mask. Read per step, like the rest: live across the loop they spilled.
  int m_first, m_dir, um_lo, um_hi;
  int n_block, head, batch;  // bwd_grid.h's decode, for the epilogue (and d > 128's deterministic turn)
  int merge_last;            // a split unit's piece: whether it arrived last (bwd_merge_pieces)
  float* dkv_slot;           // a split unit's piece: the unit's dK/dV slot (else null), and its counter
  int* slot_count;
};
static_assert(sizeof(BwdCtaScalars) <= kBwdScalarBytes, "bwd_tile_config.h's scalar area is too small");

// A piece of a split unit (bwd_grid.h): adds its dK and dV (unscaled) into the unit's fp32 slot of the
// workspace, each thread its fragments in reduction order (bwd_traits.cuh's reduction_order_offset,
// as the dQ tiles: whole 128-byte lines per warp-wide reduction), then counts
// itself in. Returns false for every piece but the last to arrive, which gets the unit's sums back
// in acc_dk / acc_dv (the same thread holds the same elements in every piece: one TiledMma
// partition) and goes on to the epilogue of a whole unit. The pattern of CUDA's threadFenceReduction
// sample: the adds, a gpu-scope fence, the barrier, one counter add per CTA; then a fence and L2 reads.
template <class Tr, class Acc>
__device__ __forceinline__ bool bwd_merge_pieces(float* dk_slot, int* count, int pieces, Acc& acc_dk, Acc& acc_dv,
                                                 int tidx, int* last) {
  constexpr int kFloats = Tr::kBlockN * Tr::kHeadDim;  // of dK, and of dV
  constexpr int kFrag = decltype(cute::size(acc_dk))::value;
  constexpr int V = kDqAccumVec;
  static_assert(kFrag * Tr::kThreads == kFloats && kFrag % V == 0, "dK/dV fragments disagree with the slot");
  float* const dv_slot = dk_slot + kFloats;
  const auto at = [tidx](int i) { return reduction_order_offset<Tr::kThreads>(i, tidx); };
  CUTE_UNROLL
  for (int i = 0; i < kFrag; i += V) {
    float a[V], b[V];
    CUTE_UNROLL
    for (int j = 0; j < V; ++j) a[j] = acc_dk(i + j), b[j] = acc_dv(i + j);
    dq_accum_add(dk_slot + at(i), a);
    dq_accum_add(dv_slot + at(i), b);
  }
  __threadfence();
  __syncthreads();
  if (tidx == 0) *last = atomicAdd(count, 1) == pieces - 1;
  __syncthreads();
  if (!*last) return false;
  __threadfence();
  CUTE_UNROLL
  for (int i = 0; i < kFrag; i += V) {
    if constexpr (V == 4) {
      const float4 a = __ldcg(reinterpret_cast<const float4*>(dk_slot + at(i)));
      const float4 b = __ldcg(reinterpret_cast<const float4*>(dv_slot + at(i)));
      acc_dk(i) = a.x, acc_dk(i + 1) = a.y, acc_dk(i + 2) = a.z, acc_dk(i + 3) = a.w;
      acc_dv(i) = b.x, acc_dv(i + 1) = b.y, acc_dv(i + 2) = b.z, acc_dv(i + 3) = b.w;
    } else {
      CUTE_UNROLL
      for (int j = 0; j < V; ++j)
        acc_dk(i + j) = __ldcg(dk_slot + at(i + j)), acc_dv(i + j) = __ldcg(dv_slot + at(i + j));
    }
  }
  return true;
}

// kSplit: the grid's last units run as pieces (bwd_grid.h; the plain kernel only). Its own
// instantiation: compiled into the one kernel, the pieces' code moved ptxas's schedule of the main loop
// and cost the causal rows, which never split, 0.2-1.2% (docs/perf-notes.md, session 18).
// kTransform: softcap or ALiBi is on. A separate instantiation keeps the transformed forms of P and
// dS (and their registers) out of the plain kernel, which then inlines only raw x {masked, unmasked}.
template <class Tr, bool kTransform, bool kSplit>
__global__ void __launch_bounds__(Tr::kThreads, 1) bwd_kernel(const __grid_constant__ BwdParams p) {
  static_assert(!(kSplit && kTransform), "the split runs the plain kernel only");
  using namespace cute;
  using Element = typename Tr::Element;
  constexpr int kBlockM = Tr::kBlockM;
  constexpr int kBlockN = Tr::kBlockN;
  constexpr int kHeadDim = Tr::kHeadDim;
  constexpr int kStages = Tr::kStages;

  // A split unit's piece (bwd_grid.h) walks its share of the unit's query blocks.
  const BwdUnitPiece unit = kSplit ? bwd_split_cta(fresh_ctaid().x, p.split_first, p.split_pieces)
                                   : BwdUnitPiece{static_cast<int>(fresh_ctaid().x), -1};
  const BwdCta cta =
      bwd_cta(unit.unit, p.heads_q, p.batch, p.cta_group, static_cast<int>((p.seqlen_k + kBlockN - 1) / kBlockN));
  const int n_block = cta.n_block;
  const int head = cta.head;
  const int batch = cta.batch;
  const int tidx = threadIdx.x;

  // --- this CTA's sequence, keys and query blocks -------------------------------------------------
  const bool varlen = p.cu_seqlens_q != nullptr;
  // First rows of the sequence in the (unpadded) workspace arrays and, for varlen, in the tensors.
  const int64_t q_row0 = varlen ? p.cu_seqlens_q[batch] : int64_t(batch) * p.seqlen_q;
  const int64_t k_row0 = varlen ? p.cu_seqlens_k[batch] : int64_t(batch) * p.seqlen_k;
  const int len_q = varlen ? static_cast<int>(p.cu_seqlens_q[batch + 1] - q_row0) : static_cast<int>(p.seqlen_q);
  const int len_k = varlen ? static_cast<int>(p.cu_seqlens_k[batch + 1] - k_row0) : static_cast<int>(p.seqlen_k);
  const int n0 = n_block * kBlockN;
  if (n0 >= len_k) return;  // varlen: this sequence is shorter than max_seqlen_k
  const int kv_head = head / p.head_ratio;

  int64_t row_lo, row_hi;
  bwd_visible_rows(n0, n0 + kBlockN, len_q, len_k, p.window, &row_lo, &row_hi);
  int m_begin = static_cast<int>(row_lo / kBlockM);
  int m_end = row_hi > row_lo ? static_cast<int>((row_hi + kBlockM - 1) / kBlockM) : m_begin;
  if (unit.piece >= 0) bwd_piece_range(m_begin, m_end, unit.piece, p.split_pieces, &m_begin, &m_end);

  const auto at = [&](const void* base, int64_t batch_stride, int64_t row_stride, int64_t head_stride, int h,
                      int64_t row0) {
    return static_cast<const Element*>(base) + (varlen ? row0 * row_stride : batch * batch_stride) + h * head_stride;
  };
  const Element* k_ptr = at(p.k, p.k_batch_stride, p.k_row_stride, p.k_head_stride, kv_head, k_row0);
  const Element* v_ptr = at(p.v, p.v_batch_stride, p.v_row_stride, p.v_head_stride, kv_head, k_row0);
  Tensor mK = make_tensor(make_gmem_ptr(k_ptr), make_shape(len_k, Int<kHeadDim>{}), make_stride(p.k_row_stride, _1{}));
  Tensor mV = make_tensor(make_gmem_ptr(v_ptr), make_shape(len_k, Int<kHeadDim>{}), make_stride(p.v_row_stride, _1{}));
  Tensor gK = local_tile(mK, Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(n_block, 0));  // (BN, D)
  Tensor gV = local_tile(mV, Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(n_block, 0));  // (BN, D)

  extern __shared__ __align__(128) char smem[];
  Element* smem_k = reinterpret_cast<Element*>(smem);
  Element* smem_v = smem_k + Tr::kSmemKV;
  Element* smem_q = smem_v + Tr::kSmemKV;            // kStages buffers
  Element* smem_do = smem_q + kStages * Tr::kSmemQ;  // kStages buffers
  Element* smem_p = smem_do + kStages * Tr::kSmemQ;
  Element* smem_ds = smem_p + Tr::kSmemPdS;
  float* smem_lse2 = reinterpret_cast<float*>(smem_ds + Tr::kSmemPdS);  // kStages x kBlockM
  float* smem_dd = smem_lse2 + kStages * kBlockM;                       // kStages x kBlockM
  BwdCtaScalars* scalars = reinterpret_cast<BwdCtaScalars*>(smem_dd + kStages * kBlockM);
  // Ascending, or descending in deterministic mode (see the main loop).
  const int m_count = m_end - m_begin;
  // The query blocks [um_lo, um_hi) need no mask: every row of them (below len_q) sees every key of
  // this block. Decided once per query block, for both of its S/dP slices: a uniform branch around
  // the masked and unmasked forms of P and dS (a real branch in the SASS, not if-converted). A loop
  // per run of blocks (as the forward has for key blocks) spilled at d 128 with fully unrolled
  // products: values hoisted for the three copies of the step stayed live across all of them.
  if (tidx == 0) {
    BwdCtaScalars sc;
    int u_lo, u_hi;
    bwd_unmasked_rows<kBlockN>(n0, len_q, len_k, p.window, &u_lo, &u_hi);
    sc.um_lo = (u_lo + kBlockM - 1) / kBlockM;
    sc.um_hi = (u_hi >= len_q ? u_hi + kBlockM - 1 : u_hi) / kBlockM;  // a partial last block counts when u_hi = len_q
    sc.m_first = p.deterministic ? m_end - 1 : m_begin;
    sc.m_dir = p.deterministic ? -1 : 1;
    sc.q = at(p.q, p.q_batch_stride, p.q_row_stride, p.q_head_stride, head, q_row0);
    sc.dout = at(p.dout, p.do_batch_stride, p.do_row_stride, p.do_head_stride, head, q_row0);
    sc.lse2 = p.lse_log2 + head * p.total_q + q_row0;
    sc.dd = p.softmax_d + head * p.total_q + q_row0;
    sc.dq_acc = p.dq_accum + (head * p.dq_accum_rows + q_row0 + int64_t(batch) * kBlockM) * kHeadDim;
    sc.semaphores =
        p.deterministic ? p.dq_semaphore + (int64_t(batch) * p.heads_q + head) * p.semaphore_m_blocks : nullptr;
    sc.n_block = n_block;
    sc.head = head;
    sc.batch = batch;
    if constexpr (kSplit) {
      const int64_t slot = unit.unit - p.split_first;
      sc.dkv_slot = unit.piece >= 0 ? p.dkv_split + slot * (2 * kBlockN * kHeadDim) : nullptr;
      sc.slot_count = unit.piece >= 0 ? p.split_count + slot : nullptr;
    }
    sc.q_row_stride = p.q_row_stride;
    sc.do_row_stride = p.do_row_stride;
    sc.len_q = len_q;
    sc.len_k = len_k;
    sc.k_row0 = k_row0;
    *scalars = sc;
  }
  __syncthreads();  // RAW: the parked scalars are visible to every thread
  Tensor sK = make_tensor(make_smem_ptr(smem_k), typename Tr::SmemLayoutKV{});   // (BN, D)
  Tensor sV = make_tensor(make_smem_ptr(smem_v), typename Tr::SmemLayoutKV{});   // (BN, D)
  Tensor sKtNoSwizzle = make_tensor(make_smem_ptr(smem_k), typename Tr::SmemLayoutKtNoSwizzle{});
  Tensor sdS = make_tensor(make_smem_ptr(smem_ds), typename Tr::SmemLayoutPdS{});  // (BM, BN), shapes only
  Tensor sPdStNoSwizzle = make_tensor(make_smem_ptr(smem_p), typename Tr::SmemLayoutPdStNoSwizzle{});
  // Q / dO of buffer `b` (the loads; the products build their views per step from st_* below).
  const auto sQ_of = [&](int b) {
    return make_tensor(make_smem_ptr(smem_q + b * Tr::kSmemQ), typename Tr::SmemLayoutQ{});
  };
  const auto sdO_of = [&](int b) {
    return make_tensor(make_smem_ptr(smem_do + b * Tr::kSmemQ), typename Tr::SmemLayoutQ{});
  };
  Tensor sQtNoSwizzle = make_tensor(make_smem_ptr(smem_q), typename Tr::SmemLayoutQtNoSwizzle{});  // shapes only

  // gmem -> smem partitions and their coordinates (for the out-of-range predicates).
  typename Tr::GmemCopyIn gmem_copy;
  auto g2s = gmem_copy.get_thread_slice(tidx);
  Tensor tKgK = g2s.partition_S(gK);  // (CPY, CPY_N, CPY_K)
  Tensor tKsK = g2s.partition_D(sK);
  Tensor tVgV = g2s.partition_S(gV);
  Tensor tVsV = g2s.partition_D(sV);
  Tensor tQcQ = g2s.partition_S(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));  // -> (row, col)
  Tensor tKcK = g2s.partition_S(make_identity_tensor(Shape<Int<kBlockN>, Int<kHeadDim>>{}));

  // Q, dO, and the rows' LSE (log2 units) and D of query block m_block into buffer b.
  const auto load_q_do = [&](int m_block, int b, const BwdCtaScalars& sc) {
    // The thread's partitions from a fresh thread index (utils.cuh): built from `tidx` at the top,
    // their per-thread offsets were hoisted and kept live (or spilled) across the main loop.
    const int tidx = fresh_tid_x();
    const auto g2s = gmem_copy.get_thread_slice(tidx);
    const Tensor tQcQ = g2s.partition_S(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));
    const int m0 = m_block * kBlockM;
    Tensor gQ = local_tile(make_tensor(make_gmem_ptr(static_cast<const Element*>(sc.q)),
                                       make_shape(sc.len_q, Int<kHeadDim>{}), make_stride(sc.q_row_stride, _1{})),
                           Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(m_block, 0));  // (BM, D)
    Tensor gdO = local_tile(make_tensor(make_gmem_ptr(static_cast<const Element*>(sc.dout)),
                                        make_shape(sc.len_q, Int<kHeadDim>{}), make_stride(sc.do_row_stride, _1{})),
                            Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(m_block, 0));  // (BM, D)
    copy_zfill(gmem_copy, g2s.partition_S(gQ), g2s.partition_D(sQ_of(b)), tQcQ, sc.len_q - m0, p.head_dim);
    copy_zfill(gmem_copy, g2s.partition_S(gdO), g2s.partition_D(sdO_of(b)), tQcQ, sc.len_q - m0, p.head_dim_v);
    static_assert(2 * kBlockM <= Tr::kThreads, "one thread per row of LSE and of D");
    const int r = tidx % kBlockM;
    const bool in = m0 + r < sc.len_q;
    if (tidx < kBlockM)
      cp_async_f32_zfill(smem_lse2 + b * kBlockM + r, sc.lse2 + (in ? m0 + r : 0), in);
    else if (tidx < 2 * kBlockM)
      cp_async_f32_zfill(smem_dd + b * kBlockM + r, sc.dd + (in ? m0 + r : 0), in);
  };

  // S = Q K^T and dP = dO V^T, in kSdpSlices slices of kBlockMS query rows (halves the live S/dP
  // registers where dK + dV already hold 128 per thread; see bwd_tile_config.h).
  constexpr int kSdpSlices = kTransform ? Tr::kSdpSlicesTransform : Tr::kSdpSlices;
  constexpr int kBlockMS = kBlockM / kSdpSlices;
  using SliceQ = Shape<Int<kBlockMS>, Int<kHeadDim>>;
  using SlicePdS = Shape<Int<kBlockMS>, Int<kBlockN>>;
  typename Tr::TiledMmaSdP mma_sdp;
  auto thr_sdp = mma_sdp.get_thread_slice(tidx);
  // Register fragments hold kU k-slices (bwd_gemm walks k through them); partitioned from tiles that
  // are 16*kU wide in k.
  // The k extent of one step of a product whose k extent is K: kSlicesPerStep 16-wide slices, or all.
  constexpr auto k_step = [](auto k) {
    return Int<(16 * Tr::kSlicesPerStep < decltype(k)::value ? 16 * Tr::kSlicesPerStep : decltype(k)::value)>{};
  };
  using KStepS = decltype(k_step(Int<kHeadDim>{}));  // S, dP: k = d
  using KStepKV = decltype(k_step(Int<kBlockM>{}));  // dV, dK: k = query rows
  using KStepQ = decltype(k_step(Int<kBlockN>{}));   // dQ: k = keys
  Tensor tSrQ = thr_sdp.partition_fragment_A(
      local_tile(sQ_of(0), Shape<Int<kBlockMS>, KStepS>{}, make_coord(0, 0)));  // (MMA, MMA_M, kU)
  Tensor tSrK = thr_sdp.partition_fragment_B(
      local_tile(sK, Shape<Int<kBlockN>, KStepS>{}, make_coord(0, 0)));  // (MMA, MMA_N, kU)
  Tensor tdPrdO = make_fragment_like(tSrQ);
  Tensor tdPrV = make_fragment_like(tSrK);
  auto s2r_sdp_a = make_tiled_copy_A(typename Tr::SmemCopyAtom{}, mma_sdp);
  auto s2r_thr_sdp_a = s2r_sdp_a.get_thread_slice(tidx);
  auto s2r_sdp_b = make_tiled_copy_B(typename Tr::SmemCopyAtom{}, mma_sdp);
  auto s2r_thr_sdp_b = s2r_sdp_b.get_thread_slice(tidx);
  Tensor tScS = thr_sdp.partition_C(make_identity_tensor(SlicePdS{}));      // (MMA, MMA_M, MMA_N)
  Tensor tScS_rc = make_tensor(tScS.data(), rowcol_layout(tScS.layout()));  // (rows, cols) -> (row, col) in the slice
  // P and dS registers -> smem.
  auto r2s_pds = make_tiled_copy_C(typename Tr::SmemCopyAtomStage{}, mma_sdp);
  auto r2s_thr_pds = r2s_pds.get_thread_slice(tidx);

  // dV += P^T dO and dK += dS^T Q.
  typename Tr::TiledMmadKV mma_dkv;
  auto thr_dkv = mma_dkv.get_thread_slice(tidx);
  Tensor tdVrPt = thr_dkv.partition_fragment_A(
      local_tile(sPdStNoSwizzle, Shape<Int<kBlockN>, KStepKV>{}, make_coord(0, 0)));  // (MMA, MMA_N, kU)
  Tensor tdVrdOt = thr_dkv.partition_fragment_B(
      local_tile(sQtNoSwizzle, Shape<Int<kHeadDim>, KStepKV>{}, make_coord(0, 0)));  // (MMA, MMA_D, kU)
  Tensor tdKrdSt = make_fragment_like(tdVrPt);
  Tensor tdKrQt = make_fragment_like(tdVrdOt);
  auto s2r_dkv_a = make_tiled_copy_A(typename Tr::SmemCopyAtomT{}, mma_dkv);
  auto s2r_dkv_b = make_tiled_copy_B(typename Tr::SmemCopyAtomT{}, mma_dkv);
  Tensor acc_dk = partition_fragment_C(mma_dkv, Shape<Int<kBlockN>, Int<kHeadDim>>{});  // (MMA, MMA_N, MMA_D)
  Tensor acc_dv = partition_fragment_C(mma_dkv, Shape<Int<kBlockN>, Int<kHeadDim>>{});
  clear(acc_dk);
  clear(acc_dv);

  // dQ = dS K, in kDqSlices column slices of kHeadDimS (halves the live dQ accumulator where dK + dV
  // already hold 128 registers per thread; see bwd_tile_config.h).
  constexpr int kDqSlices = Tr::kDqSlices;
  constexpr int kHeadDimS = kHeadDim / kDqSlices;
  using SliceKt = Shape<Int<kHeadDimS>, Int<kBlockN>>;
  using SlicedQ = Shape<Int<kBlockM>, Int<kHeadDimS>>;
  using DqTile = BwdDqTile<Tr>;
  typename Tr::TiledMmadQ mma_dq;
  auto thr_dq = mma_dq.get_thread_slice(tidx);
  Tensor tdQrdS = thr_dq.partition_fragment_A(
      local_tile(sdS, Shape<Int<kBlockM>, KStepQ>{}, make_coord(0, 0)));  // (MMA, MMA_M, kU)
  Tensor tdQrKt = thr_dq.partition_fragment_B(
      local_tile(sKtNoSwizzle, Shape<Int<kHeadDimS>, KStepQ>{}, make_coord(0, 0)));  // (MMA, MMA_D, kU)
  auto s2r_dq_a = make_tiled_copy_A(typename Tr::SmemCopyAtom{}, mma_dq);
  auto s2r_thr_dq_a = s2r_dq_a.get_thread_slice(tidx);
  auto s2r_dq_b = make_tiled_copy_B(typename Tr::SmemCopyAtomT{}, mma_dq);
  auto s2r_thr_dq_b = s2r_dq_b.get_thread_slice(tidx);

  const float slope = p.alibi_slopes != nullptr ? p.alibi_slopes[batch * p.alibi_batch_stride + head] : 0.0f;

  // --- main loop over the query blocks that see this key block -----------------------------------
  // Ascending, or descending in deterministic mode. There the dQ adds to a query block go in
  // ascending key-block order, and with the query blocks walked from the last down every key block
  // reaches a given query block at the same iteration (causal: all of them end at the last query
  // block), so a key block only waits for its predecessors' adds, not for their whole walk. In
  // ascending order key block n met its first query block (n, causal) n iterations after key block
  // 0 had, and waited idle that long: deterministic causal ran at ~0.55x (docs/perf-notes.md).
  const auto m_at = [](int it, const BwdCtaScalars& sc) { return sc.m_first + it * sc.m_dir; };
  if (m_count > 0) {
    copy_zfill(gmem_copy, tKgK, tKsK, tKcK, len_k - n0, p.head_dim);
    copy_zfill(gmem_copy, tVgV, tVsV, tKcK, len_k - n0, p.head_dim_v);
    load_q_do(m_at(0, *scalars), 0, *scalars);
    cp_async_fence();
  }

  // One step per query block.
  const auto step = [&](const int it) __attribute__((always_inline)) {
    const int buf = kStages == 2 ? it & 1 : 0;

    // The plain kernel rebuilds the products' smem views each step from a base address the compiler
    // cannot see through (as the forward does): otherwise ptxas hoists swizzled ldmatrix addresses out
    // of the loop and keeps them live across it, next to dK + dV (with fully unrolled products it
    // spilled at d 128 on sm_80). The softcap/ALiBi kernel is the other way round: the opaque base
    // made it spill at d 96 (sm_90) and d 128 (sm_80), the plain views do not.
    Element* st_k = reinterpret_cast<Element*>(smem);
    if constexpr (!kTransform) {
      uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
      asm volatile("" : "+r"(smem_base));
      st_k = reinterpret_cast<Element*>(__cvta_shared_to_generic(smem_base));
    }
    Element* const st_v = st_k + Tr::kSmemKV;
    Element* const st_q = st_v + Tr::kSmemKV + buf * Tr::kSmemQ;
    Element* const st_do = st_v + Tr::kSmemKV + (kStages + buf) * Tr::kSmemQ;
    Element* const st_p = st_v + Tr::kSmemKV + 2 * kStages * Tr::kSmemQ;
    Element* const st_ds = st_p + Tr::kSmemPdS;
    const float* const st_lse2 = reinterpret_cast<const float*>(st_ds + Tr::kSmemPdS) + buf * kBlockM;
    const float* const st_dd = st_lse2 + kStages * kBlockM;
    // The parked scalars, read through the same opaque base: from `scalars` ptxas hoisted the loads
    // out of the loop (nothing in it writes them) and kept the values live, or spilled them.
    const BwdCtaScalars& sc =
        *reinterpret_cast<const BwdCtaScalars*>(reinterpret_cast<const float*>(st_ds + Tr::kSmemPdS) + 2 * kStages * kBlockM);
    const int len_q = sc.len_q;
    const int len_k = sc.len_k;
    const int m_block = m_at(it, sc);
    const int m0 = m_block * kBlockM;
    const bool mask = m_block < sc.um_lo || m_block >= sc.um_hi;  // P and dS need the per-element mask

    cp_async_wait<0>();
    // RAW: Q[m], dO[m] (and K, V) landed for every warp. WAR: every warp finished the previous block's
    // reads of P, dS and of the buffer the prefetch below overwrites.
    __syncthreads();
    if constexpr (kStages == 2) {
      if (it + 1 < m_count) {
        load_q_do(m_at(it + 1, sc), buf ^ 1, sc);
        cp_async_fence();
      }
    }

    CUTE_UNROLL
    for (int slice = 0; slice < kSdpSlices; ++slice) {
      const int ms = m0 + slice * kBlockMS;                       // first row of the slice
      Tensor acc_s = partition_fragment_C(mma_sdp, SlicePdS{});   // (MMA, MMA_M, MMA_N)
      Tensor acc_dp = partition_fragment_C(mma_sdp, SlicePdS{});  // (MMA, MMA_M, MMA_N)
      clear(acc_s);
      clear(acc_dp);
      const auto slice_of = [&](Element* base) {
        return s2r_thr_sdp_a.partition_S(
            local_tile(make_tensor(make_smem_ptr(base), typename Tr::SmemLayoutQ{}), SliceQ{}, make_coord(slice, 0)));
      };
      bwd_gemm(mma_sdp, acc_s, tSrQ, tSrK, slice_of(st_q),
               s2r_thr_sdp_b.partition_S(make_tensor(make_smem_ptr(st_k), typename Tr::SmemLayoutKV{})), s2r_sdp_a,
               s2r_sdp_b, s2r_thr_sdp_a, s2r_thr_sdp_b);
      bwd_gemm(mma_sdp, acc_dp, tdPrdO, tdPrV, slice_of(st_do),
               s2r_thr_sdp_b.partition_S(make_tensor(make_smem_ptr(st_v), typename Tr::SmemLayoutKV{})), s2r_sdp_a,
               s2r_sdp_b, s2r_thr_sdp_a, s2r_thr_sdp_b);

      const float* s_lse2 = st_lse2 + slice * kBlockMS;
      const float* s_dd = st_dd + slice * kBlockMS;
      Tensor s_rc = make_tensor(acc_s.data(), rowcol_layout(acc_s.layout()));     // (rows, cols)
      Tensor dp_rc = make_tensor(acc_dp.data(), rowcol_layout(acc_dp.layout()));  // (rows, cols)
      const auto p_ds = [&](auto score, auto mask) __attribute__((always_inline)) {
        bwd_p_ds<decltype(score)::value, decltype(mask)::value>(s_rc, dp_rc, tScS_rc, p, ms, n0, len_q, len_k, slope,
                                                                s_lse2, s_dd);
      };
      using Raw = std::integral_constant<BwdScore, BwdScore::kRaw>;
      using Scaled = std::integral_constant<BwdScore, BwdScore::kScaled>;
      using Softcap = std::integral_constant<BwdScore, BwdScore::kSoftcap>;
      if constexpr (!kTransform) {
        mask ? p_ds(Raw{}, std::true_type{}) : p_ds(Raw{}, std::false_type{});
      } else if (p.softcap > 0.0f) {
        mask ? p_ds(Softcap{}, std::true_type{}) : p_ds(Softcap{}, std::false_type{});
      } else {
        mask ? p_ds(Scaled{}, std::true_type{}) : p_ds(Scaled{}, std::false_type{});
      }
      Tensor rP = convert_to<Element>(acc_s);
      Tensor rdS = convert_to<Element>(acc_dp);
      const auto pds_of = [&](Element* base) {
        return r2s_thr_pds.partition_D(
            local_tile(make_tensor(make_smem_ptr(base), typename Tr::SmemLayoutPdS{}), SlicePdS{}, make_coord(slice, 0)));
      };
      copy(r2s_pds, r2s_thr_pds.retile_S(rP), pds_of(st_p));
      copy(r2s_pds, r2s_thr_pds.retile_S(rdS), pds_of(st_ds));
    }
    __syncthreads();  // RAW: P and dS tiles complete in smem before any warp reads other warps' rows

    // Thread slices of dV/dK (and dQ's coordinates below) from a fresh thread index, as in load_q_do.
    const auto s2r_thr_dkv_a = s2r_dkv_a.get_thread_slice(fresh_tid_x());
    const auto s2r_thr_dkv_b = s2r_dkv_b.get_thread_slice(fresh_tid_x());
    const auto dkv_a = [&](Element* base) {
      return s2r_thr_dkv_a.partition_S(make_tensor(make_smem_ptr(base), typename Tr::SmemLayoutPdSt{}));
    };
    const auto dkv_b = [&](Element* base) {
      return s2r_thr_dkv_b.partition_S(make_tensor(make_smem_ptr(base), typename Tr::SmemLayoutQt{}));
    };
    bwd_gemm(mma_dkv, acc_dv, tdVrPt, tdVrdOt, dkv_a(st_p), dkv_b(st_do), s2r_dkv_a, s2r_dkv_b, s2r_thr_dkv_a,
             s2r_thr_dkv_b);
    // Scheduling fence (no data hazard): keeps ptxas from overlapping the independent products dV, dK
    // and dQ, which keeps their operand fragments live at once next to dK + dV.
    if constexpr (Tr::kSchedFences) __syncwarp();
    bwd_gemm(mma_dkv, acc_dk, tdKrdSt, tdKrQt, dkv_a(st_ds), dkv_b(st_q), s2r_dkv_a, s2r_dkv_b, s2r_thr_dkv_a,
             s2r_thr_dkv_b);

    // dQ += this key block's share. Deterministic mode: key blocks add in ascending order, each
    // waiting for the turn counter of this query block to reach its rank among the key blocks that
    // see it (the first is begin(first row) / kBlockN). The blocks waited on are smaller key blocks
    // of the same (head, batch), at smaller grid indices (bwd_grid.h): launched earlier, they are
    // resident or done, so the wait ends. The first slice's product is computed before the wait.
    int* semaphore = nullptr;
    int turn = 0;
    // This query block's dQ tile in the workspace (bwd_traits.cuh, BwdDqTile): every reduction of a
    // warp covers 32 x kDqAccumVec consecutive floats, and none needs a predicate (rows past the
    // sequence and padded columns land in the tile's own slots, which the postprocess skips).
    // The tile's base: taken here for one slice; rebuilt per slice from the parked base for several
    // (kept across d 256's four slices it spilled; rebuilt after d 128's one it spilled).
    float* const dq_tile = sc.dq_acc + int64_t(m_block) * DqTile::kFloats;
    CUTE_UNROLL
    for (int slice = 0; slice < kDqSlices; ++slice) {
      if constexpr (Tr::kSchedFences) __syncwarp();             // scheduling fence, as above
      Tensor acc_dq = partition_fragment_C(mma_dq, SlicedQ{});  // (MMA, MMA_M, MMA_D)
      static_assert(decltype(size(acc_dq))::value == DqTile::kFragment, "BwdDqTile disagrees with the dQ product");
      clear(acc_dq);
      bwd_gemm(mma_dq, acc_dq, tdQrdS, tdQrKt,
               s2r_thr_dq_a.partition_S(make_tensor(make_smem_ptr(st_ds), typename Tr::SmemLayoutPdS{})),
               s2r_thr_dq_b.partition_S(local_tile(make_tensor(make_smem_ptr(st_k), typename Tr::SmemLayoutKt{}),
                                                   SliceKt{}, make_coord(slice, 0))),
               s2r_dq_a, s2r_dq_b, s2r_thr_dq_a, s2r_thr_dq_b);
      if (p.deterministic && slice == 0) {
        semaphore = sc.semaphores + m_block * (kBlockM / kBwdMinBlockM);
        int begin, end;  // the first key block that rows of this query block see: begin(first row) / kBlockN
        visible_key_range_i32(m0, len_q, len_k, p.window, &begin, &end);
        // The key block from the top (kept live) or from the parked scalars: register allocation
        // only, at the 255-register edge. The parked read spilled 20 bytes in d 64's sm_80 SASS, the
        // live value 4 bytes in d 256's sm_90a SASS (nvcc 13.0); each form is 0 spills where used.
        turn = (kHeadDim <= 128 ? n_block : sc.n_block) - begin / kBlockN;
        if (tidx == 0) {
          while (ld_acquire_gpu(semaphore) != turn) {
          }
        }
        __syncthreads();  // the whole CTA adds only after the previous key block's adds are visible
      }
      float* const dq_thr = (kDqSlices == 1 ? dq_tile : sc.dq_acc + int64_t(m_block) * DqTile::kFloats) +
                            DqTile::offset(slice, 0, fresh_tid_x());
      CUTE_UNROLL
      for (int i = 0; i < DqTile::kFragment; i += kDqAccumVec) {
        float v[kDqAccumVec];
        CUTE_UNROLL
        for (int j = 0; j < kDqAccumVec; ++j) v[j] = acc_dq(i + j);
        dq_accum_add(dq_thr + DqTile::offset(0, i, 0), v);
      }
    }
    if (p.deterministic) {
      // Every thread's adds are issued before the release: the barrier orders them before thread 0's
      // store, and the release (gpu scope, cumulative) makes them visible before the new count.
      __syncthreads();
      if (tidx == 0) st_release_gpu(semaphore, turn + 1);
    }

    if constexpr (kStages == 1) {
      if (it + 1 < m_count) {
        __syncthreads();  // WAR: every warp finished reading Q[m] and dO[m] before they are overwritten
        load_q_do(m_at(it + 1, sc), 0, sc);
        cp_async_fence();
      }
    }
  };

  for (int it = 0; it < m_count; ++it) step(it);

  // --- epilogue: dK (scaled) and dV -------------------------------------------------------------
  // A piece of a split unit merges first, before the epilogue's scalars are read (their loads cannot
  // cross the merge's barriers and fences, so read earlier they stay live through it).
  if constexpr (kSplit) {
    float* const slot = scalars->dkv_slot;
    if (slot != nullptr && !bwd_merge_pieces<Tr>(slot, scalars->slot_count, p.split_pieces, acc_dk, acc_dv,
                                                 fresh_tid_x(), &scalars->merge_last))
      return;  // another piece of this unit arrives later and writes it
  }
  // The CTA's coordinates re-read from the parked scalars and threadIdx afresh (utils.cuh's
  // fresh_tid_x), shadowing the values of the top: kept live from there, they were what ptxas spilled
  // across the main loop.
  {
    const int n_block = scalars->n_block, head = scalars->head, batch = scalars->batch, tidx = fresh_tid_x();
    const int n0 = n_block * kBlockN;
    const auto thr_dkv = mma_dkv.get_thread_slice(tidx);
    const int64_t k_row0_e = scalars->k_row0;
    const int len_k_e = scalars->len_k;
    const int rows_k = len_k_e - n0;
    CUTE_UNROLL
    for (int i = 0; i < size(acc_dk); ++i) acc_dk(i) *= p.softmax_scale;
    if (p.dk_accum == nullptr) {
      // MHA: this CTA owns the rows; through smem (K and V's space) for 128-bit stores.
      Element* dk_ptr = static_cast<Element*>(p.dk) + (varlen ? k_row0_e * p.dk_row_stride : batch * p.dk_batch_stride) +
                        head * p.dk_head_stride;
      Element* dv_ptr = static_cast<Element*>(p.dv) + (varlen ? k_row0_e * p.dv_row_stride : batch * p.dv_batch_stride) +
                        head * p.dv_head_stride;
      Tensor gdK = local_tile(
          make_tensor(make_gmem_ptr(dk_ptr), make_shape(len_k_e, Int<kHeadDim>{}), make_stride(p.dk_row_stride, _1{})),
          Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(n_block, 0));  // (BN, D)
      Tensor gdV = local_tile(
          make_tensor(make_gmem_ptr(dv_ptr), make_shape(len_k_e, Int<kHeadDim>{}), make_stride(p.dv_row_stride, _1{})),
          Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(n_block, 0));  // (BN, D)
      Tensor rdK = convert_to<Element>(acc_dk);
      Tensor rdV = convert_to<Element>(acc_dv);
      auto r2s_dkv = make_tiled_copy_C(typename Tr::SmemCopyAtomStage{}, mma_dkv);
      auto r2s_thr_dkv = r2s_dkv.get_thread_slice(tidx);
      __syncthreads();  // WAR: every warp finished its last reads of K (dQ) and V (dP) before dK/dV overwrite them
      copy(r2s_dkv, r2s_thr_dkv.retile_S(rdK), r2s_thr_dkv.partition_D(sK));
      copy(r2s_dkv, r2s_thr_dkv.retile_S(rdV), r2s_thr_dkv.partition_D(sV));

      typename Tr::GmemCopyOut gmem_copy_out;
      auto s2g = gmem_copy_out.get_thread_slice(tidx);
      Tensor tdKsdK = s2g.partition_S(sK);  // (CPY, CPY_N, CPY_K)
      Tensor tdKgdK = s2g.partition_D(gdK);
      Tensor tdVsdV = s2g.partition_S(sV);
      Tensor tdVgdV = s2g.partition_D(gdV);
      Tensor tdKcdK = s2g.partition_D(make_identity_tensor(Shape<Int<kBlockN>, Int<kHeadDim>>{}));
      Tensor tdKrdK = make_tensor<Element>(shape(tdKgdK));
      Tensor tdVrdV = make_tensor<Element>(shape(tdVgdV));
      __syncthreads();  // RAW: the whole dK/dV tiles are in smem before threads read rows other warps wrote
      copy(gmem_copy_out, tdKsdK, tdKrdK);
      copy(gmem_copy_out, tdVsdV, tdVrdV);
      copy_predicated(gmem_copy_out, tdKrdK, tdKgdK, tdKcdK, rows_k, p.head_dim);
      copy_predicated(gmem_copy_out, tdVrdV, tdVgdV, tdKcdK, rows_k, p.head_dim_v);
    } else {
      // GQA/MQA: this q head's share in fp32; the postprocess sums each group in a fixed order.
      float* dk_acc = p.dk_accum + (head * p.total_k + k_row0_e + n0) * p.head_dim;
      float* dv_acc = p.dv_accum + (head * p.total_k + k_row0_e + n0) * p.head_dim_v;
      Tensor tdKVc = thr_dkv.partition_C(make_identity_tensor(Shape<Int<kBlockN>, Int<kHeadDim>>{}));
      Tensor tdKVc_rc = make_tensor(tdKVc.data(), rowcol_layout(tdKVc.layout()));
      Tensor dk_rc = make_tensor(acc_dk.data(), rowcol_layout(acc_dk.layout()));
      Tensor dv_rc = make_tensor(acc_dv.data(), rowcol_layout(acc_dv.layout()));
      CUTE_UNROLL
      for (int r = 0; r < size<0>(dk_rc); ++r) {
        const int row = get<0>(tdKVc_rc(r, 0));
        if (row < rows_k) {
          CUTE_UNROLL
          for (int c = 0; c < size<1>(dk_rc); c += 2) {
            const int col = get<1>(tdKVc_rc(0, c));
            // 32-bit offsets inside the block (row < kBlockN, d <= 256).
            if (col < p.head_dim)
              *reinterpret_cast<float2*>(dk_acc + (row * p.head_dim + col)) = make_float2(dk_rc(r, c), dk_rc(r, c + 1));
            if (col < p.head_dim_v)
              *reinterpret_cast<float2*>(dv_acc + (row * p.head_dim_v + col)) = make_float2(dv_rc(r, c), dv_rc(r, c + 1));
          }
        }
      }
    }
  }
}

}  // namespace flashcute::sm80
