#pragma once
// SM90 forward (TMA + wgmma, warp-specialized). A tile is one (query block, head, batch); the grid
// has one CTA per tile, or (persistent, tile_config.h) one CTA per SM looping over tiles (or, for
// the launcher's one-CTA-per-tile schedule, the persistent kernel with a grid of every tile). With
// Tr::kCluster == 2 (non-persistent, unmasked) two CTAs of adjacent query blocks form a cluster and
// load each K/V block half each, multicast to both (docs/sm90-forward.md, "Clusters of two CTAs").
//   producer warpgroup: one thread issues the TMA loads of Q (once) and of K[n], V[n] into a
//     `kStages`-deep ring of smem buffers (CUTLASS PipelineTmaAsync: a full and an empty mbarrier
//     per stage), key blocks from last to first;
//   consumer warpgroups (64 query rows each): S = Q K^T by wgmma from smem, score transform and
//     mask on boundary blocks only, online softmax in fp32 (exp2), O += P V by wgmma with P from
//     registers; then O normalized, staged through smem (Q's space, or its own) and written by one
//     TMA store per warpgroup (128-bit stores where TMA cannot address the rows), LSE per row.
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
#include "sm90/tile_order.h"
#include "sm90/utils.cuh"

namespace flashcute::sm90 {

// One tile's sequence, rows and visible key blocks (the SM80 path's ranges).
struct TileWork {
  int m_block, head, batch;
  int64_t q_row0, k_row0;  // varlen: the sequence's first packed row
  int len_q, len_k, m0;
  int first_end, last_begin;  // a block [n0, n0 + block_n) needs no mask iff n0 >= last_begin && end <= first_end
  int n_block_min, n_block_max;
  bool odd_turn = false;  // persistent: the CTA's ring slot of this tile is odd (kMirrorRows)
  __device__ __forceinline__ bool has_rows() const { return m0 < len_q; }
  __device__ __forceinline__ bool any_key() const { return n_block_max > n_block_min; }
  // Every row of the tile sees every key of [n0, n0 + block_n): no score of that block is masked.
  __device__ __forceinline__ bool unmasked(int n0, int block_n) const {
    return n0 >= last_begin && n0 + block_n <= first_end;
  }
  // Per-warpgroup key blocks: the end of the blocks that the 64 rows [m0 + 64 rb, m0 + 64 rb + 64) see
  // (past it every one of them is masked). At least n_block_min + 1: 64 rows with no row of the
  // sequence, or whose rows see no key, run one block (masked). Needs any_key().
  template <int kBlockN>
  __device__ __forceinline__ int wg_block_end(const FwdParams& p, int rb) const {
    const int wg_first = m0 + 64 * rb;
    const int wg_last = min(wg_first + 64, len_q) - 1;
    int wg_max = n_block_min + 1;
    if (wg_last >= wg_first) {
      int begin, end;
      visible_key_range_i32(wg_last, len_q, len_k, p.window, &begin, &end);
      wg_max = max(wg_max, (end + kBlockN - 1) / kBlockN);
    }
    return min(n_block_max, wg_max);
  }
};

template <int kBlockM, int kBlockN>
__device__ __forceinline__ TileWork make_tile_work(const FwdParams& p, int m_block, int head, int batch) {
  TileWork w;
  w.m_block = m_block;
  w.head = head;
  w.batch = batch;
  const bool varlen = p.cu_seqlens_q != nullptr;
  w.q_row0 = varlen ? p.cu_seqlens_q[batch] : 0;
  w.k_row0 = varlen ? p.cu_seqlens_k[batch] : 0;
  // Row and key indices inside one sequence are 32-bit (validation bounds sequence lengths by 2^29).
  w.len_q = varlen ? static_cast<int>(p.cu_seqlens_q[batch + 1] - w.q_row0) : static_cast<int>(p.seqlen_q);
  w.len_k = varlen ? static_cast<int>(p.cu_seqlens_k[batch + 1] - w.k_row0) : static_cast<int>(p.seqlen_k);
  w.m0 = m_block * kBlockM;
  const int m_last = (w.m0 + kBlockM < w.len_q ? w.m0 + kBlockM : w.len_q) - 1;
  // Keys seen by some row of the block: [begin(first row), end(last row)); keys seen by every row:
  // [begin(last row), end(first row)).
  int first_begin, last_end;
  visible_key_range_i32(w.m0, w.len_q, w.len_k, p.window, &first_begin, &w.first_end);
  visible_key_range_i32(m_last, w.len_q, w.len_k, p.window, &w.last_begin, &last_end);
  w.n_block_min = first_begin / kBlockN;
  w.n_block_max = last_end > first_begin ? (last_end + kBlockN - 1) / kBlockN : w.n_block_min;
  if (!w.has_rows()) w.n_block_max = w.n_block_min;
  return w;
}

// TileOrder over the grid of (query blocks of kBlockM rows) x heads x batch.
template <int kBlockM>
__device__ __forceinline__ TileOrder make_tile_order(const FwdParams& p, int tile_group) {
  return TileOrder{static_cast<int>((p.seqlen_q + kBlockM - 1) / kBlockM), p.heads_q, p.heads_q * p.batch, tile_group};
}

// Probe builds (FLASHCUTE_SM90_FWD_TIMELINE): FLASHCUTE_TIMELINE(statements) keeps them, release
// builds drop them before the compiler sees them (their SASS is the same as without the probe).
#if FLASHCUTE_SM90_FWD_TIMELINE
#define FLASHCUTE_TIMELINE(...) __VA_ARGS__
// One clock64 stamp of (CTA, CTA-local tile k, slot); a tile's slot 0 also records the SM's id.
template <class Params>
__device__ __forceinline__ void timeline_stamp(const Params& params, int k, int slot, long long at = -1) {
  if (params.timeline != nullptr && k < kTimelineMaxTiles) {
    unsigned long long* rec =
        params.timeline + (static_cast<size_t>(blockIdx.x) * kTimelineMaxTiles + k) * kTimelineSlots;
    rec[slot] = at >= 0 ? at : clock64();
    if (slot == 0) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      rec[3] = sm;
    }
  }
}
#else
#define FLASHCUTE_TIMELINE(...)
#endif

// Lane 0's value of x, for a value every lane of the warp already holds: the shuffle tells ptxas it is
// warp-uniform, so what is derived from it (wgmma descriptors, barrier addresses) is made in uniform
// registers instead of vector ones moved over by R2UR before each use.
template <class T>
__device__ __forceinline__ T from_lane0(T x) {
  return __shfl_sync(0xffffffffu, x, 0);
}

// count arrivals at once on a CTA-local mbarrier, written as CUTLASS's ClusterBarrier::arrive is
// (FLASHCUTE_SM90_FWD_SKIP_WARP: a warpgroup's four warps' arrivals on a stage it computed).
template <class Bar>
__device__ __forceinline__ void arrive_count(Bar* bar, uint32_t count) {
  const uint32_t addr = cute::cast_smem_ptr_to_uint(bar);
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;" : : "r"(addr), "r"(count));
}

// The plain loop's rare recompute (kPlainSumCheck, below): this thread's scores of one key block,
// S = Q K[stage]^T score by score from shared memory in fp32, unmasked. A called function of plain
// values: inlined, its unrolled dot products (one per score of the fragment) made NVVM outline the
// whole tile body of d 64's masked kernel, whose closures then lived in local memory. Q's and K's
// spaces from the kernel's shared storage here (no pointer held live for the call).
template <class Tr, int kScores>
__device__ __noinline__ cute::array<float, kScores> plain_recompute_scores(int stage, int ctid) {
  using namespace cute;
  extern __shared__ __align__(1024) char smem_raw[];
  auto& ss = *reinterpret_cast<typename Tr::SharedStorage*>(smem_raw);
  Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Tr::SmemLayoutQ{});  // (BM, D)
  Tensor sKn = make_tensor(make_smem_ptr(ss.k.data()), typename Tr::SmemLayoutK{})(_, _, stage);  // (BN, D)
  typename Tr::TiledMmaQK mma_qk;
  Tensor coords = mma_qk.get_thread_slice(ctid).partition_C(
      make_identity_tensor(Shape<typename Tr::BlockM, typename Tr::BlockN>{}));  // (MMA, MMA_M, MMA_N) -> (row, col)
  static_assert(decltype(size(coords))::value == kScores, "one score per fragment element");
  array<float, kScores> out;
  CUTE_UNROLL
  for (int i = 0; i < kScores; ++i) {
    const int row = get<0>(coords(i)), col = get<1>(coords(i));
    float dot = 0.0f;
#pragma unroll 1
    for (int d = 0; d < Tr::kHeadDim; ++d) dot = fmaf(static_cast<float>(sQ(row, d)), static_cast<float>(sKn(col, d)), dot);
    out[i] = dot;
  }
  return out;
}

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
  constexpr int kHeadDim = Tr::kHeadDim;
  // The overlapped loop's steps after a tile's first block run their exps before the block max
  // (Tr::kSpecExp; not the softcap/ALiBi kernels, whose transform keeps more registers live).
  constexpr bool kSpecExp = Tr::kSpecExp && !kTransform;
  constexpr bool kSumCheck = Tr::kSumCheck && kSpecExp;  // interior blocks: the sum check (update_sum_check)
  // The plain loop's interior blocks through the sum check (tile_config.h, FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK).
  constexpr bool kPlainSumCheck = FLASHCUTE_SM90_FWD_PLAIN_SUM_CHECK != 0 && !Tr::kOverlap && !kTransform &&
                                  Tr::kCluster == 1 && Tr::kSoftmaxPolicy.rescale_threshold > 1;
  // One empty-barrier arrival per consumer warp, after the warp's own reads of K (the speculative
  // softmax's rare recompute).
  constexpr bool kWarpRelease = kSpecExp || kPlainSumCheck;
  // A warpgroup's first block as half a block (Tr::kHalfFirst; not the softcap/ALiBi kernels, which
  // spilled 88 bytes with it).
  constexpr bool kHalfFirst = Tr::kHalfFirst && !kTransform;
  // The plain loop's first block masked from its last computed part (tile_config.h, FLASHCUTE_SM90_FWD_PART_MASK).
  constexpr bool kPartMask = FLASHCUTE_SM90_FWD_PART_MASK != 0;
  // The speculative recompute's coordinates made inside its branch (tile_config.h, recompute_opaque_choice):
  // the non-persistent kernels (measured there; the persistent ones keep the kernel's), and the
  // persistent ones with Q in registers (main_q_regs), which spilled 448 bytes at d 128 without it.
  constexpr bool kOpaqueCoords = recompute_opaque_choice() && (!Tr::kPersistent || Tr::kQRegs);
  // tile_config.h: the warpgroup barrier in the skipped blocks' loop (-1: with per-warpgroup Q).
  constexpr bool kSkipSync = FLASHCUTE_SM90_FWD_SKIP_SYNC < 0 ? Tr::kWgQ : FLASHCUTE_SM90_FWD_SKIP_SYNC != 0;
  // tile_config.h: one empty-barrier arrival per consumer warp, so the skip loop needs no warpgroup
  // barrier (the kernels with one release per warpgroup and per-warpgroup key blocks).
  constexpr bool kSkipWarp = (FLASHCUTE_SM90_FWD_SKIP_WARP < 0 ? !kSkipSync : FLASHCUTE_SM90_FWD_SKIP_WARP != 0) &&
                             Tr::kWgKeyBlocks && Tr::kWgRelease && Tr::kCluster == 1 && !kSpecExp;
  static_assert(!(Tr::kWgKeyBlocks && Tr::kWgRelease && Tr::kCluster == 1 && !kSpecExp) || kSkipSync || kSkipWarp,
                "one release per warpgroup with per-warpgroup key blocks needs the skip loop's barrier "
                "(FLASHCUTE_SM90_FWD_SKIP_SYNC) or per-warp arrivals (FLASHCUTE_SM90_FWD_SKIP_WARP)");
  const FwdParams& p = params.p;
  const bool varlen = p.cu_seqlens_q != nullptr;
  const int tidx = threadIdx.x;
  // Non-persistent: one tile per CTA. Grid (query blocks, heads, batch) with the query blocks
  // launched from the last to the first, or (kLptGrid) a 1-D grid in TileOrder, so that the
  // hardware's in-order dispatch starts the longest tiles first across heads too. A CTA whose
  // query block starts past its sequence (varlen, shorter than max_seqlen_q) returns before any
  // barrier is initialized (all threads alike).
  TileWork single{};
  if constexpr (!Tr::kPersistent) {
    if constexpr (Tr::kLptGrid) {
      int m_block, head, batch;
      make_tile_order<kBlockM>(p, params.tile_group).decode(static_cast<int>(blockIdx.x), &m_block, &head, &batch);
      single = make_tile_work<kBlockM, kBlockN>(p, m_block, head, batch);
    } else {
      single = make_tile_work<kBlockM, kBlockN>(p, gridDim.x - 1 - blockIdx.x, blockIdx.y, blockIdx.z);
    }
    if (!single.has_rows()) return;
  }
  extern __shared__ __align__(1024) char smem_raw[];
  auto& ss = *reinterpret_cast<typename Tr::SharedStorage*>(smem_raw);
  const int wg_idx = cutlass::canonical_warp_group_idx();
  const bool producer = wg_idx == static_cast<int>(WarpgroupRole::kProducer);

  // Runs fn(tile) on every tile of this CTA. Persistent: the producer thread picks the tiles and
  // hands each index to the consumers through a two-slot ring in smem (slot k % 2, a full and an
  // empty mbarrier each; the index num_tiles ends the loop). Every CTA starts with tile blockIdx.x
  // of TileOrder (the longest first); the next one comes from the caller's counter (dynamic: a CTA
  // that finishes early takes the next tile in TileOrder, a longest-first list schedule) or,
  // without a counter, from a static deal: round r hands CTA c the tile r * grid + c, in reverse
  // (grid - 1 - c) on odd rounds, so the CTA that got a round's longest tile gets the next round's
  // shortest (with a grid of every tile, the second round is past num_tiles: one tile per CTA).
  // The producer claims its next tile after issuing the current tile's last load, while the
  // consumers still have the pipeline's blocks to compute.
  auto for_each_tile = [&](auto&& fn) {
    if constexpr (Tr::kPersistent) {
      const TileOrder order = make_tile_order<kBlockM>(p, params.tile_group);
      const int num_tiles = order.m_blocks * order.batch_heads;  // the launcher checked it fits
      const int grid = static_cast<int>(gridDim.x), cta = static_cast<int>(blockIdx.x);
      auto run_tile = [&](int t, int k) {
        int m_block, head, batch;
        if constexpr (Tr::kFastDecode) {
          order.decode_fast(t, params.div_per_group, params.div_group, params.div_heads, &m_block, &head, &batch);
        } else {
          order.decode(t, &m_block, &head, &batch);
        }
        TileWork w = make_tile_work<kBlockM, kBlockN>(p, m_block, head, batch);
        w.odd_turn = k & 1;
        if (w.has_rows()) fn(w);
      };
      // The ring's index words, addressed afresh at each use (no pointer kept live in the
      // producer's 24-32 registers).
      auto tile_slot = [&](int slot) -> volatile int& { return reinterpret_cast<volatile int*>(ss.tile_id)[slot]; };
      if (producer) {
        int t = cta;
        for (int k = 0;; ++k) {
          const int slot = k & 1;
          Barrier::wait(&ss.barrier_tile_empty[slot], ((k >> 1) & 1) ^ 1);  // WAR: consumers read slot's last index
          asm volatile("" ::: "memory");
          tile_slot(slot) = t;
          asm volatile("" ::: "memory");
          Barrier::arrive(&ss.barrier_tile_full[slot]);  // release: the index is visible to the waiters
          if (t >= num_tiles) break;
          run_tile(t, k);
          if (params.tile_counter != nullptr) {
            // The shuffle (of the one live lane) marks t warp-uniform, so that t and the tile's
            // coordinates stay in uniform registers: as a plain atomic result they spilled the
            // producer's 24 registers (164 bytes at d 128).
            // atomicInc wraps at num_tiles - 1: the launch makes exactly num_tiles claims (one after
            // each tile of every CTA, values 0 .. num_tiles - 1), so the last one leaves the counter
            // 0 for the next launch (Workspace::zeroed skips the reset).
            t = __shfl_sync(1u, grid + static_cast<int>(atomicInc(reinterpret_cast<unsigned*>(params.tile_counter),
                                                                   static_cast<unsigned>(num_tiles - 1))), 0);
          } else {
            const int round = t / grid + 1;  // of the next tile (from t: fewer live registers)
            t = round * grid + ((round & 1) ? grid - 1 - cta : cta);
          }
          t = t < num_tiles ? t : num_tiles;
        }
      } else {
        for (int k = 0;; ++k) {
          const int slot = k & 1;
          Barrier::wait(&ss.barrier_tile_full[slot], (k >> 1) & 1);  // RAW: the producer wrote the index
          asm volatile("" ::: "memory");
          const int t = tile_slot(slot);
          asm volatile("" ::: "memory");
          // Every consumer thread arrives after its own read (an arrival per warp after __syncwarp is
          // also ordered, but compute-sanitizer's racecheck reports it as a hazard).
          Barrier::arrive(&ss.barrier_tile_empty[slot]);
          FLASHCUTE_TIMELINE(if (threadIdx.x % kWarpgroupThreads == 0 && wg_idx <= kTimelineWgs)
                                 timeline_stamp(params, k, 4 + kTimelineWgSlots * (wg_idx - 1) + 9);)
          if (t >= num_tiles) break;
          run_tile(t, k);
        }
      }
    } else {
      fn(single);
    }
  };

  Tensor sQ = make_tensor(make_smem_ptr(ss.q.data()), typename Tr::SmemLayoutQ{});    // (BM, D)
  Tensor sK = make_tensor(make_smem_ptr(ss.k.data()), typename Tr::SmemLayoutK{});    // (BN, D, stage)
  Tensor sV = make_tensor(make_smem_ptr(ss.v.data()), typename Tr::SmemLayoutV{});    // (BN, D, stage)
  Tensor sVt = make_tensor(make_smem_ptr(ss.v.data()), typename Tr::SmemLayoutVt{});  // (D, BN, stage)

  // --- barriers: Q full (TMA transaction), Q empty and the tile ring (persistent), the K and V pipelines
  typename Pipeline::Params pipe;
  pipe.transaction_bytes = Tr::kTmaBytesKV;
  pipe.role = producer ? Pipeline::ThreadCategory::Producer : Pipeline::ThreadCategory::Consumer;
  pipe.is_leader = tidx == 0;  // the thread that issues every TMA
  // Empty-barrier arrivals: every consumer thread, or one per consumer warpgroup (kWgRelease). With
  // clusters CUTLASS counts (CTAs in the cluster) x (consumer warpgroups) from the thread count: each
  // warpgroup of every CTA frees each stage once in every CTA (the multicast writes to all of them).
  // With kWarpRelease one per consumer warp: a warp that recomputes its scores reads K from smem itself;
  // with kSkipWarp too: each warp frees the stages of the blocks its warpgroup skips.
  pipe.num_consumers = kWarpRelease || kSkipWarp ? Tr::kConsumerThreads / 32
                       : Tr::kWgRelease && Tr::kCluster == 1 ? Tr::kConsumerWgs : Tr::kConsumerThreads;
  if (tidx == 0) {
    for (int i = 0; i < Tr::kQSlots; ++i) {
      Barrier::init(&ss.barrier_q[i], 1);
      Barrier::init(&ss.barrier_q_empty[i], Tr::kConsumerThreads / Tr::kQSlots);
    }
    for (int i = 0; i < 2; ++i) {
      Barrier::init(&ss.barrier_tile_full[i], 1);
      Barrier::init(&ss.barrier_tile_empty[i], Tr::kConsumerThreads);
    }
  }
  // Both constructors initialize their mbarriers from warp 0 and fence the initialization.
  Pipeline pipeline_k(ss.pipeline_k, pipe, typename Tr::ClusterShape{});
  Pipeline pipeline_v(ss.pipeline_v, pipe, typename Tr::ClusterShape{});
  // RAW: every mbarrier is initialized before any thread waits on or arrives at it (with clusters,
  // before the other CTA's multicast or remote arrivals reach it).
  if constexpr (Tr::kCluster > 1) {
    cute::cluster_arrive_relaxed();
    cute::cluster_wait();
  } else {
    __syncthreads();
  }

  // --- producer: thread 0 issues every TMA ------------------------------------------------------------
  if (producer) {
    cutlass::arch::warpgroup_reg_dealloc<producer_regs(Tr::kConsumerWgs)>();
    if (tidx != 0) return;
    PipelineState write = cutlass::make_producer_start_state<Pipeline>();
    int q_loads = 0;  // kWgQ: bit c is the parity of slice c's loads
    // Probe: the CTA-local tile count; ss.timeline_q (only this thread touches it) starts at 0.
    FLASHCUTE_TIMELINE(int tl_k = 0; for (int c = 0; c < 4; ++c) ss.timeline_q[c] = 0;)
    for_each_tile([&](const TileWork& w) {
      FLASHCUTE_TIMELINE(timeline_stamp(params, tl_k, 0);)
      [[maybe_unused]] const bool mirror = Tr::kMirrorRows && w.odd_turn;
      if (!w.any_key()) {  // consumers write O = 0 without touching smem
        FLASHCUTE_TIMELINE(++tl_k;)
        return;
      }
      // Coordinate tensors of the TMA descriptors: (rows, d) of this (head, batch); varlen rows
      // start at the sequence's first packed row.
      const int batch = varlen ? 0 : w.batch;
      const int kv_head = w.head / p.head_ratio;
      Tensor mQ = domain_offset(make_coord(static_cast<int>(w.q_row0), _0{}),
                                params.tma_q.get_tma_tensor(params.shape_q)(_, _, w.head, batch));
      Tensor mK = domain_offset(make_coord(static_cast<int>(w.k_row0), _0{}),
                                params.tma_k.get_tma_tensor(params.shape_k)(_, _, kv_head, batch));
      Tensor mV = domain_offset(make_coord(static_cast<int>(w.k_row0), _0{}),
                                params.tma_v.get_tma_tensor(params.shape_v)(_, _, kv_head, batch));
      Tensor gQ = local_tile(mQ, Shape<BlockM, HeadDim>{}, make_coord(w.m_block, _0{}));  // (BM, D)
      Tensor gK = local_tile(mK, Shape<BlockN, HeadDim>{}, make_coord(_, _0{}));          // (BN, D, n)
      Tensor gV = local_tile(mV, Shape<BlockN, HeadDim>{}, make_coord(_, _0{}));          // (BN, D, n)
      auto [tQgQ, tQsQ] = tma_partition(params.tma_q, _0{}, Layout<_1>{}, group_modes<0, 2>(sQ), group_modes<0, 2>(gQ));
      if constexpr (Tr::kWgQ && FLASHCUTE_SM90_FWD_Q_PREFETCH != 0) {
        // The tile's Q into L2 now (tile_config.h's FLASHCUTE_SM90_FWD_Q_PREFETCH): each slice's own
        // load waits for its warpgroup to free the previous tile's rows, and then arrives late.
        CUTE_UNROLL
        for (int rb = 0; rb < Tr::kConsumerWgs; ++rb) {
          Tensor gQc = local_tile(mQ, Shape<_64, HeadDim>{}, make_coord(w.m_block * Tr::kConsumerWgs + rb, _0{}));
          Tensor sQc = make_tensor(make_smem_ptr(ss.q.data()), typename Tr::SmemLayoutQWg{});  // shape only
          auto [tQgQc, tQsQc] =
              tma_partition(params.tma_q, _0{}, Layout<_1>{}, group_modes<0, 2>(sQc), group_modes<0, 2>(gQc));
          cute::prefetch(params.tma_q, tQgQc);
        }
      }
      // With clusters this CTA's share of each K/V block (multicast to every CTA of the cluster).
      const int cta_rank = Tr::kCluster > 1 ? static_cast<int>(cute::block_rank_in_cluster()) : 0;
      auto [tKgK, tKsK] = tma_partition(params.tma_k, cta_rank, Layout<Int<Tr::kCluster>>{}, group_modes<0, 2>(sK),
                                        group_modes<0, 2>(gK));
      auto [tVgV, tVsV] = tma_partition(params.tma_v, cta_rank, Layout<Int<Tr::kCluster>>{}, group_modes<0, 2>(sV),
                                        group_modes<0, 2>(gV));
      // A K/V TMA bound to its stage's barrier (with clusters, multicast to every CTA of the cluster).
      auto with_barrier = [&](const auto& tma, auto* bar) {
        if constexpr (Tr::kCluster > 1) return tma.with(*bar, static_cast<uint16_t>((1u << Tr::kCluster) - 1));
        else return tma.with(*bar);
      };

      auto load_block = [&](int n_block) {
        // WAR: producer_acquire waits until every consumer thread released this stage's last tile.
        pipeline_k.producer_acquire(write);
        copy(with_barrier(params.tma_k, pipeline_k.producer_get_barrier(write)), tKgK(_, n_block), tKsK(_, write.index()));
        if constexpr (Tr::kWgQ) {
          // Each warpgroup's 64 rows of Q just before its first key block (the consumers'
          // wg_block_end), once that warpgroup has freed its slice of the previous tile.
          CUTE_UNROLL
          for (int c = 0; c < Tr::kConsumerWgs; ++c) {
            const int rb = mirror ? Tr::kConsumerWgs - 1 - c : c;
            if (w.wg_block_end<kBlockN>(p, rb) - 1 != n_block) continue;
            Barrier::wait(&ss.barrier_q_empty[c], ((q_loads >> c) & 1) ^ 1);
            // Probe: held in smem until the tile's last load (a global stamp here spilled the
            // producer's registers).
            FLASHCUTE_TIMELINE(if (c < 4) ss.timeline_q[c] = clock64();)
            q_loads ^= 1 << c;
            Barrier::arrive_and_expect_tx(&ss.barrier_q[c], Tr::kTmaBytesQ);
            Tensor gQc = local_tile(mQ, Shape<_64, HeadDim>{}, make_coord(w.m_block * Tr::kConsumerWgs + rb, _0{}));
            Tensor sQc = make_tensor(make_smem_ptr(ss.q.data() + typename Tr::SmemLayoutQ{}(64 * c, 0)),
                                     typename Tr::SmemLayoutQWg{});  // (64, D)
            auto [tQgQc, tQsQc] =
                tma_partition(params.tma_q, _0{}, Layout<_1>{}, group_modes<0, 2>(sQc), group_modes<0, 2>(gQc));
            copy(params.tma_q.with(ss.barrier_q[c]), tQgQc, tQsQc);
          }
        } else if (n_block == w.n_block_max - 1) {
          // Q after the first K block, so that (persistent) that K load is already in flight while
          // this thread waits for the previous tile to free Q's space: every consumer thread has
          // finished its reads of sQ and its O staging there. The first wait (parity 1 of a fresh
          // barrier) passes at once.
          if constexpr (Tr::kPersistent) Barrier::wait(&ss.barrier_q_empty[0], (q_loads & 1) ^ 1);
          ++q_loads;
          Barrier::arrive_and_expect_tx(&ss.barrier_q[0], Tr::kTmaBytesQ);
          copy(params.tma_q.with(ss.barrier_q[0]), tQgQ, tQsQ);
          FLASHCUTE_TIMELINE(timeline_stamp(params, tl_k, 1);)
        }
        pipeline_v.producer_acquire(write);
        copy(with_barrier(params.tma_v, pipeline_v.producer_get_barrier(write)), tVgV(_, n_block), tVsV(_, write.index()));
        ++write;
      };
      if constexpr (Tr::kCluster > 1) {
        // Not unrolled: the multicast's operands spilled the producer's 24 registers (156 bytes) in
        // ptxas's unrolled loop.
#pragma unroll 1
        for (int n_block = w.n_block_max - 1; n_block >= w.n_block_min; --n_block) load_block(n_block);
      } else {
        for (int n_block = w.n_block_max - 1; n_block >= w.n_block_min; --n_block) load_block(n_block);
      }
      // Probe: the Q slices' issues, then 0 for the next tile (a slice not loaded there reads 0, not
      // this tile's stamp).
      FLASHCUTE_TIMELINE(timeline_stamp(params, tl_k, 2);
                         if (Tr::kWgQ) for (int c = 0; c < Tr::kConsumerWgs && c < 4; ++c) {
                           timeline_stamp(params, tl_k, kTimelineQSlot + c, ss.timeline_q[c]);
                           ss.timeline_q[c] = 0;
                         }
                         ++tl_k;)
    });
    if constexpr (Tr::kCluster > 1) {
      // The CTA stays until every CTA of the cluster has freed every stage: their consumers' last
      // (remote) arrivals land on this CTA's empty barriers.
      pipeline_k.producer_tail(write);
      pipeline_v.producer_tail(write);
    }
    return;
  }

  // --- consumers ----------------------------------------------------------------------------------
  cutlass::arch::warpgroup_reg_alloc<consumer_regs(Tr::kConsumerWgs)>();
  const int ctid = tidx - kWarpgroupThreads;  // thread index among the consumers
  const int cwg = ctid / kWarpgroupThreads;   // consumer warpgroup: query rows [64 cwg, 64 cwg + 64)

  typename Tr::TiledMmaQK mma_qk;
  typename Tr::TiledMmaPV mma_pv;
  auto thr_qk = mma_qk.get_thread_slice(ctid);
  auto thr_pv = mma_pv.get_thread_slice(ctid);
  Tensor tSrK = thr_qk.partition_fragment_B(sK);   // (MMA, MMA_N, MMA_K, stage)
  Tensor tOrV = thr_pv.partition_fragment_B(sVt);  // (MMA, MMA_N, MMA_K, stage)
  Tensor acc_o = partition_fragment_C(mma_pv, Shape<BlockM, HeadDim>{});  // (MMA, MMA_M, MMA_N)
  Tensor acc_o_rc = make_tensor(acc_o.data(), gmma_rowcol_layout(acc_o.layout()));  // (rows, cols)
  Tensor tScS = thr_qk.partition_C(make_identity_tensor(Shape<BlockM, BlockN>{}));  // (MMA, MMA_M, MMA_N) -> (row, col)
  Tensor tScS_rc = make_tensor(tScS.data(), gmma_rowcol_layout(tScS.layout()));  // (rows, cols) -> (row, col)
  constexpr int kRows = decltype(size<0>(acc_o_rc))::value;
  const float mult = p.score_log2_mult;

  // Frees a K or V stage for the producer. Every consumer thread arrives (the empty barrier counts
  // 256), or with kWgRelease one thread per warpgroup (it counts 2): the stage is read only by the
  // warpgroup's wgmma, whose completion this thread has just waited for. With kWarpRelease one lane per
  // warp (it counts 8), after the warp's own reads of K (the rare recompute). With clusters, always one
  // arrival per warpgroup and CTA: the warpgroup's thread c frees the stage in CTA c (the count
  // CUTLASS derives from the thread count; its own spread of arrivals kept two more registers live
  // in the consumers, which spilled 12 bytes at d 256).
  const int wtid = ctid % kWarpgroupThreads;
  auto release = [&](Pipeline& pipeline, typename Pipeline::SharedStorage& storage, const PipelineState& state) {
    if constexpr (Tr::kCluster > 1) {
      if (wtid < Tr::kCluster) storage.empty_barrier_[state.index()].arrive(static_cast<uint32_t>(wtid));
    } else if constexpr (kWarpRelease) {
      __syncwarp();  // the warp's own smem reads (the speculative or plain loop's rare recompute) are done
      if (wtid % 32 == 0) storage.empty_barrier_[state.index()].arrive();
    } else if constexpr (kSkipWarp) {
      // The four warps' arrivals at once: the warpgroup's wgmma, whose completion this thread has
      // waited for, read the stage and needed every warp to issue it.
      if (wtid == 0) arrive_count(&storage.empty_barrier_[state.index()], kWarpgroupThreads / 32);
    } else if constexpr (Tr::kWgRelease) {
      if (wtid == 0) storage.empty_barrier_[state.index()].arrive();
    } else {
      pipeline.consumer_release(state);
    }
  };

  // O's TMA stores per warp (kWarpStore, tile_config.h): each warp's lane 0 stores the warp's own 16
  // rows of sO. warp_store: the warpgroup's barriers around sO are then the warp's; not for varlen,
  // whose O may go out by the warpgroup's 128-bit copies, whose threads read rows other warps wrote
  // (uniform over the launch, so every tile agrees).
  const bool warp_store = Tr::kWarpStore && params.tma_store_o && !varlen;
  // WAR on this warpgroup's rows of sO: their previous reads (the TMA stores, which their issuing
  // threads wait for, or every thread's copies) are done.
  auto war_wait_o = [&] {
    if (Tr::kWarpStore ? wtid % 32 == 0 : wtid == 0) tma_store_wait<0>();
    if (warp_store) __syncwarp();
    else named_barrier_sync(static_cast<uint32_t>(NamedBarrierId::kEpilogue) + cwg, kWarpgroupThreads);
  };

  PipelineState read;  // K/V stages, continued across tiles in step with the producer's
  int q_phase = 0;     // parity of the next Q load's barrier phase (kWgQ: of this warpgroup's slice)
  // Timeline probe: the CTA-local tile count; stamp(s) writes slot 4 + kTimelineWgSlots cwg + s from the first
  // thread of each consumer warpgroup.
  FLASHCUTE_TIMELINE(int tl_k = 0; auto stamp = [&](int slot) {
    if (wtid == 0 && cwg < kTimelineWgs) timeline_stamp(params, tl_k, 4 + kTimelineWgSlots * cwg + slot);
  };)

  for_each_tile([&](const TileWork& w) {
    FLASHCUTE_TIMELINE(stamp(0);)
    if constexpr (Tr::kPersistent && FLASHCUTE_SM90_FWD_UNIFORM_STAGE != 0) {
      // The K/V stage carried across tiles, from lane 0: otherwise ptxas keeps the loop-carried index
      // in a vector register, and with it the key-block loop's K/V wgmma descriptors and stage-barrier
      // addresses (the persistent d 128 kernel executed 10% more instructions than the
      // one-CTA-per-tile kernel at non-causal 8k).
      read = PipelineState(from_lane0(read.index()), from_lane0(read.phase()), read.count());
    }
    // This warpgroup's 64 rows of the tile: rows [m0 + 64 rb, m0 + 64 rb + 64), held in its own rows
    // [64 cwg, 64 cwg + 64) of sQ, sO and the fragments (kMirrorRows: rb = W - 1 - cwg on the tiles
    // of odd ring slots, the same tiles in the producer).
    const int rb = Tr::kMirrorRows && w.odd_turn ? Tr::kConsumerWgs - 1 - cwg : cwg;
    const int m0_frag = w.m0 + 64 * (rb - cwg);  // the tile row of the fragments' row 0
    if constexpr (!Tr::kOverlap && FLASHCUTE_SM90_FWD_SKIP_EMPTY_WG != 0) {
      // The plain loop: a warpgroup whose 64 rows all lie past the sequence (the last query block's
      // padding) computes and stores nothing. It keeps the barriers' phases: it waits for Q and frees
      // Q's space as the other warpgroups do, and waits for each K/V stage to land before it frees
      // it. With one release per warpgroup all four warps meet at the warpgroup's barrier first (no
      // wgmma makes them meet here: the kSkipSync hazard of the overlapped loop's skipped blocks).
      // With only thread 0 waiting and arriving, d 64's masked kernel spilled 184 bytes. Here,
      // before the tile's fragments exist. The condition from lane 0: warp-uniform.
      static_assert(Tr::kCluster == 1 && !Tr::kWgQ && !Tr::kEarlyQ && !Tr::kQRegs,
                    "the plain loop: no clusters, one Q slot, Q freed after the tile's last P V");
      constexpr bool kOneRelease = Tr::kWgRelease && !kWarpRelease && !kSkipWarp;
      if (from_lane0(static_cast<int>(w.m0 + 64 * rb >= w.len_q))) {
        if (w.any_key()) {
          Barrier::wait(&ss.barrier_q[0], q_phase);  // the Q phase the other warpgroups compute with
          q_phase ^= 1;
#pragma unroll 1
          for (int n_block = w.n_block_max - 1; n_block >= w.n_block_min; --n_block) {
            pipeline_k.consumer_wait(read);  // RAW: K[n] landed before its stage is freed
            pipeline_v.consumer_wait(read);
            if constexpr (kOneRelease) named_barrier_sync(static_cast<uint32_t>(NamedBarrierId::kEpilogue) + cwg, kWarpgroupThreads);
            release(pipeline_k, ss.pipeline_k, read);
            release(pipeline_v, ss.pipeline_v, read);
            ++read;
          }
          // The arrival the epilogue makes (O in Q's space) or the one after the loop (O's own space).
          if constexpr (Tr::kSeparateO || Tr::kPersistent) Barrier::arrive(&ss.barrier_q_empty[0]);
        }
        FLASHCUTE_TIMELINE(++tl_k;)
        return;
      }
    }
    // Q's descriptors (MMA, MMA_M, MMA_K). In the persistent kernels that stage O in Q's space
    // (d 256) made afresh for each tile from an opaque copy of ctid: hoisted out of the tile loop,
    // their low word stayed live across it and was spilled (4 bytes per CTA, reloaded per tile).
    // Not in the others, where the fresh ones spilled instead (d 64 masked: 52 bytes; d 128
    // softcap/ALiBi: 36).
    int ctid_now = ctid;
    // (kMirrorRows: also Q's descriptors and the epilogue's stmatrix addresses, which spilled 8 bytes
    // hoisted out of the tile loop.)
    if constexpr (Tr::kPersistent && (!Tr::kSeparateO || Tr::kMirrorRows))
      asm volatile("mov.b32 %0, %0;" : "+r"(ctid_now));
    // Q's descriptors depend only on the warpgroup, so lane 0's thread index gives the same ones, in
    // uniform registers (from each thread's own, an R2UR before each S = Q K^T wgmma). Which kernels:
    // tile_config.h.
    constexpr bool kUniformQDesc = uniform_q_desc_choice(Tr::kHeadDim, Tr::kCluster);
    Tensor tSrQ = mma_qk.get_thread_slice(kUniformQDesc ? from_lane0(ctid_now) : ctid_now).partition_fragment_A(sQ);
    OnlineSoftmax<kRows, 4, Tr::kSoftmaxPolicy> softmax;
    clear(acc_o);
    const float slope = kTransform && p.alibi_slopes != nullptr
                            ? p.alibi_slopes[w.batch * p.alibi_batch_stride + w.head]
                            : 0.0f;

    // Score transform and mask of one block's S (boundary blocks only, unless softcap/ALiBi).
    // mask_from: the mask starts at that 64-key part of the block (0: the whole block); the caller
    // knows that this warpgroup's rows see every key of the parts before it.
    auto transform_and_mask = [&](auto& acc_s, int n_block, auto mask_from) {
      constexpr int kMaskFrom = decltype(mask_from)::value;
      const int n0 = n_block * kBlockN;
      Tensor scores = make_tensor(acc_s.data(), gmma_rowcol_layout(acc_s.layout()));  // (rows, cols)
      const bool need_mask = !w.unmasked(n0, kBlockN);
      if constexpr (kTransform) {
        static_assert(kMaskFrom == 0, "the transform applies to the whole block");
        if (need_mask) sm80::score_epilogue<true, true>(scores, tScS_rc, p, m0_frag, n0, w.len_q, w.len_k, slope);
        else sm80::score_epilogue<true, false>(scores, tScS_rc, p, m0_frag, n0, w.len_q, w.len_k, slope);
      } else if (need_mask) {
        // One 64 x kCols wgmma tile per warpgroup: a thread holds 16 of the (rows, cols) view's columns
        // per 64 keys, in key order.
        static_assert(kMaskFrom == 0 || (decltype(size<1>(acc_s))::value == 1 && decltype(size<2>(acc_s))::value == 1),
                      "parts of the mask need one wgmma tile along M and N");
        sm80::score_epilogue<false, true>(scores, tScS_rc, p, m0_frag, n0, w.len_q, w.len_k, slope,
                                          Int<16 * kMaskFrom>{});
      }
      return scores;
    };

    // kEarlyQ (kSeparateO, the row's early_q_release): Q's space is free once this thread's last
    // S = Q K^T (block n_block_min) completed, so the producer may load the next tile's Q during this
    // tile's last softmax, P V and epilogue. Otherwise it is freed after the last P V.
    auto free_q_after = [&](int n_block) {
      if constexpr (Tr::kEarlyQ) {
        if (n_block == w.n_block_min) Barrier::arrive(&ss.barrier_q_empty[0]);
      }
    };

    // Each row's 1 / sum and LSE need only the softmax's state, final after the last block's update:
    // with kEarlyRows the overlapped loop computes them (and stores the LSE) while the tile's last
    // P V is on the tensor cores, otherwise the epilogue does (finalize).
    float inv[kRows], lse[kRows];
    auto store_lse = [&] {
      if (p.lse == nullptr) return;
      float* lse_ptr = p.lse + (varlen ? w.head * p.lse_head_stride + w.q_row0
                                       : w.batch * p.lse_batch_stride + w.head * p.lse_head_stride);
      if (get<1>(tScS_rc(0, 0)) == 0) {  // one lane of each quad owns the row
        CUTE_UNROLL
        for (int r = 0; r < kRows; ++r) {
          const int row = m0_frag + get<0>(tScS_rc(r, 0));
          if (row < w.len_q) lse_ptr[row] = lse[r];
        }
      }
    };

    // RAW: Q landed (kWgQ: this warpgroup's slice, waited for after the blocks it skips, below).
    auto wait_q = [&] {
      Barrier::wait(&ss.barrier_q[Tr::kWgQ ? cwg : 0], q_phase);
      q_phase ^= 1;
      FLASHCUTE_TIMELINE(stamp(1);)
    };
    if (!Tr::kWgQ && w.any_key()) wait_q();
    if constexpr (!Tr::kOverlap) {
      // One key block: S = Q K^T over its first kCols keys (kBlockN: the whole block), the mask and
      // the softmax on those scores, and P V over the same keys (P's k-blocks are the first kCols / 16
      // of V's). kFirst: the tile's first block (OnlineSoftmax::update).
      auto plain_step = [&](int n_block, auto cols, auto first, auto mask_from) {
        constexpr int kCols = decltype(cols)::value;
        typename Tr::template TiledMmaQKCols<kCols> mma_qk_cols;
        Tensor acc_s = partition_fragment_C(mma_qk_cols, Shape<BlockM, Int<kCols>>{});  // (MMA, MMA_M, MMA_N)
        pipeline_k.consumer_wait(read);  // RAW: K[n] landed
        wgmma_gemm<true>(mma_qk_cols, tSrQ, tSrK(_, _, _, read.index()), acc_s);
        warpgroup_wait<0>();
        // kPlainSumCheck: the blocks after the tile's first free K[n] (and Q) once their P V is issued:
        // the softmax's rare recompute reads them.
        constexpr bool kCheck = kPlainSumCheck && !decltype(first)::value && kCols == kBlockN;
        if constexpr (!kCheck) {
          release(pipeline_k, ss.pipeline_k, read);  // K[n] is no longer read
          free_q_after(n_block);
        }

        Tensor scores = transform_and_mask(acc_s, n_block, mask_from);
        if constexpr (kCheck) {
          auto recompute = [&](auto&) {
            constexpr int kScores = decltype(size(acc_s))::value;
            const auto scores_again = plain_recompute_scores<Tr, kScores>(read.index(), ctid);
            CUTE_UNROLL
            for (int i = 0; i < kScores; ++i) acc_s(i) = scores_again[i];
            transform_and_mask(acc_s, n_block, Int<0>{});
          };
          if constexpr (FLASHCUTE_SM90_FWD_FORCE_RECOMPUTE != 0) {  // check builds: the recompute on every step
            recompute(scores);
            softmax.update(scores, acc_o_rc, mult);
          } else {
            // Masked scores (a window's or the keys' edge) are -inf, p = 0 there: the sum check holds
            // for them too, and a row with no visible key so far takes its recompute path.
            softmax.template update_sum_check</*kRemat=*/true>(scores, acc_o_rc, mult, recompute);
          }
        } else {
          softmax.template update<decltype(first)::value>(scores, acc_o_rc, mult);
        }

        Tensor rP = sm80::convert_to<Element>(acc_s);
        Tensor tOrP = make_tensor(rP.data(), gmma_acc_as_a_layout(rP.layout()));  // (MMA, MMA_M, MMA_K)
        pipeline_v.consumer_wait(read);  // RAW: V[n] landed
        wgmma_gemm<false>(mma_pv, tOrP, tOrV(_, _, _, read.index()), acc_o);
        if constexpr (kCheck) {
          release(pipeline_k, ss.pipeline_k, read);  // K[n] is no longer read (this warp's recompute is done)
          free_q_after(n_block);
        }
        warpgroup_wait<0>();
        release(pipeline_v, ss.pipeline_v, read);
        ++read;
      };
      int n_first = w.n_block_max - 1;
      if constexpr (Tr::kDiagParts > 1 && !kTransform) {
        static_assert(Tr::kDiagParts <= 3, "the first block's forms below cover 1, 2 and 3 parts");
        // Tr::kDiagParts: the first block in the 64-key parts this warpgroup's rows see (the rest of
        // the block is masked for all of them, so P is 0 there and neither S, the softmax nor P V
        // needs it). The count from lane 0: warp-uniform to ptxas (half_first's C7518, below). Each
        // form waits for its own wgmma batches.
        const int key0 = n_first * kBlockN;
        // The visible keys of the warpgroup's first and last rows: both ends move right with the row
        // (mask.h), so the last row's end bounds every row's end from above and the first row's from
        // below, and the last row's begin bounds every begin from above.
        int first_begin, first_end, last_begin, last_end;
        visible_key_range_i32(m0_frag + 64 * cwg, w.len_q, w.len_k, p.window, &first_begin, &first_end);
        visible_key_range_i32(m0_frag + 64 * cwg + 63, w.len_q, w.len_k, p.window, &last_begin, &last_end);
        int parts = Tr::kDiagParts;
        CUTE_UNROLL
        for (int j = Tr::kDiagParts - 1; j >= 1; --j) {
          if (last_end <= key0 + 64 * j) parts = j;  // no row sees a key from part j on (rows_see_no_key_from)
        }
        parts = from_lane0(parts);
        // lead_whole (kPartMask): this warpgroup's rows see every key of the block's first parts - 1
        // parts, so only its last computed part needs the mask (a causal diagonal on the parts: the
        // mask of the whole block compared all 6 computed parts of the 192 x 192 tile's three
        // warpgroups, 3 of them unmasked).
        bool lead_whole = false;
        if constexpr (kPartMask) {
          lead_whole = from_lane0(static_cast<int>(last_begin <= key0 && first_end >= key0 + 64 * (parts - 1))) != 0;
        }
        if ((parts < Tr::kDiagParts || lead_whole) && w.any_key()) {
          if (parts == 1) {
            plain_step(n_first, Int<64>{}, cute::true_type{}, Int<0>{});
          } else if (Tr::kDiagParts > 2 && parts == 2) {
            if (lead_whole) plain_step(n_first, Int<128>{}, cute::true_type{}, Int<1>{});
            else plain_step(n_first, Int<128>{}, cute::true_type{}, Int<0>{});
          } else {  // the whole block, lead_whole
            plain_step(n_first, BlockN{}, cute::true_type{}, Int<Tr::kDiagParts - 1>{});
          }
          --n_first;
        }
      }
      for (int n_block = n_first; n_block >= w.n_block_min; --n_block)
        plain_step(n_block, BlockN{}, cute::false_type{}, Int<0>{});
    } else if (w.any_key()) {
      // Overlapped loop: step n issues S[n] = Q K[n]^T and then O += P[n+1] V[n+1] (the previous
      // block's), waits only for S[n], runs the softmax of block n while P V is on the tensor cores,
      // then waits for P V and applies block n's rescale to O. The rescale factors come out of the
      // shared OnlineSoftmax by handing it a one-column "O" of ones: it multiplies that column (and
      // its row sums) by exactly the factor it would have applied to O, so O sees the same
      // operations in the same order as in the plain loop.
      //
      // Ping-pong: a warpgroup issues its wgmma batch only on its turn (bar.sync on its kSchedule
      // barrier) and hands the turn over right after issuing (bar.arrive on the next one's, in
      // round-robin order 0, 1, .., kConsumerWgs - 1, 0, ..), so the tensor cores take the
      // warpgroups' batches in turn while the others' softmax runs. Per tile, the last consumer
      // warpgroup opens the first turn for warpgroup 0 and skips its very last hand-over, so every
      // bar.sync has exactly one matching bar.arrive (all run the same number of turns: no
      // per-warpgroup key ranges with ping-pong, fwd_traits.cuh).
      constexpr uint32_t kSchedThreads = 2 * kWarpgroupThreads;  // the waiting and the handing warpgroup
      constexpr int kLastWg = Tr::kConsumerWgs - 1;
      const uint32_t sched_mine = static_cast<uint32_t>(NamedBarrierId::kSchedule) + cwg;
      const uint32_t sched_next = static_cast<uint32_t>(NamedBarrierId::kSchedule) + (cwg == kLastWg ? 0 : cwg + 1);
      auto turn_begin = [&] {
        if constexpr (Tr::kPingPong) named_barrier_sync(sched_mine, kSchedThreads);
      };
      auto turn_end = [&](bool last) {
        if constexpr (Tr::kPingPong) {
          if (!(last && cwg == kLastWg)) named_barrier_arrive(sched_next, kSchedThreads);
        }
      };
      if constexpr (Tr::kPingPong) {
        if (cwg == kLastWg) named_barrier_arrive(sched_next, kSchedThreads);
      }

      // This warpgroup's first block (the loop runs from the last key block down). kWgKeyBlocks: the
      // blocks past what its own 64 rows see are masked for all of them; it waits for each of those
      // stages and frees it (the producer's phases stay in step) while the warpgroups whose rows see
      // them compute. A warpgroup with no rows, or whose rows see no key, runs one block (masked).
      int n_max = w.n_block_max;
      if constexpr (Tr::kWgKeyBlocks) {
        n_max = w.wg_block_end<kBlockN>(p, rb);
        if constexpr (kSkipWarp) {
          // Each warp frees the stages once its own lanes saw them land. Not unrolled: without the
          // warpgroup barrier ptxas unrolled it by the stage count (+670 instructions in d 64's
          // short kernel).
#pragma unroll 1
          for (int n_block = w.n_block_max - 1; n_block >= n_max; --n_block) {
            pipeline_k.consumer_wait(read);
            pipeline_v.consumer_wait(read);
            __syncwarp();
            if (wtid % 32 == 0) {
              ss.pipeline_k.empty_barrier_[read.index()].arrive();
              ss.pipeline_v.empty_barrier_[read.index()].arrive();
            }
            ++read;
          }
        } else {
          for (int n_block = w.n_block_max - 1; n_block >= n_max; --n_block) {
            if constexpr (Tr::kWgRelease && kSkipSync) {
              // With one release per warpgroup every warp must have seen both stages land before the
              // one thread frees them: no wgmma here makes the warps meet (the products'
              // .sync.aligned does elsewhere). Otherwise, where this is a stage's last release, the
              // producer can refill it before a lagging warp's parity wait, which then waits for the
              // fill after that (it cannot tell phases two apart): a hang (session 35's CPU model,
              // bench/results/2026-11-28-h200-session35/wgq_protocol_model.py).
              // The barrier's id from the thread index read afresh here (from cwg, kept live across
              // the loop, the reversed rows' kernel spilled 4 bytes).
              auto warpgroup_sync = [] {
                uint32_t tid;
                asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
                named_barrier_sync(static_cast<uint32_t>(NamedBarrierId::kEpilogue) + tid / kWarpgroupThreads - 1,
                                   kWarpgroupThreads);
              };
              pipeline_k.consumer_wait(read);
              pipeline_v.consumer_wait(read);
              warpgroup_sync();
              release(pipeline_k, ss.pipeline_k, read);
              release(pipeline_v, ss.pipeline_v, read);
            } else {
              pipeline_k.consumer_wait(read);
              release(pipeline_k, ss.pipeline_k, read);
              pipeline_v.consumer_wait(read);
              release(pipeline_v, ss.pipeline_v, read);
            }
            ++read;
          }
        }
      }
      // kWgQ: the producer loads this warpgroup's slice after the blocks it skipped (their stages
      // must be free first, so it waits here, not before them).
      if constexpr (Tr::kWgQ) wait_q();

      // kHalfFirst: where no row of this warpgroup sees a key of its first block's second half (a
      // causal diagonal's upper rows: warpgroup 0 of every 128 x 128 diagonal tile), that block's
      // S = Q K^T is a wgmma of kBlockN / 2 columns into the first half of S's registers and the
      // second half is set to -inf, what the mask would assign there (common/mask.h,
      // rows_see_no_key_from). P is then 0 there, as from the whole block. The block's P V stays
      // whole: a half P V in the loop, peeled or not, or after it, spilled 40-200 bytes and
      // serialized the wgmmas.
      bool half_first = false;
      if constexpr (kHalfFirst) {
        // From lane 0: warp-uniform to ptxas, which otherwise serialized every wgmma of the kernel
        // for the branch between the two forms of S (C7518, a "divergent path").
        half_first = from_lane0(static_cast<int>(rows_see_no_key_from(m0_frag + 64 * cwg, 64, w.len_q, w.len_k, p.window,
                                                                      (n_max - 1) * kBlockN + kBlockN / 2))) != 0;
      }

      // kQRegs: this warpgroup's rows of Q into registers (the S wgmmas' A operand) now that they
      // landed; with kQRegsFree Q's space is freed after the first S below.
      if constexpr (Tr::kQRegs) {
        typename Tr::SmemCopyQ smem_copy_q;
        auto thr_copy_q = smem_copy_q.get_thread_slice(ctid);
        copy(smem_copy_q, thr_copy_q.partition_S(sQ), thr_copy_q.retile_D(tSrQ));
      }

      Tensor rescale = make_tensor<float>(Shape<Int<kRows>, _1>{});  // (rows, 1): block n's O factors
      Tensor rP = make_tensor<Element>(partition_fragment_C(mma_qk, Shape<BlockM, BlockN>{}).layout());
      Tensor tOrP = make_tensor(rP.data(), gmma_acc_as_a_layout(rP.layout()));  // (MMA, MMA_M, MMA_K)
      {
        const int n_block = n_max - 1;
        Tensor acc_s = partition_fragment_C(mma_qk, Shape<BlockM, BlockN>{});  // (MMA, MMA_M, MMA_N)
        pipeline_k.consumer_wait(read);  // RAW: K[n] landed
        turn_begin();
        // Each form waits for its own batch, so no batch is open across the branch's join (with the
        // wait after the join ptxas serialized the wgmmas: C7511, C7515).
        if (kHalfFirst && half_first) {
          typename Tr::TiledMmaQKHalf mma_qk_half;
          Tensor acc_s_half =
              make_tensor(acc_s.data(), partition_fragment_C(mma_qk_half, Shape<BlockM, Int<kBlockN / 2>>{}).layout());
          wgmma_gemm<true>(mma_qk_half, tSrQ, tSrK(_, _, _, read.index()), acc_s_half);
          turn_end(false);
          FLASHCUTE_TIMELINE(stamp(2);)
          warpgroup_wait<0>();
          CUTE_UNROLL
          for (int i = size(acc_s_half); i < size(acc_s); ++i) acc_s(i) = -INFINITY;
        } else {
          wgmma_gemm<true>(mma_qk, tSrQ, tSrK(_, _, _, read.index()), acc_s);
          turn_end(false);
          FLASHCUTE_TIMELINE(stamp(2);)
          warpgroup_wait<0>();
        }
        FLASHCUTE_TIMELINE(stamp(3);)
        release(pipeline_k, ss.pipeline_k, read);
        free_q_after(n_block);
        // kQRegs: this thread's ldmatrix reads of sQ have returned (this S consumed their registers),
        // so it frees Q's space (with kWgQ its warpgroup's slice) for the next tile's Q; the fence
        // orders the generic-proxy reads before the TMA's async-proxy writes.
        if constexpr (Tr::kQRegsFree) {
          cutlass::arch::fence_view_async_shared();
          Barrier::arrive(&ss.barrier_q_empty[Tr::kWgQ ? cwg : 0]);
        }
        Tensor scores = transform_and_mask(acc_s, n_block, Int<0>{});
        softmax.template update</*kFirst=*/true>(scores, acc_o_rc, mult);  // O and the sums are still 0
        convert_into(acc_s, rP);
      }
      PipelineState read_prev = read;  // the stage of block n + 1 (whose P V is pending)
      ++read;
      for (int n_block = n_max - 2; n_block >= w.n_block_min; --n_block) {
        Tensor acc_s = partition_fragment_C(mma_qk, Shape<BlockM, BlockN>{});  // (MMA, MMA_M, MMA_N)
        pipeline_k.consumer_wait(read);  // RAW: K[n] landed
        turn_begin();
        wgmma_gemm<true>(mma_qk, tSrQ, tSrK(_, _, _, read.index()), acc_s);
        pipeline_v.consumer_wait(read_prev);  // RAW: V[n+1] landed
        wgmma_gemm<false>(mma_pv, tOrP, tOrV(_, _, _, read_prev.index()), acc_o);
        turn_end(false);
        warpgroup_wait<1>();  // S[n] complete (the older batch); P V may still run
        if constexpr (!kSpecExp) {
          release(pipeline_k, ss.pipeline_k, read);
          free_q_after(n_block);
        }

        Tensor scores = transform_and_mask(acc_s, n_block, Int<0>{});
        fill(rescale, 1.0f);
        bool moved = true;  // false: the softmax left every rescale factor at 1 (warp-uniform)
        if constexpr (kSpecExp) {
          // The exps with the rows' current references, the block max checked after them
          // (OnlineSoftmax::update_speculative: a moved reference is corrected in place, or, where the
          // correction would lose precision, S is recomputed from K[n], which this warp still holds).
          // The recompute is the warp's own, score by score from Q and K[n] in smem in fp32: a wgmma
          // under a branch made ptxas serialize every wgmma of the kernel (C7512).
          auto recompute_from = [&](const auto& coords) {  // (MMA, MMA_M, MMA_N) -> (row, col)
            Tensor sKn = sK(_, _, read.index());  // (BN, D)
            CUTE_UNROLL
            for (int i = 0; i < size(acc_s); ++i) {
              const int row = get<0>(coords(i)), col = get<1>(coords(i));
              float dot = 0.0f;
#pragma unroll 1
              for (int k = 0; k < kHeadDim; ++k) dot = fmaf(static_cast<float>(sQ(row, k)), static_cast<float>(sKn(col, k)), dot);
              acc_s(i) = dot;
            }
            transform_and_mask(acc_s, n_block, Int<0>{});
          };
          auto recompute = [&](auto&) {
            if constexpr (kOpaqueCoords) {
              // The scores' (row, col) from an opaque copy of the thread index made here, so that
              // nothing of this rare branch is hoisted out of it (from the kernel's tScS, ptxas
              // computed every score's smem offset at each tile's start and kept some live).
              int ctid_opaque = ctid;
              asm volatile("mov.b32 %0, %0;" : "+r"(ctid_opaque));
              recompute_from(mma_qk.get_thread_slice(ctid_opaque).partition_C(make_identity_tensor(Shape<BlockM, BlockN>{})));
            } else {
              recompute_from(tScS);
            }
          };
          // An interior block (every key visible to every row of the tile: no score masked)
          // skips the block max: the row sums of p tell whether any reference may move.
          if constexpr (FLASHCUTE_SM90_FWD_FORCE_RECOMPUTE != 0) {  // check builds: the recompute on every step
            recompute(scores);
            softmax.update(scores, rescale, mult);
          } else if (kSumCheck && w.unmasked(n_block * kBlockN, kBlockN)) {
            moved = softmax.update_sum_check(scores, rescale, mult, recompute);
          } else {
            moved = softmax.update_speculative(scores, rescale, mult, recompute);
          }
          release(pipeline_k, ss.pipeline_k, read);  // K[n] is no longer read
          free_q_after(n_block);
        } else {
          softmax.update(scores, rescale, mult);
        }

        warpgroup_wait<0>();  // O += P[n+1] V[n+1] complete: P's registers and V[n+1] are free
        warpgroup_fence_operand(tOrP);
        release(pipeline_v, ss.pipeline_v, read_prev);
        bool grew = false;
        CUTE_UNROLL
        for (int r = 0; r < kRows; ++r) grew |= rescale(r, 0) != 1.0f;
        // Warp-uniform skip: all factors exactly 1 (known without the vote where the softmax says so).
        if (moved && __any_sync(0xffffffffu, grew)) {
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
      // Under the last P V: the rows' factors and LSE, and (kEarlyWar) the first chunk's WAR wait on
      // sO (the epilogue's, below).
      if constexpr (Tr::kEarlyRows) {
        softmax.row_factors(mult, inv, lse);
        store_lse();
      }
      if constexpr (Tr::kEarlyWar) war_wait_o();
      warpgroup_wait<0>();
      FLASHCUTE_TIMELINE(stamp(4);)
      release(pipeline_v, ss.pipeline_v, read_prev);
    }

    if constexpr (Tr::kSeparateO && !Tr::kEarlyQ && !Tr::kQRegsFree) {
      // Every wgmma that read sQ has completed (waited on above): the next tile's Q may land while
      // this tile's epilogue runs. Only the async proxy touched sQ, so no proxy fence is needed (nor
      // after the early arrival of kEarlyQ).
      if (w.any_key()) Barrier::arrive(&ss.barrier_q_empty[Tr::kWgQ ? cwg : 0]);
    }

    // --- epilogue: normalize, LSE, O through smem, TMA store -----------------------------------------
    if constexpr (Tr::kEarlyRows) {
      // The overlapped loop, which did the rows' part, ran only where the tile has a key.
      if (!w.any_key()) {
        softmax.row_factors(mult, inv, lse);
        store_lse();
      }
      softmax.normalize(acc_o_rc, inv);
    } else {
      softmax.finalize(acc_o_rc, mult, lse);
      store_lse();
    }
    FLASHCUTE_TIMELINE(stamp(6);)

    Element* o_ptr = static_cast<Element*>(p.out) +
                     (varlen ? w.q_row0 * p.o_row_stride : w.batch * p.o_batch_stride) + w.head * p.o_head_stride;
    // This warpgroup's 64 rows of the sequence (w.m_block * kConsumerWgs + rb, from m0_frag, which
    // the mask keeps live anyway: with rb live to here too the four-warpgroup kernel spilled).
    const int wg_tile = (Tr::kMirrorRows ? m0_frag / 64 : w.m_block * Tr::kConsumerWgs) + cwg;
    const int wg_rows = w.len_q - wg_tile * 64;
    if (Tr::kPersistent && !w.any_key()) {
      // No key: O = 0, written straight from zeros. No Q was loaded for this tile, so the producer
      // does not wait for Q's space: nothing here may touch smem.
      constexpr int kChunks = kHeadDim / 8;  // 16-byte chunks per row
      for (int i = wtid; i < 64 * kChunks; i += kWarpgroupThreads) {
        const int row = i / kChunks, col = (i % kChunks) * 8;
        if (row < wg_rows && col < p.head_dim_v)
          *reinterpret_cast<uint4*>(o_ptr + static_cast<int64_t>(wg_tile * 64 + row) * p.o_row_stride + col) =
              make_uint4(0, 0, 0, 0);
      }
      FLASHCUTE_TIMELINE(++tl_k;)
      return;
    }

    // Each consumer warpgroup writes and reads back only its own 64 rows of sO (Q's space, or O's own
    // with kSeparateO): its own wgmmas were the last readers of those rows of sQ (all waited on
    // above), so no CTA-wide barrier. O goes out in kOChunks column chunks of kOCols (kSplitO: O's
    // buffer holds one), each the slice of acc_o that a 64 x kOCols product's fragment would be.
    Element* o_smem;
    if constexpr (Tr::kSeparateO) o_smem = ss.o.data();
    else o_smem = ss.q.data();
    Tensor sO = make_tensor(make_smem_ptr(o_smem), typename Tr::SmemLayoutO{});  // (BM, kOCols)
    typename Tr::TiledMmaOChunk mma_o_chunk;
    auto r2s_copy = make_tiled_copy_C(Copy_Atom<typename Tr::SmemCopyAtomO, Element>{}, mma_o_chunk);
    auto r2s_thr = r2s_copy.get_thread_slice(Tr::kMirrorRows ? ctid_now : ctid);
    Tensor taccOsO = r2s_thr.partition_D(sO);  // (CPY, CPY_M, CPY_N)
    using OChunkLayout = decltype(partition_fragment_C(mma_o_chunk, Shape<BlockM, typename Tr::OCols>{}).layout());
    static_assert(cosize_v<OChunkLayout> * Tr::kOChunks == size(decltype(acc_o.layout()){}),
                  "acc_o is kOChunks fragments of a 64 x kOCols product, one after another");
    CUTE_UNROLL
    for (int chunk = 0; chunk < Tr::kOChunks; ++chunk) {
      auto rO = [&] {
        if constexpr (Tr::kOChunks == 1) return sm80::convert_to<Element>(acc_o);
        else return sm80::convert_to<Element>(make_tensor(acc_o.data() + chunk * cosize_v<OChunkLayout>, OChunkLayout{}));
      }();
      if constexpr (Tr::kSeparateO) {
        // WAR: the warpgroup's previous rows of sO (the previous chunk's, or the previous tile's last)
        // have been read, by its TMA store (whose reads the issuing thread waits for) or by every
        // thread's copies. kEarlyWar: the first chunk's wait ran under the last P V (with O in its
        // own smem the kernel is persistent, and a tile without keys returned above, so the
        // overlapped loop ran).
        if (!(Tr::kEarlyWar && chunk == 0)) war_wait_o();
        FLASHCUTE_TIMELINE(if (chunk == 0) stamp(10);)
      }
      Tensor taccOrO = r2s_thr.retile_S(rO);  // (CPY, CPY_M, CPY_N)
      copy(r2s_copy, taccOrO, taccOsO);
      FLASHCUTE_TIMELINE(if (chunk == Tr::kOChunks - 1) stamp(7);)

      // RAW: the warpgroup's O rows are in smem (the barrier) before its threads read rows other warps
      // wrote or its TMA store reads them (the fence: visible to the async proxy).
      // (warp_store: each warp's TMA store reads only the rows the warp wrote.)
      cutlass::arch::fence_view_async_shared();
      if (warp_store) __syncwarp();
      else named_barrier_sync(static_cast<uint32_t>(NamedBarrierId::kEpilogue) + cwg, kWarpgroupThreads);
      FLASHCUTE_TIMELINE(if (chunk == Tr::kOChunks - 1) stamp(8);)

      // One TMA store of the warpgroup's 64 rows where the tensor map addresses O and every row that
      // exists belongs to this tile's sequence (varlen: the map's extents are the packed totals, so
      // the rows past a short sequence's end are the next sequence's, which only 128-bit copies skip).
      if (params.tma_store_o && (!varlen || wg_rows >= 64)) {
        // One store by thread 0 of the warpgroup's 64 rows, or (kWarpStore) one by each warp's lane 0
        // of the warp's own 16.
        const int row0 = Tr::kWarpStore ? 16 * (wtid / 32) : 0;
        if ((Tr::kWarpStore ? wtid % 32 == 0 : wtid == 0) && wg_rows > row0) {
          Tensor mO = domain_offset(make_coord(static_cast<int>(w.q_row0), _0{}),
                                    params.tma_o.get_tma_tensor(params.shape_o)(_, _, w.head, varlen ? 0 : w.batch));
          Tensor gO = local_tile(mO, Shape<typename Tr::OTmaRows, typename Tr::OCols>{},
                                 make_coord(wg_tile * (64 / Tr::OTmaRows::value) + row0 / Tr::OTmaRows::value, chunk));
          Tensor sO_st = make_tensor(make_smem_ptr(o_smem + typename Tr::SmemLayoutO{}(64 * cwg + row0, 0)),
                                     typename Tr::SmemLayoutOTma{});  // (rows, kOCols)
          auto [tOgO, tOsO] =
              tma_partition(params.tma_o, _0{}, Layout<_1>{}, group_modes<0, 2>(sO_st), group_modes<0, 2>(gO));
          copy(params.tma_o, tOsO, tOgO);
          tma_store_arrive();
          // Q's space, where O is staged, is the next tile's Q: the store must have read it first.
          if constexpr (Tr::kPersistent && !Tr::kSeparateO) tma_store_wait<0>();
        }
        if constexpr (Tr::kPersistent && !Tr::kSeparateO) Barrier::arrive(&ss.barrier_q_empty[0]);
      } else {
        Tensor mO = make_tensor(make_gmem_ptr(o_ptr), make_shape(w.len_q, HeadDim{}), make_stride(p.o_row_stride, _1{}));
        Tensor gO = local_tile(mO, Shape<_64, typename Tr::OCols>{}, make_coord(wg_tile, chunk));  // (64, kOCols)
        Tensor sO_wg = local_tile(sO, Shape<_64, typename Tr::OCols>{}, make_coord(cwg, _0{}));  // (64, kOCols)
        typename Tr::GmemCopyOut gmem_copy_o;
        auto s2g = gmem_copy_o.get_thread_slice(wtid);
        Tensor tOsO = s2g.partition_S(sO_wg);  // (CPY, CPY_M, CPY_K)
        Tensor tOgO = s2g.partition_D(gO);
        Tensor tOcO = s2g.partition_D(make_identity_tensor(Shape<_64, typename Tr::OCols>{}));
        Tensor tOrO = make_tensor<Element>(shape(tOgO));
        copy(gmem_copy_o, tOsO, tOrO);
        if constexpr (Tr::kPersistent && !Tr::kSeparateO) {
          // Q's space is free for the next tile's TMA once every consumer thread has read its O rows
          // back. The fence orders these generic-proxy accesses before the async-proxy (TMA) writes.
          cutlass::arch::fence_view_async_shared();
          Barrier::arrive(&ss.barrier_q_empty[0]);
        }
        sm80::copy_predicated(gmem_copy_o, tOrO, tOgO, tOcO, wg_rows, p.head_dim_v - chunk * Tr::kOCols);
      }
    }
    FLASHCUTE_TIMELINE(stamp(5); ++tl_k;)
  });
  // The CTA's smem must outlive the reads of its last TMA store (kWarpStore: each warp's lane 0 issued
  // its own).
  if (Tr::kWarpStore ? wtid % 32 == 0 : wtid == 0) tma_store_wait<0>();
}

}  // namespace flashcute::sm90
