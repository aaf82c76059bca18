#pragma once
// SM80 backward main kernel (FlashAttention-2 class): one CTA per (key block, q head, batch). K and V
// of the block stay in smem; the CTA walks the query blocks that see any of its keys, in ascending
// order, with Q and dO double-buffered through cp.async (the next block's loads fly during this
// block's five products). Per query block:
//   S = Q K^T, dP = dO V^T                    (mma.sync, operands from smem)
//   P = exp2(S' * mult - lse * log2 e), dS = P * (dP - D) [* (1 - tanh^2) under softcap]
//   P, dS -> smem (16-bit)
//   dV += P^T dO, dK += dS^T Q                (registers, the whole loop; transposing ldmatrix)
//   dQ  = dS K -> fp32 atomics into the workspace (deterministic mode: in key-block order)
// S' is the forward's score transform (softcap, then ALiBi); masks are applied only to the blocks a
// row boundary crosses, with the forward's per-row interval test (mask.h's visible_key_range).

#include <cute/tensor.hpp>

#include <cmath>

#include "common/bwd_params.h"
#include "common/mask.h"
#include "common/math.cuh"
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

__device__ __forceinline__ int ld_acquire_gpu(const int* ptr) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(ptr) : "memory");
  return v;
}

__device__ __forceinline__ void st_release_gpu(int* ptr, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(ptr), "r"(v) : "memory");
}

// Adds two adjacent fp32 values to global memory (one vector reduction on sm_90, two on sm_80).
__device__ __forceinline__ void atomic_add_pair(float* ptr, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(ptr), make_float2(a, b));
#else
  atomicAdd(ptr, a);
  atomicAdd(ptr + 1, b);
#endif
}

// P and dS of one (query block, key block) from S and dP, in place, on (rows, cols) views with
// `coords` the same view of the identity partition. lse2[r] is the row's LSE in log2 units (+inf
// for rows that see no key or lie past the sequence: their P is exactly 0), dd[r] its D.
template <bool kTransform, bool kMask, int kRows, class Scores, class DP, class Coords>
__device__ __forceinline__ void bwd_p_ds(Scores& s, DP& dp, const Coords& coords, const BwdParams& p, int64_t m0,
                                         int64_t n0, int64_t len_q, int64_t len_k, float slope, float cap_scale,
                                         const float (&lse2)[kRows], const float (&dd)[kRows]) {
  using namespace cute;
  const float mult = p.score_log2_mult;
  CUTE_UNROLL
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = m0 + get<0>(coords(r, 0));
    int lo = 0, hi = 0;
    if constexpr (kMask) {
      int64_t begin, end;
      visible_key_range(i, len_q, len_k, p.window, &begin, &end);
      // Clamp to [-1, kFar] relative to n0: enough to decide every column of this block.
      const int64_t kFar = 1 << 20;
      begin -= n0;
      end -= n0;
      lo = static_cast<int>(begin < -1 ? -1 : (begin > kFar ? kFar : begin));
      hi = static_cast<int>(end < -1 ? -1 : (end > kFar ? kFar : end));
    }
    const int diag = static_cast<int>(i + len_k - len_q - n0);  // row i's diagonal key, relative to n0
    CUTE_UNROLL
    for (int c = 0; c < size<1>(s); ++c) {
      const int col = get<1>(coords(0, c));
      float x = s(r, c);
      float dtanh = 1.0f;
      if constexpr (kTransform) {
        if (p.softcap > 0.0f) {
          const float t = tanhf(x * cap_scale);
          x = p.softcap * t;
          dtanh = 1.0f - t * t;  // d/ds of c*tanh(s*scale/c) is scale*(1 - t^2); scale comes at the end
        } else {
          x *= p.softmax_scale;
        }
        if (p.alibi_slopes != nullptr) x -= slope * static_cast<float>(abs(diag - col));
      }
      float prob = exp2_approx(fmaf(x, mult, -lse2[r]));
      float ds = prob * (dp(r, c) - dd[r]);
      if constexpr (kTransform) ds *= dtanh;
      if constexpr (kMask) {
        // Zeroed, not multiplied: a non-finite dP of a key this row cannot see stays out of its dQ.
        if (col < lo || col >= hi) prob = 0.0f, ds = 0.0f;
      }
      s(r, c) = prob;
      dp(r, c) = ds;
    }
  }
}

template <class Tr>
__global__ void __launch_bounds__(Tr::kThreads, 1) bwd_kernel(const __grid_constant__ BwdParams p) {
  using namespace cute;
  using Element = typename Tr::Element;
  constexpr int kBlockM = Tr::kBlockM;
  constexpr int kBlockN = Tr::kBlockN;
  constexpr int kHeadDim = Tr::kHeadDim;
  constexpr int kStages = Tr::kStages;

  const int n_block = blockIdx.x;
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  const int tidx = threadIdx.x;

  // --- this CTA's sequence, keys and query blocks -------------------------------------------------
  const bool varlen = p.cu_seqlens_q != nullptr;
  // First rows of the sequence in the (unpadded) workspace arrays and, for varlen, in the tensors.
  const int64_t q_row0 = varlen ? p.cu_seqlens_q[batch] : int64_t(batch) * p.seqlen_q;
  const int64_t k_row0 = varlen ? p.cu_seqlens_k[batch] : int64_t(batch) * p.seqlen_k;
  const int64_t len_q = varlen ? p.cu_seqlens_q[batch + 1] - q_row0 : p.seqlen_q;
  const int64_t len_k = varlen ? p.cu_seqlens_k[batch + 1] - k_row0 : p.seqlen_k;
  const int64_t n0 = int64_t(n_block) * kBlockN;
  if (n0 >= len_k) return;  // varlen: this sequence is shorter than max_seqlen_k
  const int kv_head = head / p.head_ratio;

  int64_t row_lo, row_hi;
  bwd_visible_rows(n0, n0 + kBlockN, len_q, len_k, p.window, &row_lo, &row_hi);
  const int m_begin = static_cast<int>(row_lo / kBlockM);
  const int m_end = row_hi > row_lo ? static_cast<int>((row_hi + kBlockM - 1) / kBlockM) : m_begin;

  const auto at = [&](const void* base, int64_t batch_stride, int64_t row_stride, int64_t head_stride, int h,
                      int64_t row0) {
    return static_cast<const Element*>(base) + (varlen ? row0 * row_stride : batch * batch_stride) + h * head_stride;
  };
  const Element* q_ptr = at(p.q, p.q_batch_stride, p.q_row_stride, p.q_head_stride, head, q_row0);
  const Element* k_ptr = at(p.k, p.k_batch_stride, p.k_row_stride, p.k_head_stride, kv_head, k_row0);
  const Element* v_ptr = at(p.v, p.v_batch_stride, p.v_row_stride, p.v_head_stride, kv_head, k_row0);
  const Element* do_ptr = at(p.dout, p.do_batch_stride, p.do_row_stride, p.do_head_stride, head, q_row0);
  const float* lse_ptr =
      p.lse + (varlen ? head * p.lse_head_stride + q_row0 : batch * p.lse_batch_stride + head * p.lse_head_stride);
  const float* d_ptr = p.softmax_d + head * p.total_q + q_row0;
  float* dq_acc_ptr = p.dq_accum + (head * p.total_q + q_row0) * p.head_dim;

  // --- tensors ------------------------------------------------------------------------------------
  Tensor mQ = make_tensor(make_gmem_ptr(q_ptr), make_shape(len_q, Int<kHeadDim>{}), make_stride(p.q_row_stride, _1{}));
  Tensor mdO = make_tensor(make_gmem_ptr(do_ptr), make_shape(len_q, Int<kHeadDim>{}), make_stride(p.do_row_stride, _1{}));
  Tensor mK = make_tensor(make_gmem_ptr(k_ptr), make_shape(len_k, Int<kHeadDim>{}), make_stride(p.k_row_stride, _1{}));
  Tensor mV = make_tensor(make_gmem_ptr(v_ptr), make_shape(len_k, Int<kHeadDim>{}), make_stride(p.v_row_stride, _1{}));
  Tensor gQ = local_tile(mQ, Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(_, 0));     // (BM, D, m)
  Tensor gdO = local_tile(mdO, Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(_, 0));   // (BM, D, m)
  Tensor gK = local_tile(mK, Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(n_block, 0));  // (BN, D)
  Tensor gV = local_tile(mV, Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(n_block, 0));  // (BN, D)

  extern __shared__ __align__(128) char smem[];
  Element* smem_k = reinterpret_cast<Element*>(smem);
  Element* smem_v = smem_k + Tr::kSmemKV;
  Element* smem_q = smem_v + Tr::kSmemKV;            // kStages buffers
  Element* smem_do = smem_q + kStages * Tr::kSmemQ;  // kStages buffers
  Element* smem_p = smem_do + kStages * Tr::kSmemQ;
  Element* smem_ds = smem_p + Tr::kSmemPdS;
  Tensor sK = make_tensor(make_smem_ptr(smem_k), typename Tr::SmemLayoutKV{});          // (BN, D)
  Tensor sV = make_tensor(make_smem_ptr(smem_v), typename Tr::SmemLayoutKV{});          // (BN, D)
  Tensor sKt = make_tensor(make_smem_ptr(smem_k), typename Tr::SmemLayoutKt{});         // (D, BN)
  Tensor sKtNoSwizzle = make_tensor(make_smem_ptr(smem_k), typename Tr::SmemLayoutKtNoSwizzle{});
  Tensor sP = make_tensor(make_smem_ptr(smem_p), typename Tr::SmemLayoutPdS{});         // (BM, BN)
  Tensor sdS = make_tensor(make_smem_ptr(smem_ds), typename Tr::SmemLayoutPdS{});       // (BM, BN)
  Tensor sPt = make_tensor(make_smem_ptr(smem_p), typename Tr::SmemLayoutPdSt{});       // (BN, BM)
  Tensor sdSt = make_tensor(make_smem_ptr(smem_ds), typename Tr::SmemLayoutPdSt{});     // (BN, BM)
  Tensor sPdStNoSwizzle = make_tensor(make_smem_ptr(smem_p), typename Tr::SmemLayoutPdStNoSwizzle{});
  // Q / dO of buffer `b`, and their transposed views.
  const auto sQ_of = [&](int b) { return make_tensor(make_smem_ptr(smem_q + b * Tr::kSmemQ), typename Tr::SmemLayoutQ{}); };
  const auto sdO_of = [&](int b) { return make_tensor(make_smem_ptr(smem_do + b * Tr::kSmemQ), typename Tr::SmemLayoutQ{}); };
  const auto sQt_of = [&](int b) { return make_tensor(make_smem_ptr(smem_q + b * Tr::kSmemQ), typename Tr::SmemLayoutQt{}); };
  const auto sdOt_of = [&](int b) { return make_tensor(make_smem_ptr(smem_do + b * Tr::kSmemQ), typename Tr::SmemLayoutQt{}); };
  Tensor sQtNoSwizzle = make_tensor(make_smem_ptr(smem_q), typename Tr::SmemLayoutQtNoSwizzle{});  // shapes only

  // gmem -> smem partitions and their coordinates (for the out-of-range predicates).
  typename Tr::GmemCopyIn gmem_copy;
  auto g2s = gmem_copy.get_thread_slice(tidx);
  Tensor tQgQ = g2s.partition_S(gQ);     // (CPY, CPY_M, CPY_K, m)
  Tensor tdOgdO = g2s.partition_S(gdO);  // (CPY, CPY_M, CPY_K, m)
  Tensor tKgK = g2s.partition_S(gK);     // (CPY, CPY_N, CPY_K)
  Tensor tKsK = g2s.partition_D(sK);
  Tensor tVgV = g2s.partition_S(gV);
  Tensor tVsV = g2s.partition_D(sV);
  Tensor tQcQ = g2s.partition_S(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));  // -> (row, col)
  Tensor tKcK = g2s.partition_S(make_identity_tensor(Shape<Int<kBlockN>, Int<kHeadDim>>{}));

  const auto load_q_do = [&](int m_block, int b) {
    const int64_t rows = len_q - int64_t(m_block) * kBlockM;
    copy_zfill(gmem_copy, tQgQ(_, _, _, m_block), g2s.partition_D(sQ_of(b)), tQcQ, rows, p.head_dim);
    copy_zfill(gmem_copy, tdOgdO(_, _, _, m_block), g2s.partition_D(sdO_of(b)), tQcQ, rows, p.head_dim_v);
  };

  // S = Q K^T and dP = dO V^T.
  typename Tr::TiledMmaSdP mma_sdp;
  auto thr_sdp = mma_sdp.get_thread_slice(tidx);
  Tensor tSrQ = thr_sdp.partition_fragment_A(sQ_of(0));   // (MMA, MMA_M, MMA_K)
  Tensor tSrK = thr_sdp.partition_fragment_B(sK);         // (MMA, MMA_N, MMA_K)
  Tensor tdPrdO = thr_sdp.partition_fragment_A(sdO_of(0));
  Tensor tdPrV = thr_sdp.partition_fragment_B(sV);
  auto s2r_sdp_a = make_tiled_copy_A(typename Tr::SmemCopyAtom{}, mma_sdp);
  auto s2r_thr_sdp_a = s2r_sdp_a.get_thread_slice(tidx);
  auto s2r_sdp_b = make_tiled_copy_B(typename Tr::SmemCopyAtom{}, mma_sdp);
  auto s2r_thr_sdp_b = s2r_sdp_b.get_thread_slice(tidx);
  Tensor tSsK = s2r_thr_sdp_b.partition_S(sK);
  Tensor tdPsV = s2r_thr_sdp_b.partition_S(sV);
  Tensor tScS = thr_sdp.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));  // (MMA, MMA_M, MMA_N)
  Tensor tScS_rc = make_tensor(tScS.data(), rowcol_layout(tScS.layout()));  // (rows, cols) -> (row, col)
  constexpr int kRows = decltype(size<0>(tScS_rc))::value;
  // P and dS registers -> smem.
  auto r2s_pds = make_tiled_copy_C(typename Tr::SmemCopyAtomStage{}, mma_sdp);
  auto r2s_thr_pds = r2s_pds.get_thread_slice(tidx);
  Tensor tPsP = r2s_thr_pds.partition_D(sP);
  Tensor tdSsdS = r2s_thr_pds.partition_D(sdS);

  // dV += P^T dO and dK += dS^T Q.
  typename Tr::TiledMmadKV mma_dkv;
  auto thr_dkv = mma_dkv.get_thread_slice(tidx);
  Tensor tdVrPt = thr_dkv.partition_fragment_A(sPdStNoSwizzle);  // (MMA, MMA_N, MMA_M)
  Tensor tdVrdOt = thr_dkv.partition_fragment_B(sQtNoSwizzle);   // (MMA, MMA_D, MMA_M)
  Tensor tdKrdSt = thr_dkv.partition_fragment_A(sPdStNoSwizzle);
  Tensor tdKrQt = thr_dkv.partition_fragment_B(sQtNoSwizzle);
  auto s2r_dkv_a = make_tiled_copy_A(typename Tr::SmemCopyAtomT{}, mma_dkv);
  auto s2r_thr_dkv_a = s2r_dkv_a.get_thread_slice(tidx);
  auto s2r_dkv_b = make_tiled_copy_B(typename Tr::SmemCopyAtomT{}, mma_dkv);
  auto s2r_thr_dkv_b = s2r_dkv_b.get_thread_slice(tidx);
  Tensor tdVsPt = s2r_thr_dkv_a.partition_S(sPt);
  Tensor tdKsdSt = s2r_thr_dkv_a.partition_S(sdSt);
  Tensor acc_dk = partition_fragment_C(mma_dkv, Shape<Int<kBlockN>, Int<kHeadDim>>{});  // (MMA, MMA_N, MMA_D)
  Tensor acc_dv = partition_fragment_C(mma_dkv, Shape<Int<kBlockN>, Int<kHeadDim>>{});
  clear(acc_dk);
  clear(acc_dv);

  // dQ = dS K.
  typename Tr::TiledMmadQ mma_dq;
  auto thr_dq = mma_dq.get_thread_slice(tidx);
  Tensor tdQrdS = thr_dq.partition_fragment_A(sdS);          // (MMA, MMA_M, MMA_N)
  Tensor tdQrKt = thr_dq.partition_fragment_B(sKtNoSwizzle);  // (MMA, MMA_D, MMA_N)
  auto s2r_dq_a = make_tiled_copy_A(typename Tr::SmemCopyAtom{}, mma_dq);
  auto s2r_thr_dq_a = s2r_dq_a.get_thread_slice(tidx);
  auto s2r_dq_b = make_tiled_copy_B(typename Tr::SmemCopyAtomT{}, mma_dq);
  auto s2r_thr_dq_b = s2r_dq_b.get_thread_slice(tidx);
  Tensor tdQsdS = s2r_thr_dq_a.partition_S(sdS);
  Tensor tdQsKt = s2r_thr_dq_b.partition_S(sKt);
  Tensor tdQcdQ = thr_dq.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));  // (MMA, MMA_M, MMA_D)
  Tensor tdQcdQ_rc = make_tensor(tdQcdQ.data(), rowcol_layout(tdQcdQ.layout()));

  const float slope = p.alibi_slopes != nullptr ? p.alibi_slopes[batch * p.alibi_batch_stride + head] : 0.0f;
  const float cap_scale = p.softcap > 0.0f ? p.softmax_scale / p.softcap : 0.0f;
  constexpr float kLog2e = 1.4426950408889634f;
  int* semaphores = p.deterministic ? p.dq_semaphore + (int64_t(batch) * p.heads_q + head) * p.semaphore_m_blocks : nullptr;

  // --- main loop over the query blocks that see this key block -----------------------------------
  if (m_begin < m_end) {
    copy_zfill(gmem_copy, tKgK, tKsK, tKcK, len_k - n0, p.head_dim);
    copy_zfill(gmem_copy, tVgV, tVsV, tKcK, len_k - n0, p.head_dim_v);
    load_q_do(m_begin, 0);
    cp_async_fence();
  }

  for (int m_block = m_begin; m_block < m_end; ++m_block) {
    const int buf = kStages == 2 ? (m_block - m_begin) & 1 : 0;
    const int64_t m0 = int64_t(m_block) * kBlockM;

    cp_async_wait<0>();
    // RAW: Q[m], dO[m] (and K, V) landed for every warp. WAR: every warp finished the previous block's
    // reads of P, dS and of the buffer the prefetch below overwrites.
    __syncthreads();
    if constexpr (kStages == 2) {
      if (m_block + 1 < m_end) {
        load_q_do(m_block + 1, buf ^ 1);
        cp_async_fence();
      }
    }

    Tensor acc_s = partition_fragment_C(mma_sdp, Shape<Int<kBlockM>, Int<kBlockN>>{});   // (MMA, MMA_M, MMA_N)
    Tensor acc_dp = partition_fragment_C(mma_sdp, Shape<Int<kBlockM>, Int<kBlockN>>{});  // (MMA, MMA_M, MMA_N)
    clear(acc_s);
    clear(acc_dp);
    gemm_ss(mma_sdp, acc_s, tSrQ, tSrK, s2r_thr_sdp_a.partition_S(sQ_of(buf)), tSsK, s2r_sdp_a, s2r_sdp_b,
            s2r_thr_sdp_a, s2r_thr_sdp_b);
    gemm_ss(mma_sdp, acc_dp, tdPrdO, tdPrV, s2r_thr_sdp_a.partition_S(sdO_of(buf)), tdPsV, s2r_sdp_a, s2r_sdp_b,
            s2r_thr_sdp_a, s2r_thr_sdp_b);

    // LSE (in log2 units) and D of this thread's rows; issued early, used after the two products.
    float lse2[kRows], dd[kRows];
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
      const int64_t row = m0 + get<0>(tScS_rc(r, 0));
      if (row < len_q) {
        const float l = lse_ptr[row];
        lse2[r] = l == -INFINITY ? INFINITY : l * kLog2e;  // a row that sees no key: P = 0, not exp(+inf)
        dd[r] = d_ptr[row];
      } else {
        lse2[r] = INFINITY;  // past the sequence: Q and dO rows are zero-filled, P = 0
        dd[r] = 0.0f;
      }
    }

    // Keys seen by every row of the block: [begin(last row), end(first row)); blocks inside need no mask.
    int64_t first_begin, first_end, last_begin, last_end;
    visible_key_range(m0, len_q, len_k, p.window, &first_begin, &first_end);
    visible_key_range((m0 + kBlockM < len_q ? m0 + kBlockM : len_q) - 1, len_q, len_k, p.window, &last_begin,
                      &last_end);
    const bool need_mask = !(n0 >= last_begin && n0 + kBlockN <= first_end);
    Tensor s_rc = make_tensor(acc_s.data(), rowcol_layout(acc_s.layout()));    // (rows, cols)
    Tensor dp_rc = make_tensor(acc_dp.data(), rowcol_layout(acc_dp.layout()));  // (rows, cols)
    if (p.transform_scores) {
      if (need_mask) bwd_p_ds<true, true>(s_rc, dp_rc, tScS_rc, p, m0, n0, len_q, len_k, slope, cap_scale, lse2, dd);
      else bwd_p_ds<true, false>(s_rc, dp_rc, tScS_rc, p, m0, n0, len_q, len_k, slope, cap_scale, lse2, dd);
    } else {
      if (need_mask) bwd_p_ds<false, true>(s_rc, dp_rc, tScS_rc, p, m0, n0, len_q, len_k, slope, cap_scale, lse2, dd);
      else bwd_p_ds<false, false>(s_rc, dp_rc, tScS_rc, p, m0, n0, len_q, len_k, slope, cap_scale, lse2, dd);
    }
    Tensor rP = convert_to<Element>(acc_s);
    Tensor rdS = convert_to<Element>(acc_dp);
    copy(r2s_pds, r2s_thr_pds.retile_S(rP), tPsP);
    copy(r2s_pds, r2s_thr_pds.retile_S(rdS), tdSsdS);
    __syncthreads();  // RAW: P and dS tiles complete in smem before any warp reads other warps' rows

    gemm_ss(mma_dkv, acc_dv, tdVrPt, tdVrdOt, tdVsPt, s2r_thr_dkv_b.partition_S(sdOt_of(buf)), s2r_dkv_a, s2r_dkv_b,
            s2r_thr_dkv_a, s2r_thr_dkv_b);
    gemm_ss(mma_dkv, acc_dk, tdKrdSt, tdKrQt, tdKsdSt, s2r_thr_dkv_b.partition_S(sQt_of(buf)), s2r_dkv_a, s2r_dkv_b,
            s2r_thr_dkv_a, s2r_thr_dkv_b);

    Tensor acc_dq = partition_fragment_C(mma_dq, Shape<Int<kBlockM>, Int<kHeadDim>>{});  // (MMA, MMA_M, MMA_D)
    clear(acc_dq);
    gemm_ss(mma_dq, acc_dq, tdQrdS, tdQrKt, tdQsdS, tdQsKt, s2r_dq_a, s2r_dq_b, s2r_thr_dq_a, s2r_thr_dq_b);

    // dQ += this key block's share. Deterministic mode: key blocks add in ascending order, each
    // waiting for the turn counter of this query block to reach its rank among the key blocks that
    // see it (the first is begin(first row) / kBlockN). The blocks waited on have smaller
    // blockIdx.x in the same (head, batch): launched earlier, they are resident or done, so the wait
    // ends.
    int* semaphore = nullptr;
    int turn = 0;
    if (p.deterministic) {
      semaphore = semaphores + m_block * (kBlockM / kBwdMinBlockM);
      turn = n_block - static_cast<int>(first_begin / kBlockN);
      if (tidx == 0) {
        while (ld_acquire_gpu(semaphore) != turn) {
        }
      }
      __syncthreads();  // the whole CTA adds only after the previous key block's adds are visible
    }
    Tensor acc_dq_rc = make_tensor(acc_dq.data(), rowcol_layout(acc_dq.layout()));  // (rows, cols)
    const int64_t rows_left = len_q - m0;
    float* dq_block = dq_acc_ptr + m0 * p.head_dim;
    CUTE_UNROLL
    for (int r = 0; r < size<0>(acc_dq_rc); ++r) {
      const int row = get<0>(tdQcdQ_rc(r, 0));
      if (row < rows_left) {
        float* dq_row = dq_block + int64_t(row) * p.head_dim;
        CUTE_UNROLL
        for (int c = 0; c < size<1>(acc_dq_rc); c += 2) {
          const int col = get<1>(tdQcdQ_rc(0, c));  // even; col + 1 is its neighbour
          if (col < p.head_dim) atomic_add_pair(dq_row + col, acc_dq_rc(r, c), acc_dq_rc(r, c + 1));
        }
      }
    }
    if (p.deterministic) {
      // Every thread's adds are issued before the release: the barrier orders them before thread 0's
      // store, and the release (gpu scope, cumulative) makes them visible before the new count.
      __syncthreads();
      if (tidx == 0) st_release_gpu(semaphore, turn + 1);
    }

    if constexpr (kStages == 1) {
      if (m_block + 1 < m_end) {
        __syncthreads();  // WAR: every warp finished reading Q[m] and dO[m] before they are overwritten
        load_q_do(m_block + 1, 0);
        cp_async_fence();
      }
    }
  }

  // --- epilogue: dK (scaled) and dV -------------------------------------------------------------
  const int64_t rows_k = len_k - n0;
  CUTE_UNROLL
  for (int i = 0; i < size(acc_dk); ++i) acc_dk(i) *= p.softmax_scale;
  if (p.dk_accum == nullptr) {
    // MHA: this CTA owns the rows; through smem (K and V's space) for 128-bit stores.
    Element* dk_ptr = static_cast<Element*>(p.dk) + (varlen ? k_row0 * p.dk_row_stride : batch * p.dk_batch_stride) +
                      head * p.dk_head_stride;
    Element* dv_ptr = static_cast<Element*>(p.dv) + (varlen ? k_row0 * p.dv_row_stride : batch * p.dv_batch_stride) +
                      head * p.dv_head_stride;
    Tensor gdK = local_tile(make_tensor(make_gmem_ptr(dk_ptr), make_shape(len_k, Int<kHeadDim>{}),
                                        make_stride(p.dk_row_stride, _1{})),
                            Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(n_block, 0));  // (BN, D)
    Tensor gdV = local_tile(make_tensor(make_gmem_ptr(dv_ptr), make_shape(len_k, Int<kHeadDim>{}),
                                        make_stride(p.dv_row_stride, _1{})),
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
    float* dk_acc = p.dk_accum + (head * p.total_k + k_row0 + n0) * p.head_dim;
    float* dv_acc = p.dv_accum + (head * p.total_k + k_row0 + n0) * p.head_dim_v;
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
          if (col < p.head_dim)
            *reinterpret_cast<float2*>(dk_acc + int64_t(row) * p.head_dim + col) = make_float2(dk_rc(r, c), dk_rc(r, c + 1));
          if (col < p.head_dim_v)
            *reinterpret_cast<float2*>(dv_acc + int64_t(row) * p.head_dim_v + col) = make_float2(dv_rc(r, c), dv_rc(r, c + 1));
        }
      }
    }
  }
}

}  // namespace flashcute::sm80
