#pragma once
// SM80 forward (FlashAttention-2 class): one CTA per (query block, head, batch). Q stays in smem;
// K and V blocks stream through smem with cp.async, each load issued one stage ahead: with one K/V
// buffer V[n] flies during S = Q K[n]^T and K[n-1] during the softmax and O += P V[n] (two barriers
// per block); with two (kv_stages) K[n-1] and V[n-1] fly during all of block n (one barrier). Both
// products run on mma.sync m16n8k16 with fp32 accumulation; P never leaves registers; O is staged
// through smem and written with 128-bit stores; LSE is written per row.

#include <cute/tensor.hpp>

#include <type_traits>

#include "common/fwd_params.h"
#include "common/mask.h"
#include "common/softmax.cuh"
#include "sm80/fwd_traits.cuh"
#include "sm80/utils.cuh"

namespace flashcute::sm80 {

// Score transform (softcap, ALiBi) and mask on one block's scores, seen as (rows, cols) with `coords`
// the same view of the identity partition: (row, col) inside the (kBlockM, kBlockN) tile. Each row's
// visible keys are one interval (mask.h's visible_key_range, the predicate the reference uses), so
// the per-element work is two integer compares against per-row bounds relative to n0. ColFrom: the
// first column (of the (rows, cols) view) the mask applies to, for a caller that knows every row sees
// every key of the columns before it (the SM90 forward's causal diagonal parts; no transform).
template <bool kTransform, bool kMask, class Scores, class Coords, class ColFrom = cute::Int<0>>
__device__ __forceinline__ void score_epilogue(Scores& scores, const Coords& coords, const FwdParams& p, int m0,
                                               int n0, int len_q, int len_k, float slope, ColFrom = {}) {
  static_assert(!kTransform || ColFrom::value == 0, "a transform applies to every score");
  using namespace cute;
  // Columns are taken relative to this thread's first one, col0: the per-element offsets are then
  // immediates (ptxas kept one register per absolute column live across the masked loops).
  const int col0 = get<1>(coords(0, 0));
  CUTE_UNROLL
  for (int r = 0; r < size<0>(scores); ++r) {
    const int i = m0 + get<0>(coords(r, 0));
    int lo = 0, hi = 0;
    if constexpr (kMask) {
      // Row i's visible keys, relative to n0 + col0.
      visible_key_range_i32(i, len_q, len_k, p.window, &lo, &hi);
      lo -= n0 + col0;
      hi -= n0 + col0;
    }
    // Column of row i's diagonal key, relative to n0 + col0 (ALiBi distance).
    const int diag = i + len_k - len_q - n0 - col0;
    CUTE_UNROLL
    for (int c = ColFrom::value; c < size<1>(scores); ++c) {
      const int col = get<1>(coords(0, c)) - col0;
      if constexpr (kTransform) {
        float s = scores(r, c);
        s = p.softcap > 0.0f ? p.softcap * tanh_fast(s * p.softcap_scale) : s * p.softmax_scale;
        if (p.alibi_slopes != nullptr) s -= slope * static_cast<float>(abs(diag - col));
        scores(r, c) = s;
      }
      if constexpr (kMask) {
        if (col < lo || col >= hi) scores(r, c) = -INFINITY;
      }
    }
  }
}

// kTransform: softcap or ALiBi is on. A separate instantiation keeps tanh and the bias arithmetic
// (and their registers) out of the plain kernel.
template <class Tr, bool kTransform>
__global__ void __launch_bounds__(Tr::kThreads, 1) fwd_kernel(const __grid_constant__ FwdParams p) {
  using namespace cute;
  using Element = typename Tr::Element;
  constexpr int kBlockM = Tr::kBlockM;
  constexpr int kBlockN = Tr::kBlockN;
  constexpr int kHeadDim = Tr::kHeadDim;
  constexpr int kKvStages = Tr::kKvStages;

  // reverse_m: query blocks launch last first; under a causal mask they see the most keys, so the
  // longest CTAs start in the first wave and the short ones fill the tail.
  const int m_block = Tr::kReverseM ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  const int tidx = threadIdx.x;

  // --- this CTA's sequence, rows and key range ---------------------------------------------------
  const bool varlen = p.cu_seqlens_q != nullptr;
  const int64_t q_row0 = varlen ? p.cu_seqlens_q[batch] : 0;
  const int64_t k_row0 = varlen ? p.cu_seqlens_k[batch] : 0;
  // Row and key indices inside one sequence are 32-bit (validation bounds sequence lengths by 2^29);
  // memory offsets stay 64-bit.
  const int len_q = varlen ? static_cast<int>(p.cu_seqlens_q[batch + 1] - q_row0) : static_cast<int>(p.seqlen_q);
  const int len_k = varlen ? static_cast<int>(p.cu_seqlens_k[batch + 1] - k_row0) : static_cast<int>(p.seqlen_k);
  const int m0 = m_block * kBlockM;
  if (m0 >= len_q) return;  // varlen: this sequence is shorter than max_seqlen_q
  const int m_last = (m0 + kBlockM < len_q ? m0 + kBlockM : len_q) - 1;
  const int kv_head = head / p.head_ratio;

  // Keys seen by some row of the block: [begin(first row), end(last row)); keys seen by every row:
  // [begin(last row), end(first row)). Blocks inside the second interval need no mask.
  int first_begin, first_end, last_begin, last_end;
  visible_key_range_i32(m0, len_q, len_k, p.window, &first_begin, &first_end);
  visible_key_range_i32(m_last, len_q, len_k, p.window, &last_begin, &last_end);
  const int n_block_min = first_begin / kBlockN;
  const int n_block_max = last_end > first_begin ? (last_end + kBlockN - 1) / kBlockN : n_block_min;

  const Element* q_ptr = static_cast<const Element*>(p.q) + (varlen ? q_row0 * p.q_row_stride : batch * p.q_batch_stride) +
                         head * p.q_head_stride;
  const Element* k_ptr = static_cast<const Element*>(p.k) + (varlen ? k_row0 * p.k_row_stride : batch * p.k_batch_stride) +
                         kv_head * p.k_head_stride;
  const Element* v_ptr = static_cast<const Element*>(p.v) + (varlen ? k_row0 * p.v_row_stride : batch * p.v_batch_stride) +
                         kv_head * p.v_head_stride;

  Element* o_ptr = static_cast<Element*>(p.out) + (varlen ? q_row0 * p.o_row_stride : batch * p.o_batch_stride) +
                   head * p.o_head_stride;  // (kParkLoopState derives it again in the epilogue)

  // --- tensors ------------------------------------------------------------------------------------
  Tensor mQ = make_tensor(make_gmem_ptr(q_ptr), make_shape(len_q, Int<kHeadDim>{}), make_stride(p.q_row_stride, _1{}));
  Tensor mK = make_tensor(make_gmem_ptr(k_ptr), make_shape(len_k, Int<kHeadDim>{}), make_stride(p.k_row_stride, _1{}));
  Tensor mV = make_tensor(make_gmem_ptr(v_ptr), make_shape(len_k, Int<kHeadDim>{}), make_stride(p.v_row_stride, _1{}));
  Tensor gQ = local_tile(mQ, Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(m_block, 0));  // (BM, D)
  Tensor gK = local_tile(mK, Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(_, 0));        // (BN, D, n)
  Tensor gV = local_tile(mV, Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_coord(_, 0));        // (BN, D, n)

  extern __shared__ __align__(128) char smem[];
  Tensor sQ = make_tensor(make_smem_ptr(reinterpret_cast<Element*>(smem)), typename Tr::SmemLayoutQ{});  // (BM, D)
  Tensor sK = make_tensor(sQ.data() + size(sQ), typename Tr::SmemLayoutKV{});                            // (BN, D)
  Tensor sV = make_tensor(sK.data() + size(sK), typename Tr::SmemLayoutKV{});                            // (BN, D)
  Tensor sVtNoSwizzle = make_tensor(sV.data().get(), typename Tr::SmemLayoutVtNoSwizzle{});              // (D, BN)

  // gmem -> smem partitions and their coordinates (for the out-of-range predicates).
  typename Tr::GmemCopyIn gmem_copy;
  auto g2s = gmem_copy.get_thread_slice(tidx);
  Tensor tQgQ = g2s.partition_S(gQ);  // (CPY, CPY_M, CPY_K)
  Tensor tQsQ = g2s.partition_D(sQ);
  Tensor tKgK = g2s.partition_S(gK);  // (CPY, CPY_N, CPY_K, n)
  Tensor tKsK = g2s.partition_D(sK);
  Tensor tVgV = g2s.partition_S(gV);
  Tensor tVsV = g2s.partition_D(sV);
  Tensor tQcQ = g2s.partition_S(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));   // (CPY, CPY_M, CPY_K) -> (row, col)
  Tensor tKcK = g2s.partition_S(make_identity_tensor(Shape<Int<kBlockN>, Int<kHeadDim>>{}));
  // The same coordinates from a fresh thread index, for the in-loop copies' padded-d path.
  auto make_tKcK = [&]() {
    return gmem_copy.get_thread_slice(fresh_tid_x())
        .partition_S(make_identity_tensor(Shape<Int<kBlockN>, Int<kHeadDim>>{}));
  };

  // This thread's K and V sources at key block 0, parked in smem past the K/V buffers: the in-loop
  // prefetch rebuilds its source partitions from them instead of keeping two 64-bit gmem offsets live
  // across the loop (at d 128 / block_n 64 they were spilled).
  struct KvSrc {
    const Element* k;
    const Element* v;
  };
  // kParkLoopState parks more of what the loop needs at every step but would keep live across all of
  // it (each was spilled at d 64 / block_n 128 while kept in registers): the ldmatrix thread offsets,
  // the first key block's index and the softmax's row sums, all read back where used.
  struct alignas(16) LoopPark {
    const Element* k;
    const Element* v;
    int ldsm_q, ldsm_k, ldsm_v;
    int first_block;  // n_block_max - 1: its V was loaded with Q and K
    float row_sum[4];  // kRows <= 4
  };
  using Park = std::conditional_t<Tr::kParkLoopState, LoopPark, KvSrc>;
  static_assert(sizeof(Park) == Tr::kSmemParkBytes, "fwd_traits.cuh's park size disagrees");
  Park* kv_src = reinterpret_cast<Park*>(smem + Tr::kSmemKvSrcOffset);
  // This thread's entry, from a base address the caller rebuilt (kParkLoopState: and a fresh thread
  // index, no register kept for it).
  auto parked = [&](const char* smem_now) -> Park& {
    return reinterpret_cast<Park*>(const_cast<char*>(smem_now) +
                                   Tr::kSmemKvSrcOffset)[Tr::kParkLoopState ? fresh_tid_x() : tidx];
  };
  // The thread's (CPY, CPY_N, CPY_K) source partition of one K or V block from its parked base.
  // kParkLoopState: its layout rebuilt per use from a laundered row stride (the layout of tKgK /
  // tVgV holds its row step, a 64-bit multiple of the stride, which ptxas otherwise kept live across
  // the loop: spilled at d 64 / block_n 128); else tXgX's layout, as before.
  auto block_src = [&](const Element* thread_base, int64_t row_stride, const auto& tXgX) {
    if constexpr (Tr::kParkLoopState) {
      asm volatile("" : "+l"(row_stride));
      return make_tensor(make_gmem_ptr(thread_base),
                         g2s.partition_S(make_tensor(make_gmem_ptr(static_cast<const Element*>(nullptr)),
                                                     Shape<Int<kBlockN>, Int<kHeadDim>>{}, make_stride(row_stride, _1{})))
                             .layout());
    } else {
      return make_tensor(make_gmem_ptr(thread_base), tXgX(_, _, _, 0).layout());
    }
  };

  // MMA partitions.
  typename Tr::TiledMma mma;
  auto thr_mma = mma.get_thread_slice(tidx);
  Tensor tSrQ = thr_mma.partition_fragment_A(sQ);            // (MMA, MMA_M, MMA_K)
  Tensor tSrK = thr_mma.partition_fragment_B(sK);            // (MMA, MMA_N, MMA_K)
  Tensor tOrVt = thr_mma.partition_fragment_B(sVtNoSwizzle);  // (MMA, MMA_K, MMA_N)
  Tensor acc_o = partition_fragment_C(mma, Shape<Int<kBlockM>, Int<kHeadDim>>{});  // (MMA, MMA_M, MMA_K)
  // Thread t's (row, col) coordinates in the (kBlockM, kBlockN) tile, seen as (rows, cols).
  auto coords = [&](int t) {
    Tensor c = mma.get_thread_slice(t).partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));
    return make_tensor(c.data(), rowcol_layout(c.layout()));
  };
  Tensor tScS_rc = coords(tidx);  // (rows, cols) -> (row, col)

  auto s2r_copy_q = make_tiled_copy_A(typename Tr::SmemCopyAtom{}, mma);
  auto s2r_thr_q = s2r_copy_q.get_thread_slice(tidx);
  auto s2r_copy_k = make_tiled_copy_B(typename Tr::SmemCopyAtom{}, mma);
  auto s2r_thr_k = s2r_copy_k.get_thread_slice(tidx);
  auto s2r_copy_v = make_tiled_copy_B(typename Tr::SmemCopyAtomVt{}, mma);
  auto s2r_thr_v = s2r_copy_v.get_thread_slice(tidx);

  // ldmatrix sources addressed with one XOR per copy from the thread's swizzled offset in each tile
  // (utils.cuh's LdsmXorSource): one register per operand across the loop instead of cute's base plus
  // two per-thread k strides.
  using SrcQ = LdsmXorSource<Element, typename Tr::SmemLayoutQ, decltype(s2r_thr_q)>;
  using SrcK = LdsmXorSource<Element, typename Tr::SmemLayoutKV, decltype(s2r_thr_k)>;
  using SrcVt = LdsmXorSource<Element, typename Tr::SmemLayoutVt, decltype(s2r_thr_v)>;
  const int ldsm_q = SrcQ::thread_offset(s2r_thr_q, reinterpret_cast<Element*>(smem));
  const int ldsm_k = SrcK::thread_offset(s2r_thr_k, reinterpret_cast<Element*>(smem));
  const int ldsm_v = SrcVt::thread_offset(s2r_thr_v, reinterpret_cast<Element*>(smem));
  if constexpr (Tr::kParkLoopState) {
    kv_src[tidx] = LoopPark{raw_pointer_cast(tKgK(_, _, _, 0).data()), raw_pointer_cast(tVgV(_, _, _, 0).data()),
                            ldsm_q, ldsm_k, ldsm_v, n_block_max - 1, {0.0f, 0.0f, 0.0f, 0.0f}};
  } else {
    kv_src[tidx] = KvSrc{raw_pointer_cast(tKgK(_, _, _, 0).data()), raw_pointer_cast(tVgV(_, _, _, 0).data())};
  }

  constexpr int kRows = decltype(size<0>(rowcol_layout(acc_o.layout())))::value;
  static_assert(!Tr::kParkLoopState || kRows <= 4, "LoopPark holds at most 4 row sums");
  OnlineSoftmax<kRows, 4, Tr::kSoftmaxPolicy> softmax;
  clear(acc_o);
  const float mult = p.score_log2_mult;
  const float slope =
      kTransform && p.alibi_slopes != nullptr ? p.alibi_slopes[batch * p.alibi_batch_stride + head] : 0.0f;

  // --- main loop: key blocks from last to first (boundary blocks of causal masks come first) -------
  // One step per key block; kMask says whether the block needs the per-element mask. The blocks
  // split into three runs, [unmasked_hi, n_block_max) masked, [unmasked_lo, unmasked_hi) unmasked
  // and [n_block_min, unmasked_lo) masked, each a loop of its own: a per-block branch inside one
  // loop was if-converted by ptxas into ~100 predicated-off compares and selects issued in every
  // block, masked or not. always_inline: with two call sites nvcc outlined the masked step (d 192).
  // mask_tag: std::true_type / std::false_type, or a bool decided per block at run time.
  auto step = [&](const int n_block, auto mask_tag) __attribute__((always_inline)) {
    const int n0 = n_block * kBlockN;
    // The ldmatrix source partitions are rebuilt each step from a base address the compiler
    // cannot see through: otherwise ptxas hoists one swizzled address per ldmatrix (~50-70 of
    // them) out of the loop and keeps them live across it, which is what made 32 query rows per
    // warp spill at d 128 (docs/perf-notes.md).
    uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    asm volatile("" : "+r"(smem_base));
    Element* smem_step = reinterpret_cast<Element*>(__cvta_shared_to_generic(smem_base));
    // Two K/V stages: blocks alternate buffers, the first one (n_block_max - 1) in buffer 0.
    const int buf = kKvStages == 2 ? (n_block_max - 1 - n_block) & 1 : 0;
    Element* k_step = smem_step + Tr::kSmemQ + buf * 2 * Tr::kSmemKV;
    // The thread offsets must vary per step as far as ptxas can tell, or it hoists the XOR of every
    // copy out of the loop (an empty asm is no instruction in PTX, so laundering them alone does not
    // do): zero = n_block >> 31 is 0 (n_block >= n_block_min >= 0), unknown to both compilers. With
    // kParkLoopState they are read back from smem instead (no register across the loop).
    int off_q, off_k, off_v;
    if constexpr (Tr::kParkLoopState) {
      const Park& me = parked(reinterpret_cast<const char*>(smem_step));
      off_q = me.ldsm_q, off_k = me.ldsm_k, off_v = me.ldsm_v;
    } else {
      int zero = n_block;
      asm volatile("" : "+r"(zero));
      zero >>= 31;
      off_q = ldsm_q | zero, off_k = ldsm_k | zero, off_v = ldsm_v | zero;
    }
    const SrcQ tSsQ{smem_step, off_q};            // Q (BM, D)
    const SrcK tSsK{k_step, off_k};               // K (BN, D)
    const SrcVt tOsVt{k_step + Tr::kSmemKV, off_v};  // V^T (D, BN)
    Tensor acc_s = partition_fragment_C(mma, Shape<Int<kBlockM>, Int<kBlockN>>{});  // (MMA, MMA_M, MMA_N)
    clear(acc_s);
    if constexpr (kKvStages == 1 && Tr::kParkLoopState) {
      // The first step: Q and K (the older group) only; its V, issued with them, may still fly.
      if (n_block == parked(reinterpret_cast<const char*>(smem_step)).first_block) cp_async_wait<1>();
      else cp_async_wait<0>();
    } else {
      cp_async_wait<0>();
    }
    if constexpr (kKvStages == 2) {
      // RAW: K[n] and V[n] (and Q) landed for every warp. WAR: every warp finished the previous step,
      // the last reader of the other buffer, before K[n-1] and V[n-1] overwrite it; they have this
      // whole step to land.
      __syncthreads();
      if (n_block > n_block_min) {
        const int next = (buf ^ 1) * 2 * size(sK);
        const Park src = parked(reinterpret_cast<const char*>(smem_step));
        const int64_t n_prev = n_block - 1;
        Tensor tKgK_prev = block_src(src.k + n_prev * kBlockN * p.k_row_stride, p.k_row_stride, tKgK);
        Tensor tVgV_prev = block_src(src.v + n_prev * kBlockN * p.v_row_stride, p.v_row_stride, tVgV);
        // Block n_block - 1 is never the last key block (n_block <= n_block_max - 1), so all its
        // rows are in range: only padded head dims need a column predicate.
        copy_zfill_cols(gmem_copy, tKgK_prev, g2s.partition_D(make_tensor(sK.data() + next, sK.layout())), make_tKcK,
                        p.head_dim, kHeadDim);
        copy_zfill_cols(gmem_copy, tVgV_prev, g2s.partition_D(make_tensor(sV.data() + next, sV.layout())), make_tKcK,
                        p.head_dim_v, kHeadDim);
        cp_async_fence();
      }
    } else {
      // RAW: K[n] (and Q) landed for every warp. WAR: every warp finished reading V[n+1] in the
      // previous step's P V before V[n] overwrites it.
      __syncthreads();
      if constexpr (Tr::kParkLoopState) {
        // V[n] from the parked base, as K below (the partition of tVgV kept a 64-bit pointer and
        // the predicate's coordinates live across the loop: spilled at d 64 / block_n 128). The
        // first block's V, the only one that may reach past len_k, came with Q and K: the others
        // are interior, so only padded head dims need a predicate.
        const Park src = parked(reinterpret_cast<const char*>(smem_step));
        if (n_block != src.first_block) {
          copy_zfill_cols(gmem_copy, block_src(src.v + int64_t(n_block) * kBlockN * p.v_row_stride, p.v_row_stride, tVgV),
                          tVsV, make_tKcK, p.head_dim_v, kHeadDim);
        }
      } else {
        copy_zfill(gmem_copy, tVgV(_, _, _, n_block), tVsV, tKcK, len_k - n0, p.head_dim_v);
      }
      cp_async_fence();
    }

    gemm_ss<Tr::kFragPrefetch>(mma, acc_s, tSrQ, tSrK, tSsQ, tSsK, s2r_copy_q, s2r_copy_k, s2r_thr_q, s2r_thr_k);

    Tensor scores = make_tensor(acc_s.data(), rowcol_layout(acc_s.layout()));  // (rows, cols)
    // The mask's per-row key bounds are rebuilt each masked step from an opaque m0: hoisted out of the
    // loop they were 8 registers live across it (spilled at d 128 / block_n 64).
    int m0_step = m0;
    asm volatile("" : "+r"(m0_step));
    // With kParkLoopState so are the thread's (row, col) coordinates, from a fresh thread index
    // (from tScS_rc, their thread offsets stayed live across the loop: spilled at d 64 / block_n 128).
    Tensor tScS_rc_step = Tr::kParkLoopState ? coords(fresh_tid_x()) : tScS_rc;  // (rows, cols) -> (row, col)
    if constexpr (std::is_same_v<decltype(mask_tag), bool>) {
      if (mask_tag) score_epilogue<kTransform, true>(scores, tScS_rc_step, p, m0_step, n0, len_q, len_k, slope);
      else score_epilogue<kTransform, false>(scores, tScS_rc_step, p, m0_step, n0, len_q, len_k, slope);
    } else if constexpr (kTransform || decltype(mask_tag)::value) {
      score_epilogue<kTransform, decltype(mask_tag)::value>(scores, tScS_rc_step, p, m0_step, n0, len_q, len_k, slope);
    }

    if constexpr (kKvStages == 1) {
      cp_async_wait<0>();
      // RAW: V[n] landed. WAR: every warp finished reading K[n] in Q K^T before K[n-1] overwrites it.
      __syncthreads();
      if (n_block > n_block_min) {
        const Park src = parked(reinterpret_cast<const char*>(smem_step));
        Tensor tKgK_prev = block_src(src.k + int64_t(n_block - 1) * kBlockN * p.k_row_stride, p.k_row_stride, tKgK);
        copy_zfill_cols(gmem_copy, tKgK_prev, tKsK, make_tKcK, p.head_dim, kHeadDim);  // an interior block
        cp_async_fence();
      }
    }

    Tensor acc_o_rc = make_tensor(acc_o.data(), rowcol_layout(acc_o.layout()));
    // kParkLoopState: the row sums live in smem between steps (4 registers fewer across the
    // products: at d 64 / block_n 128 they were what ptxas spilled).
    if constexpr (Tr::kParkLoopState) {
      const Park& park = parked(reinterpret_cast<const char*>(smem_step));
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) softmax.row_sum[r] = park.row_sum[r];
    }
    softmax.update(scores, acc_o_rc, mult);
    if constexpr (Tr::kParkLoopState) {
      Park& park = parked(reinterpret_cast<const char*>(smem_step));
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) park.row_sum[r] = softmax.row_sum[r];
    }

    Tensor rP = convert_to<Element>(acc_s);
    Tensor tOrP = make_tensor(rP.data(), acc_as_a_layout(rP.layout()));  // (MMA, MMA_M, MMA_N / 2)
    gemm_rs<Tr::kFragPrefetch>(mma, acc_o, tOrP, tOrVt, tOsVt, s2r_copy_v, s2r_thr_v);
  };

  if (n_block_max > n_block_min) {
    copy_zfill(gmem_copy, tQgQ, tQsQ, tQcQ, len_q - m0, p.head_dim);
    int n_block = n_block_max - 1;
    copy_zfill(gmem_copy, tKgK(_, _, _, n_block), tKsK, tKcK, len_k - n_block * kBlockN, p.head_dim);
    if constexpr (kKvStages == 2) {
      copy_zfill(gmem_copy, tVgV(_, _, _, n_block), tVsV, tKcK, len_k - n_block * kBlockN, p.head_dim_v);
    } else if constexpr (Tr::kParkLoopState) {
      // The first block's V in a group of its own, so that the first step waits for Q and K only and
      // V lands during its Q K^T, as every later step's V does.
      cp_async_fence();
      copy_zfill(gmem_copy, tVgV(_, _, _, n_block), tVsV, tKcK, len_k - n_block * kBlockN, p.head_dim_v);
    }
    cp_async_fence();

    // A block needs no mask when every row of the query block sees all of it: n0 >= last_begin
    // and n0 + kBlockN <= first_end (first_end may be <= 0: then no block qualifies).
    int unmasked_lo = (last_begin + kBlockN - 1) / kBlockN;
    int unmasked_hi = first_end > 0 ? first_end / kBlockN : 0;
    unmasked_lo = unmasked_lo > n_block_min ? unmasked_lo : n_block_min;
    unmasked_hi = unmasked_hi < n_block_max ? unmasked_hi : n_block_max;
    if (unmasked_lo >= unmasked_hi) unmasked_lo = unmasked_hi = n_block_min;
    if constexpr (kTransform) {
      // The softcap/ALiBi kernel transforms every block anyway; three copies of its larger step
      // spilled at d 192 (sm_80), so it keeps one loop and decides the mask per block.
      for (; n_block >= n_block_min; --n_block)
        step(n_block, n_block >= unmasked_hi || n_block < unmasked_lo);
    } else {
      for (; n_block >= unmasked_hi; --n_block) step(n_block, cute::true_type{});
      for (; n_block >= unmasked_lo; --n_block) step(n_block, cute::false_type{});
      for (; n_block >= n_block_min; --n_block) step(n_block, cute::true_type{});
    }
  }

  // --- epilogue: normalize, LSE, O through smem, 128-bit stores ---------------------------------
  // With kParkLoopState the tile's coordinates, sequence and output pointer are derived again from
  // a fresh block index (the values from the top, kept live across the main loop, were spilled at
  // d 64 / block_n 128).
  const int3 cta = Tr::kParkLoopState ? fresh_ctaid() : make_int3(blockIdx.x, head, batch);
  const int e_m0 =
      Tr::kParkLoopState ? (Tr::kReverseM ? static_cast<int>(gridDim.x) - 1 - cta.x : cta.x) * kBlockM : m0;
  const int e_head = cta.y, e_batch = cta.z;
  const int64_t e_q_row0 = !Tr::kParkLoopState ? q_row0 : varlen ? p.cu_seqlens_q[e_batch] : 0;
  const int e_len_q = !Tr::kParkLoopState ? len_q
                      : varlen            ? static_cast<int>(p.cu_seqlens_q[e_batch + 1] - e_q_row0)
                                          : static_cast<int>(p.seqlen_q);
  Element* e_o_ptr = !Tr::kParkLoopState ? o_ptr
                     : static_cast<Element*>(p.out) + (varlen ? e_q_row0 * p.o_row_stride : e_batch * p.o_batch_stride) +
                           e_head * p.o_head_stride;
  Tensor e_gO = local_tile(
      make_tensor(make_gmem_ptr(e_o_ptr), make_shape(e_len_q, Int<kHeadDim>{}), make_stride(p.o_row_stride, _1{})),
      Shape<Int<kBlockM>, Int<kHeadDim>>{}, make_coord(e_m0 / kBlockM, 0));  // (BM, D)
  if constexpr (Tr::kParkLoopState) {
    const Park& park = parked(smem);
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) softmax.row_sum[r] = park.row_sum[r];
  }
  float lse[kRows];
  Tensor acc_o_rc = make_tensor(acc_o.data(), rowcol_layout(acc_o.layout()));
  softmax.finalize(acc_o_rc, mult, lse);

  if (p.lse != nullptr) {
    float* lse_ptr = p.lse + (varlen ? e_head * p.lse_head_stride + e_q_row0
                                     : e_batch * p.lse_batch_stride + e_head * p.lse_head_stride);
    Tensor tScS_rc_e = Tr::kParkLoopState ? coords(fresh_tid_x()) : tScS_rc;  // (rows, cols) -> (row, col)
    if (get<1>(tScS_rc_e(0, 0)) == 0) {  // one lane of each quad owns the row
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        const int row = e_m0 + get<0>(tScS_rc_e(r, 0));
        if (row < e_len_q) lse_ptr[row] = lse[r];
      }
    }
  }

  Tensor rO = convert_to<Element>(acc_o);
  Tensor sO = make_tensor(sQ.data(), typename Tr::SmemLayoutO{});  // (BM, D), reuses Q's space
  auto r2s_copy_o = make_tiled_copy_C(typename Tr::SmemCopyAtomO{}, mma);
  auto r2s_thr_o = r2s_copy_o.get_thread_slice(tidx);
  Tensor taccOrO = r2s_thr_o.retile_S(rO);
  Tensor taccOsO = r2s_thr_o.partition_D(sO);
  __syncthreads();  // WAR: every warp finished its last ldmatrix of Q before O overwrites it
  copy(r2s_copy_o, taccOrO, taccOsO);

  typename Tr::GmemCopyOut gmem_copy_o;
  auto s2g = gmem_copy_o.get_thread_slice(tidx);
  Tensor tOsO = s2g.partition_S(sO);  // (CPY, CPY_M, CPY_K)
  Tensor tOgO = s2g.partition_D(e_gO);
  Tensor tOcO = s2g.partition_D(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  Tensor tOrO = make_tensor<Element>(shape(tOgO));
  __syncthreads();  // RAW: the whole O tile is in smem before threads read rows other warps wrote
  copy(gmem_copy_o, tOsO, tOrO);
  copy_predicated(gmem_copy_o, tOrO, tOgO, tOcO, e_len_q - e_m0, p.head_dim_v);
}

}  // namespace flashcute::sm80
