#pragma once
// SM90 forward (TMA + wgmma, warp-specialized): one CTA per (query block, head, batch).
//   producer warpgroup: one thread issues the TMA loads of Q (once) and of K[n], V[n] into a
//     `kStages`-deep ring of smem buffers (CUTLASS PipelineTmaAsync: a full and an empty mbarrier
//     per stage), key blocks from last to first;
//   consumer warpgroups (64 query rows each): S = Q K^T by wgmma from smem, score transform and
//     mask on boundary blocks only, online softmax in fp32 (exp2), O += P V by wgmma with P from
//     registers; then O normalized, staged through smem (Q's space) and written with 128-bit stores,
//     LSE per row.
// Out-of-range rows and the padding columns of a head-dim bucket arrive as zeros (TMA fills what
// lies outside the tensor map's extents). In varlen the extents are the packed totals, so a tile
// past the end of its sequence holds the next sequence's rows: their keys are masked (every block
// that reaches past len_k is a boundary block) and their query rows are never stored.

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/pipeline/sm90_pipeline.hpp>

#include "common/fwd_params.h"
#include "common/mask.h"
#include "common/softmax.cuh"
#include "sm80/fwd_kernel.cuh"  // score_epilogue: the score transform and mask shared by both paths
#include "sm80/utils.cuh"       // convert_to, copy_predicated
#include "sm90/fwd_traits.cuh"
#include "sm90/roles.h"
#include "sm90/utils.cuh"

namespace flashcute::sm90 {

template <class Tr, bool kTransform>
__global__ void __launch_bounds__(Tr::kThreads, 1) fwd_kernel(const __grid_constant__ typename Tr::Params params) {
  using namespace cute;
  using Element = typename Tr::Element;
  using Pipeline = typename Tr::Pipeline;
  using PipelineState = typename Tr::PipelineState;
  using BlockM = typename Tr::BlockM;
  using BlockN = typename Tr::BlockN;
  using HeadDim = typename Tr::HeadDim;
  using Barrier = cutlass::arch::ClusterTransactionBarrier;
  constexpr int kBlockM = Tr::kBlockM;
  constexpr int kBlockN = Tr::kBlockN;
  const FwdParams& p = params.p;

  const int m_block = blockIdx.x;
  const int head = blockIdx.y;
  const int batch = blockIdx.z;
  const int tidx = threadIdx.x;

  // --- this CTA's sequence, rows and key range (as on the SM80 path) --------------------------------
  const bool varlen = p.cu_seqlens_q != nullptr;
  const int64_t q_row0 = varlen ? p.cu_seqlens_q[batch] : 0;
  const int64_t k_row0 = varlen ? p.cu_seqlens_k[batch] : 0;
  const int len_q = varlen ? static_cast<int>(p.cu_seqlens_q[batch + 1] - q_row0) : static_cast<int>(p.seqlen_q);
  const int len_k = varlen ? static_cast<int>(p.cu_seqlens_k[batch + 1] - k_row0) : static_cast<int>(p.seqlen_k);
  const int m0 = m_block * kBlockM;
  if (m0 >= len_q) return;  // varlen: this sequence is shorter than max_seqlen_q (uniform: before any barrier)
  const int m_last = (m0 + kBlockM < len_q ? m0 + kBlockM : len_q) - 1;
  const int kv_head = head / p.head_ratio;

  // Keys seen by some row of the block: [begin(first row), end(last row)); keys seen by every row:
  // [begin(last row), end(first row)). Blocks inside the second interval need no mask.
  int first_begin, first_end, last_begin, last_end;
  visible_key_range_i32(m0, len_q, len_k, p.window, &first_begin, &first_end);
  visible_key_range_i32(m_last, len_q, len_k, p.window, &last_begin, &last_end);
  const int n_block_min = first_begin / kBlockN;
  const int n_block_max = last_end > first_begin ? (last_end + kBlockN - 1) / kBlockN : n_block_min;
  const bool any_key = n_block_max > n_block_min;

  extern __shared__ __align__(1024) char smem_raw[];
  auto& ss = *reinterpret_cast<typename Tr::SharedStorage*>(smem_raw);
  Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Tr::SmemLayoutQ{});    // (BM, D)
  Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), typename Tr::SmemLayoutK{});    // (BN, D, stage)
  Tensor sV = make_tensor(make_smem_ptr(ss.v.data()), typename Tr::SmemLayoutV{});    // (BN, D, stage)
  Tensor sVt = make_tensor(make_smem_ptr(ss.v.data()), typename Tr::SmemLayoutVt{});  // (D, BN, stage)

  // --- barriers: Q's one-shot transaction barrier and the K and V pipelines ----------------------------
  const int wg_idx = cutlass::canonical_warp_group_idx();
  const bool producer = wg_idx == static_cast<int>(WarpgroupRole::kProducer);
  typename Pipeline::Params pipe;
  pipe.transaction_bytes = Tr::kTmaBytesKV;
  pipe.role = producer ? Pipeline::ThreadCategory::Producer : Pipeline::ThreadCategory::Consumer;
  pipe.is_leader = tidx == 0;  // the thread that issues every TMA
  pipe.num_consumers = Tr::kConsumerThreads;
  if (tidx == 0) Barrier::init(&ss.barrier_q, 1);
  // Both constructors initialize their mbarriers from warp 0 and fence the initialization.
  Pipeline pipeline_k(ss.pipeline_k, pipe, Shape<_1, _1, _1>{});
  Pipeline pipeline_v(ss.pipeline_v, pipe, Shape<_1, _1, _1>{});
  // RAW: every mbarrier is initialized before any thread waits on or arrives at it.
  __syncthreads();

  if (producer) {
    cutlass::arch::warpgroup_reg_dealloc<kProducerRegs>();
    if (tidx != 0 || !any_key) return;
    // Coordinate tensors of the TMA descriptors: (rows, d) of this (head, batch); varlen rows start
    // at the sequence's first packed row.
    const int q_batch = varlen ? 0 : batch;
    Tensor mQ = domain_offset(make_coord(static_cast<int>(q_row0), _0{}),
                              params.tma_q.get_tma_tensor(params.shape_q)(_, _, head, q_batch));
    Tensor mK = domain_offset(make_coord(static_cast<int>(k_row0), _0{}),
                              params.tma_k.get_tma_tensor(params.shape_k)(_, _, kv_head, q_batch));
    Tensor mV = domain_offset(make_coord(static_cast<int>(k_row0), _0{}),
                              params.tma_v.get_tma_tensor(params.shape_v)(_, _, kv_head, q_batch));
    Tensor gQ = local_tile(mQ, Shape<BlockM, HeadDim>{}, make_coord(m_block, _0{}));  // (BM, D)
    Tensor gK = local_tile(mK, Shape<BlockN, HeadDim>{}, make_coord(_, _0{}));        // (BN, D, n)
    Tensor gV = local_tile(mV, Shape<BlockN, HeadDim>{}, make_coord(_, _0{}));        // (BN, D, n)
    auto [tQgQ, tQsQ] = tma_partition(params.tma_q, _0{}, Layout<_1>{}, group_modes<0, 2>(sQ), group_modes<0, 2>(gQ));
    auto [tKgK, tKsK] = tma_partition(params.tma_k, _0{}, Layout<_1>{}, group_modes<0, 2>(sK), group_modes<0, 2>(gK));
    auto [tVgV, tVsV] = tma_partition(params.tma_v, _0{}, Layout<_1>{}, group_modes<0, 2>(sV), group_modes<0, 2>(gV));

    Barrier::arrive_and_expect_tx(&ss.barrier_q, Tr::kTmaBytesQ);
    copy(params.tma_q.with(ss.barrier_q), tQgQ, tQsQ);
    PipelineState write = cutlass::make_producer_start_state<Pipeline>();
    for (int n_block = n_block_max - 1; n_block >= n_block_min; --n_block) {
      // WAR: producer_acquire waits until every consumer thread released this stage's last tile.
      pipeline_k.producer_acquire(write);
      copy(params.tma_k.with(*pipeline_k.producer_get_barrier(write)), tKgK(_, n_block), tKsK(_, write.index()));
      pipeline_v.producer_acquire(write);
      copy(params.tma_v.with(*pipeline_v.producer_get_barrier(write)), tVgV(_, n_block), tVsV(_, write.index()));
      ++write;
    }
    return;
  }

  // --- consumers ----------------------------------------------------------------------------------
  cutlass::arch::warpgroup_reg_alloc<kConsumerRegs>();
  const int ctid = tidx - kWarpgroupThreads;  // thread index among the consumers
  const int cwg = ctid / kWarpgroupThreads;   // consumer warpgroup: query rows [64 cwg, 64 cwg + 64)

  typename Tr::TiledMmaQK mma_qk;
  typename Tr::TiledMmaPV mma_pv;
  auto thr_qk = mma_qk.get_thread_slice(ctid);
  auto thr_pv = mma_pv.get_thread_slice(ctid);
  Tensor tSrQ = thr_qk.partition_fragment_A(sQ);   // (MMA, MMA_M, MMA_K) descriptors
  Tensor tSrK = thr_qk.partition_fragment_B(sK);   // (MMA, MMA_N, MMA_K, stage)
  Tensor tOrV = thr_pv.partition_fragment_B(sVt);  // (MMA, MMA_N, MMA_K, stage)
  Tensor acc_o = partition_fragment_C(mma_pv, Shape<BlockM, HeadDim>{});  // (MMA, MMA_M, MMA_N)
  Tensor acc_o_rc = make_tensor(acc_o.data(), gmma_rowcol_layout(acc_o.layout()));  // (rows, cols)
  Tensor tScS = thr_qk.partition_C(make_identity_tensor(Shape<BlockM, BlockN>{}));  // (MMA, MMA_M, MMA_N) -> (row, col)
  Tensor tScS_rc = make_tensor(tScS.data(), gmma_rowcol_layout(tScS.layout()));  // (rows, cols) -> (row, col)

  constexpr int kRows = decltype(size<0>(acc_o_rc))::value;
  OnlineSoftmax<kRows, 4> softmax;
  clear(acc_o);
  const float mult = p.score_log2_mult;
  const float slope =
      kTransform && p.alibi_slopes != nullptr ? p.alibi_slopes[batch * p.alibi_batch_stride + head] : 0.0f;

  // Score transform and mask of one block's S (boundary blocks only, unless softcap/ALiBi).
  auto transform_and_mask = [&](auto& acc_s, int n_block) {
    const int n0 = n_block * kBlockN;
    Tensor scores = make_tensor(acc_s.data(), gmma_rowcol_layout(acc_s.layout()));  // (rows, cols)
    const bool need_mask = !(n0 >= last_begin && n0 + kBlockN <= first_end);
    if constexpr (kTransform) {
      if (need_mask) sm80::score_epilogue<true, true>(scores, tScS_rc, p, m0, n0, len_q, len_k, slope);
      else sm80::score_epilogue<true, false>(scores, tScS_rc, p, m0, n0, len_q, len_k, slope);
    } else if (need_mask) {
      sm80::score_epilogue<false, true>(scores, tScS_rc, p, m0, n0, len_q, len_k, slope);
    }
    return scores;
  };

  if constexpr (!Tr::kOverlap) {
    if (any_key) {
      Barrier::wait(&ss.barrier_q, 0);  // RAW: Q landed
      PipelineState read;
      for (int n_block = n_block_max - 1; n_block >= n_block_min; --n_block) {
        Tensor acc_s = partition_fragment_C(mma_qk, Shape<BlockM, BlockN>{});  // (MMA, MMA_M, MMA_N)
        pipeline_k.consumer_wait(read);  // RAW: K[n] landed
        wgmma_gemm<true>(mma_qk, tSrQ, tSrK(_, _, _, read.index()), acc_s);
        warpgroup_wait<0>();
        pipeline_k.consumer_release(read);  // this thread's reads of K[n] are complete

        Tensor scores = transform_and_mask(acc_s, n_block);
        softmax.update(scores, acc_o_rc, mult);

        Tensor rP = sm80::convert_to<Element>(acc_s);
        Tensor tOrP = make_tensor(rP.data(), gmma_acc_as_a_layout(rP.layout()));  // (MMA, MMA_M, MMA_K)
        pipeline_v.consumer_wait(read);  // RAW: V[n] landed
        wgmma_gemm<false>(mma_pv, tOrP, tOrV(_, _, _, read.index()), acc_o);
        warpgroup_wait<0>();
        pipeline_v.consumer_release(read);
        ++read;
      }
    }
  } else if (any_key) {
    // Overlapped loop: step n issues S[n] = Q K[n]^T and then O += P[n+1] V[n+1] (the previous
    // block's), waits only for S[n], runs the softmax of block n while P V is on the tensor cores,
    // then waits for P V and applies block n's rescale to O. The rescale factors come out of the
    // shared OnlineSoftmax by handing it a one-column "O" of ones: it multiplies that column (and
    // its row sums) by exactly the factor it would have applied to O, so O sees the same operations
    // in the same order as in the plain loop.
    //
    // Ping-pong: a warpgroup issues its wgmma batch only on its turn (bar.sync on its kSchedule
    // barrier) and hands the turn over right after issuing (bar.arrive on the other's), so the
    // tensor cores alternate between the warpgroups while each one's softmax runs. Consumer
    // warpgroup 1 opens the first turn for warpgroup 0 and skips its very last hand-over, so every
    // bar.sync has exactly one matching bar.arrive generation.
    constexpr uint32_t kSchedThreads = 2 * kWarpgroupThreads;
    const uint32_t sched_mine = static_cast<uint32_t>(NamedBarrierId::kSchedule) + cwg;
    const uint32_t sched_other = static_cast<uint32_t>(NamedBarrierId::kSchedule) + (1 - cwg);
    auto turn_begin = [&] {
      if constexpr (Tr::kPingPong) named_barrier_sync(sched_mine, kSchedThreads);
    };
    auto turn_end = [&](bool last) {
      if constexpr (Tr::kPingPong) {
        if (!(last && cwg == 1)) named_barrier_arrive(sched_other, kSchedThreads);
      }
    };
    if constexpr (Tr::kPingPong) {
      if (cwg == 1) named_barrier_arrive(sched_other, kSchedThreads);
    }

    Tensor rescale = make_tensor<float>(Shape<Int<kRows>, _1>{});  // (rows, 1): block n's O factors
    Tensor rP = make_tensor<Element>(partition_fragment_C(mma_qk, Shape<BlockM, BlockN>{}).layout());
    Tensor tOrP = make_tensor(rP.data(), gmma_acc_as_a_layout(rP.layout()));  // (MMA, MMA_M, MMA_K)

    Barrier::wait(&ss.barrier_q, 0);  // RAW: Q landed
    PipelineState read;  // the stage of block n
    {
      const int n_block = n_block_max - 1;
      Tensor acc_s = partition_fragment_C(mma_qk, Shape<BlockM, BlockN>{});  // (MMA, MMA_M, MMA_N)
      pipeline_k.consumer_wait(read);  // RAW: K[n] landed
      turn_begin();
      wgmma_gemm<true>(mma_qk, tSrQ, tSrK(_, _, _, read.index()), acc_s);
      turn_end(false);
      warpgroup_wait<0>();
      pipeline_k.consumer_release(read);
      Tensor scores = transform_and_mask(acc_s, n_block);
      softmax.update(scores, acc_o_rc, mult);  // O is still 0: its rescale is a no-op
      convert_into(acc_s, rP);
    }
    PipelineState read_prev = read;  // the stage of block n + 1 (whose P V is pending)
    ++read;
    for (int n_block = n_block_max - 2; n_block >= n_block_min; --n_block) {
      Tensor acc_s = partition_fragment_C(mma_qk, Shape<BlockM, BlockN>{});  // (MMA, MMA_M, MMA_N)
      pipeline_k.consumer_wait(read);  // RAW: K[n] landed
      turn_begin();
      wgmma_gemm<true>(mma_qk, tSrQ, tSrK(_, _, _, read.index()), acc_s);
      pipeline_v.consumer_wait(read_prev);  // RAW: V[n+1] landed
      wgmma_gemm<false>(mma_pv, tOrP, tOrV(_, _, _, read_prev.index()), acc_o);
      turn_end(false);
      warpgroup_wait<1>();  // S[n] complete (the older batch); P V may still run
      pipeline_k.consumer_release(read);

      Tensor scores = transform_and_mask(acc_s, n_block);
      fill(rescale, 1.0f);
      softmax.update(scores, rescale, mult);

      warpgroup_wait<0>();  // O += P[n+1] V[n+1] complete: P's registers and V[n+1] are free
      warpgroup_fence_operand(tOrP);
      pipeline_v.consumer_release(read_prev);
      bool grew = false;
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) grew |= rescale(r, 0) != 1.0f;
      if (__any_sync(0xffffffffu, grew)) {  // warp-uniform skip: all factors exactly 1
        CUTE_UNROLL
        for (int r = 0; r < kRows; ++r) {
          CUTE_UNROLL
          for (int c = 0; c < size<1>(acc_o_rc); ++c) acc_o_rc(r, c) *= rescale(r, 0);
        }
      }
      convert_into(acc_s, rP);
      read_prev = read;
      ++read;
    }
    pipeline_v.consumer_wait(read_prev);  // RAW: V of the last block landed
    turn_begin();
    wgmma_gemm<false>(mma_pv, tOrP, tOrV(_, _, _, read_prev.index()), acc_o);
    turn_end(true);
    warpgroup_wait<0>();
    pipeline_v.consumer_release(read_prev);
  }

  // --- epilogue: normalize, LSE, O through smem, 128-bit stores ---------------------------------------
  float lse[kRows];
  softmax.finalize(acc_o_rc, mult, lse);

  if (p.lse != nullptr) {
    float* lse_ptr = p.lse + (varlen ? head * p.lse_head_stride + q_row0
                                     : batch * p.lse_batch_stride + head * p.lse_head_stride);
    if (get<1>(tScS_rc(0, 0)) == 0) {  // one lane of each quad owns the row
      CUTE_UNROLL
      for (int r = 0; r < kRows; ++r) {
        const int row = m0 + get<0>(tScS_rc(r, 0));
        if (row < len_q) lse_ptr[row] = lse[r];
      }
    }
  }

  // Each consumer warpgroup writes and reads back only its own 64 rows of sO (Q's space): its own
  // wgmmas were the last readers of those rows of sQ (all waited on above), so no CTA-wide barrier.
  Tensor rO = sm80::convert_to<Element>(acc_o);
  Tensor sO = make_tensor(make_smem_ptr(ss.q.data()), typename Tr::SmemLayoutO{});  // (BM, D)
  auto r2s_copy = make_tiled_copy_C(Copy_Atom<AutoVectorizingCopyWithAssumedAlignment<32>, Element>{}, mma_pv);
  auto r2s_thr = r2s_copy.get_thread_slice(ctid);
  Tensor taccOrO = r2s_thr.retile_S(rO);   // (CPY, CPY_M, CPY_N)
  Tensor taccOsO = r2s_thr.partition_D(sO);  // (CPY, CPY_M, CPY_N)
  copy(r2s_copy, taccOrO, taccOsO);
  // RAW: the warpgroup's O rows are in smem before its threads read rows other warps wrote.
  named_barrier_sync(static_cast<uint32_t>(NamedBarrierId::kEpilogue) + cwg, kWarpgroupThreads);

  Element* o_ptr = static_cast<Element*>(p.out) + (varlen ? q_row0 * p.o_row_stride : batch * p.o_batch_stride) +
                   head * p.o_head_stride;
  Tensor mO = make_tensor(make_gmem_ptr(o_ptr), make_shape(len_q, HeadDim{}), make_stride(p.o_row_stride, _1{}));
  const int wg_tile = m_block * Tr::kConsumerWgs + cwg;
  Tensor gO = local_tile(mO, Shape<_64, HeadDim>{}, make_coord(wg_tile, _0{}));  // (64, D)
  Tensor sO_wg = local_tile(sO, Shape<_64, HeadDim>{}, make_coord(cwg, _0{}));   // (64, D)
  typename Tr::GmemCopyOut gmem_copy_o;
  auto s2g = gmem_copy_o.get_thread_slice(ctid % kWarpgroupThreads);
  Tensor tOsO = s2g.partition_S(sO_wg);  // (CPY, CPY_M, CPY_K)
  Tensor tOgO = s2g.partition_D(gO);
  Tensor tOcO = s2g.partition_D(make_identity_tensor(Shape<_64, HeadDim>{}));
  Tensor tOrO = make_tensor<Element>(shape(tOgO));
  copy(gmem_copy_o, tOsO, tOrO);
  sm80::copy_predicated(gmem_copy_o, tOrO, tOgO, tOcO, len_q - wg_tile * 64, p.head_dim_v);
}

}  // namespace flashcute::sm90
