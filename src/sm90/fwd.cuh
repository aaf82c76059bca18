#pragma once
// Host launcher of the SM90 forward for one KernelKey: builds the TMA descriptors of Q, K and V
// (loads) and of O (store, where TMA can address it), grid (query blocks, heads, batch) or a 1-D
// grid of the tiles in TileOrder (masked_tile_group) or (persistent) one CTA per SM or per tile,
// block = (1 producer + consumer) warpgroups, dynamic shared memory from the traits (raised above
// 48 KB by attribute); the persistent kernel's tile counter (in the caller's workspace) is zeroed
// before the launch. Cluster instantiations launch with cudaLaunchKernelEx and a cluster dimension.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "common/element.cuh"
#include "sm90/fwd.h"
#include "sm90/fwd_kernel.cuh"

namespace flashcute::sm90 {

namespace detail {

// One gmem tensor as TMA sees it: (rows, d, heads, batch) with element strides. TMA needs every
// stride to be a multiple of 16 bytes below 2^40 bytes and each extent in [1, 2^31); validation
// guarantees the 16 bytes for every mode of extent > 1 (check_alignment), so modes of extent 1 get a
// harmless aligned stride here (their coordinate is always 0).
struct TmaView {
  const void* ptr;
  int64_t rows, d, heads, batch;
  int64_t row_stride, head_stride, batch_stride;
};

inline std::string tma_problem(const char* name, TmaView& t, int esize) {
  const int64_t extents[4] = {t.rows, t.d, t.heads, t.batch};
  for (int64_t e : extents)
    if (e >= (int64_t(1) << 31))
      return std::string(name) + ": an extent of " + std::to_string(e) + " rows/heads/batches exceeds TMA's 2^31";
  int64_t* strides[3] = {&t.row_stride, &t.head_stride, &t.batch_stride};
  const int64_t outer[3] = {t.rows, t.heads, t.batch};
  for (int i = 0; i < 3; ++i) {
    if (outer[i] <= 1) *strides[i] = 16 / esize;
    if (*strides[i] < 0 || (*strides[i] * esize) % 16 != 0 || *strides[i] * esize >= (int64_t(1) << 40))
      return std::string(name) + ": stride " + std::to_string(*strides[i]) +
             " elements is not a multiple of 16 bytes below 2^40 bytes (TMA)";
  }
  if (reinterpret_cast<uintptr_t>(t.ptr) % 16 != 0) return std::string(name) + ": data pointer is not 16-byte aligned";
  t.rows = t.rows < 1 ? 1 : t.rows;
  t.heads = t.heads < 1 ? 1 : t.heads;
  t.batch = t.batch < 1 ? 1 : t.batch;
  return {};
}

template <class Tr, class Tma, class CopyOp = cute::SM90_TMA_LOAD, int kMulticast = 1, class SmemLayout, class Tile>
Tma make_tma(const TmaView& t, typename Tr::ShapeT* shape, SmemLayout smem_layout, Tile tile) {
  using namespace cute;
  using Element = typename Tr::Element;
  *shape = make_shape(static_cast<int32_t>(t.rows), static_cast<int32_t>(t.d), static_cast<int32_t>(t.heads),
                      static_cast<int32_t>(t.batch));
  // A store's tensor is written through: its element pointer is mutable.
  using Ptr = std::conditional_t<std::is_same_v<CopyOp, SM90_TMA_STORE>, Element*, const Element*>;
  Tensor g = make_tensor(make_gmem_ptr(static_cast<Ptr>(const_cast<void*>(t.ptr))), *shape,
                         make_stride(t.row_stride, _1{}, t.head_stride, t.batch_stride));
  return make_tma_copy(CopyOp{}, g, smem_layout, tile, Int<kMulticast>{});
}

// How the persistent instantiation gets its tiles: the static deal over one CTA per SM, the
// counter in p.workspace (dynamic), or one CTA per tile (the launch's grid is the TileOrder list,
// so the hardware's in-order dispatch schedules it; each CTA's static deal ends after its first
// tile). Ignored by the non-persistent instantiation.
enum class Schedule { kStatic, kDynamic, kOnePerTile };

template <KernelKey K, FwdTileConfig kConfig, bool kTransform>
Status launch_fwd(const FwdParams& p, Stream stream, int64_t max_smem_optin, Schedule schedule = Schedule::kStatic) {
  const bool dynamic = schedule == Schedule::kDynamic;
  using namespace cute;
  using Tr = FwdTraits<element_t<K.dtype>, kConfig>;
  constexpr int64_t kSmem = Tr::kSmemBytes;
  if (kSmem > max_smem_optin)
    return Status::NotSupported("sm90 forward: head-dim bucket " + std::to_string(K.head_dim) + " needs " +
                                std::to_string(kSmem) + " bytes of shared memory per block; this GPU allows " +
                                std::to_string(max_smem_optin));

  // Varlen tensors are one "batch" of packed rows: the extents are the totals, so TMA never reads
  // past the allocation; rows of a neighbouring sequence that a tile reaches are masked (keys) or
  // never stored (queries).
  const bool varlen = p.cu_seqlens_q != nullptr;
  const int64_t rows_q = varlen ? p.total_rows_q : p.seqlen_q;
  const int64_t rows_k = varlen ? p.total_rows_k : p.seqlen_k;
  const int64_t nb = varlen ? 1 : p.batch;
  // An empty K/V (seqlen_k 0) is never read but still needs a well-formed descriptor.
  const void* k_ptr = p.k != nullptr ? p.k : p.q;
  const void* v_ptr = p.v != nullptr ? p.v : p.q;
  TmaView q{p.q, rows_q, p.head_dim, p.heads_q, nb, p.q_row_stride, p.q_head_stride, p.q_batch_stride};
  TmaView k{k_ptr, rows_k, p.head_dim, p.heads_kv, nb, p.k_row_stride, p.k_head_stride, p.k_batch_stride};
  TmaView v{v_ptr, rows_k, p.head_dim_v, p.heads_kv, nb, p.v_row_stride, p.v_head_stride, p.v_batch_stride};
  constexpr int kEsize = sizeof(typename Tr::Element);
  for (auto [name, t] : {std::pair<const char*, TmaView*>{"q", &q}, {"k", &k}, {"v", &v}}) {
    const std::string why = tma_problem(name, *t, kEsize);
    if (!why.empty()) return Status::NotSupported("sm90 forward: " + why + "; use backend=sm80");
  }

  typename Tr::ShapeT shape_q, shape_k, shape_v;
  auto tma_q = make_tma<Tr, typename Tr::TmaQ>(q, &shape_q, typename Tr::SmemLayoutQTma{},
                                               Shape<typename Tr::QTmaRows, typename Tr::HeadDim>{});
  using KVOp = typename Tr::TmaKVOp;
  auto tma_k = make_tma<Tr, typename Tr::TmaKV, KVOp, Tr::kCluster>(k, &shape_k, take<0, 2>(typename Tr::SmemLayoutK{}),
                                                                    Shape<typename Tr::BlockN, typename Tr::HeadDim>{});
  auto tma_v = make_tma<Tr, typename Tr::TmaKV, KVOp, Tr::kCluster>(v, &shape_v, take<0, 2>(typename Tr::SmemLayoutV{}),
                                                                    Shape<typename Tr::BlockN, typename Tr::HeadDim>{});
  // O by TMA store where TMA can address it (validation's 16-byte strides make that every case but
  // extents, strides or a pointer past TMA's limits, which keep the consumers' 128-bit stores).
  TmaView o{p.out, rows_q, p.head_dim_v, p.heads_q, nb, p.o_row_stride, p.o_head_stride, p.o_batch_stride};
  const bool tma_store_o = tma_problem("out", o, kEsize).empty();
  typename Tr::ShapeT shape_o = shape_q;
  typename Tr::TmaO tma_o{};
  if (tma_store_o)
    tma_o = make_tma<Tr, typename Tr::TmaO, SM90_TMA_STORE>(o, &shape_o, typename Tr::SmemLayoutOTma{},
                                                            Shape<typename Tr::OTmaRows, typename Tr::OCols>{});
  typename Tr::Params params{p, shape_q, shape_k, shape_v, shape_o, tma_q, tma_k, tma_v, tma_o, tma_store_o};

  auto kernel = fwd_kernel<Tr, kTransform>;
  if constexpr (kSmem > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem));
    if (err != cudaSuccess)
      return Status::Cuda(std::string("sm90 forward: cudaFuncSetAttribute: ") + cudaGetErrorString(err));
  }
  const int64_t m_blocks = (p.seqlen_q + Tr::kBlockM - 1) / Tr::kBlockM;
  dim3 grid(static_cast<unsigned>(m_blocks), static_cast<unsigned>(p.heads_q), static_cast<unsigned>(p.batch));
  if constexpr (Tr::kPersistent || Tr::kLptGrid) {
    // Persistent: one CTA per SM (at most one per tile) or per tile; TileOrder grid: one CTA per
    // tile, 1-D. Either way the kernel walks TileOrder in int arithmetic.
    const int64_t tiles = m_blocks * p.heads_q * p.batch;
    if (tiles > (int64_t(1) << 30))  // tile indices run past num_tiles by up to 2 x grid in int
      return Status::NotSupported("sm90 forward: " + std::to_string(tiles) + " tiles exceed 2^30; use backend=sm80");
    int device = 0, sms = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess)
      return Status::Cuda(std::string("sm90 forward: SM count: ") + cudaGetErrorString(err));
    const bool per_sm = Tr::kPersistent && schedule != Schedule::kOnePerTile;
    grid = dim3(static_cast<unsigned>(per_sm && tiles > sms ? sms : tiles));
    // TileOrder's groups of batch x head indices (tile_config.h): the static deal takes as many as
    // keep their K and V within half of L2; the dynamic scheduler masked_tile_group for a causal mask
    // or window, else FLASHCUTE_SM90_FWD_DYNAMIC_TILE_GROUP (0: the L2-sized group); the TileOrder
    // grid masked_tile_group for a causal mask or window up to kMaskedTileGroupMaxSeqlenK keys, else
    // 1 (the order of the (query blocks, heads, batch) grid); the persistent kernel's grid of one CTA
    // per tile masked_tile_group for a causal mask or window at any length (the dynamic
    // scheduler's order), else 1.
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess) {
      cudaGetLastError();
      l2 = 0;
    }
    const int64_t kv_bytes = (p.seqlen_k > 0 ? p.seqlen_k : 1) * (p.head_dim + p.head_dim_v) *
                             static_cast<int64_t>(sizeof(typename Tr::Element));
    const int64_t batch_heads = static_cast<int64_t>(p.heads_q) * p.batch;
    const bool masked = !window_is_full(p.window);
    int64_t group = 1;
    if constexpr (Tr::kPersistent) {
      if (!per_sm) group = masked ? kConfig.masked_tile_group : 1;  // the TileOrder grid's groups
      else if (dynamic && masked && kConfig.masked_tile_group > 0) group = kConfig.masked_tile_group;
      else if (dynamic && FLASHCUTE_SM90_FWD_DYNAMIC_TILE_GROUP > 0) group = FLASHCUTE_SM90_FWD_DYNAMIC_TILE_GROUP;
      else group = l2 / 2 / kv_bytes;
    } else if (masked && p.seqlen_k <= kMaskedTileGroupMaxSeqlenK) {
      group = kConfig.masked_tile_group;
    }
    group = group < 1 ? 1 : (group > batch_heads ? batch_heads : group);
    params.tile_group = static_cast<int>(group);
    if constexpr (Tr::kFastDecode) {
      // TileOrder's divisors (make_tile_order's m_blocks; never 0: no divisor may be).
      const int64_t m_blocks = std::max<int64_t>(1, (p.seqlen_q + Tr::kBlockM - 1) / Tr::kBlockM);
      params.div_per_group = cutlass::FastDivmod(static_cast<int>(group * m_blocks));
      params.div_group = cutlass::FastDivmod(static_cast<int>(group));
      params.div_heads = cutlass::FastDivmod(static_cast<int>(std::max<int64_t>(1, p.heads_q)));
    }
    if (Tr::kPersistent && dynamic) {
      // The counter starts at 0 on every launch: the kernel's last claim wraps it back to 0
      // (atomicInc), so a workspace the caller keeps zero (Workspace::zeroed) needs no reset; any
      // other gets one, stream-ordered before the kernel.
      params.tile_counter = static_cast<int*>(p.workspace);
      if (!p.workspace_zeroed) {
        err = cudaMemsetAsync(params.tile_counter, 0, sizeof(int), reinterpret_cast<cudaStream_t>(stream));
        if (err != cudaSuccess)
          return Status::Cuda(std::string("sm90 forward: tile counter reset: ") + cudaGetErrorString(err));
      }
    }
  }
#if FLASHCUTE_SM90_FWD_TIMELINE
  // Probe builds: a zeroed stamp buffer per launch (grown as needed, never freed), dumped below.
  static unsigned long long* timeline_buf = nullptr;
  static size_t timeline_bytes = 0;
  const size_t need = static_cast<size_t>(grid.x) * kTimelineMaxTiles * kTimelineSlots * sizeof(unsigned long long);
  if (need > timeline_bytes) {
    if (timeline_buf != nullptr) cudaFree(timeline_buf);
    if (cudaMalloc(&timeline_buf, need) != cudaSuccess) return Status::Cuda("sm90 forward: timeline buffer");
    timeline_bytes = need;
  }
  if (cudaMemsetAsync(timeline_buf, 0, need, reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess)
    return Status::Cuda("sm90 forward: timeline buffer reset");
  params.timeline = timeline_buf;
#endif
  if constexpr (Tr::kCluster > 1) {
    // Clusters of adjacent query blocks along x (Fwd::run launches these only with an even count).
    if (grid.x % Tr::kCluster != 0 || params.tile_group != 1)
      return Status::Internal("sm90 forward: a cluster launch needs the query blocks in whole clusters");
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = dim3(Tr::kThreads);
    config.dynamicSmemBytes = static_cast<size_t>(kSmem);
    config.stream = reinterpret_cast<cudaStream_t>(stream);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = Tr::kCluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    const cudaError_t launch_err = cudaLaunchKernelEx(&config, kernel, params);
    if (launch_err != cudaSuccess)
      return Status::Cuda(std::string("sm90 forward cluster launch: ") + cudaGetErrorName(launch_err) + " (" +
                          cudaGetErrorString(launch_err) + ")");
  } else {
    kernel<<<grid, Tr::kThreads, kSmem, reinterpret_cast<cudaStream_t>(stream)>>>(params);
  }
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return Status::Cuda(std::string("sm90 forward launch: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
#if FLASHCUTE_SM90_FWD_TIMELINE
  // Header: grid, slots, max tiles, block_m, block_n, consumer warpgroups, persistent, seqlen_k;
  // then grid x kTimelineMaxTiles x kTimelineSlots uint64 stamps (0: not reached).
  if (const char* path = std::getenv("FLASHCUTE_TIMELINE_OUT")) {
    std::vector<unsigned long long> host(need / sizeof(unsigned long long));
    if (cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess &&
        cudaMemcpy(host.data(), timeline_buf, need, cudaMemcpyDeviceToHost) == cudaSuccess) {
      if (FILE* f = std::fopen(path, "wb")) {
        const long long header[8] = {grid.x, kTimelineSlots, kTimelineMaxTiles, Tr::kBlockM, Tr::kBlockN,
                                     Tr::kConsumerWgs, Tr::kPersistent ? 1 : 0, p.seqlen_k};
        std::fwrite(header, sizeof(header), 1, f);
        std::fwrite(host.data(), 1, need, f);
        std::fclose(f);
      }
    }
  }
#endif
  return Status::Ok();
}

}  // namespace detail

template <KernelKey K>
Status Fwd<K>::run(const FwdParams& p, Stream stream, int64_t max_smem_optin) {
  static_assert(K.arch == Arch::kSm90, "sm90::Fwd instantiated with a non-SM90 key");
  if (p.heads_q > 65535 || p.batch > 65535)
    return Status::NotSupported("sm90 forward: heads_q and batch must be <= 65535 (grid y/z limits)");
  constexpr FwdTileConfig kRow = fwd_tile_config(K.head_dim);
  static_assert(kRow.head_dim == K.head_dim, "no SM90 forward tile config for this head-dim bucket");
  if constexpr (kRow.cluster_min_seqlen_k > 0) {
    // No mask, no score transform, not varlen (every query block has rows and the same key blocks),
    // seqlen_k from the row's limit, query blocks in pairs: clusters of two CTAs sharing K and V by
    // multicast, with or without a workspace.
    const int64_t m_blocks = (p.seqlen_q + kRow.block_m - 1) / kRow.block_m;
    if (!p.transform_scores && window_is_full(p.window) && p.cu_seqlens_q == nullptr &&
        p.seqlen_k >= kRow.cluster_min_seqlen_k && m_blocks > 0 && m_blocks % 2 == 0)
      return detail::launch_fwd<K, kRow.for_kernel(false, false, true, false, false, true), false>(p, stream,
                                                                                               max_smem_optin);
  }
  // The persistent instantiation where the row says it pays (tile_config.h): with the dynamic tile
  // scheduler when the caller gave a workspace, else with the static deal.
  // Plain problems (no softcap/ALiBi) take the dynamic scheduler up to the row's longer plain limit.
  if constexpr (kRow.persistent_max_seqlen_k > 0 || kRow.dynamic_max_seqlen_k > 0 ||
                kRow.dynamic_plain_max_seqlen_k > 0) {
    constexpr int kPlainDynamicMax = std::max(kRow.dynamic_max_seqlen_k, kRow.dynamic_plain_max_seqlen_k);
    const bool dynamic =
        p.workspace != nullptr && p.seqlen_k <= (p.transform_scores ? kRow.dynamic_max_seqlen_k : kPlainDynamicMax);
    if constexpr (kRow.block_n_masked > 0 || kRow.short_masked_max_seqlen_k > 0 || kRow.short_full_max_seqlen_k > 0) {
      // No score transform, and a causal mask or window (or, up to short_full_max_seqlen_k keys,
      // none): the masked kernels, always their persistent instantiation (one kernel, so the
      // workspace changes which CTA runs a tile, never its arithmetic).
      const bool masked = !window_is_full(p.window);
      // Given a workspace the dynamic scheduler; without one the static deal up to static_max keys
      // and one CTA per tile beyond (the static deal lost 9-21% there: masked_max_seqlen_k).
      auto schedule_up_to = [&](int static_max) {
        return p.workspace != nullptr      ? detail::Schedule::kDynamic
               : p.seqlen_k <= static_max ? detail::Schedule::kStatic
                                          : detail::Schedule::kOnePerTile;
      };
      if (!p.transform_scores) {
        if constexpr (kRow.short_wgs > 0 && (kRow.short_masked_max_seqlen_k > 0 || kRow.short_full_max_seqlen_k > 0)) {
          // Up to short_masked_max_seqlen_k keys (short_full_max_seqlen_k unmasked): the short tiles,
          // each warpgroup on its own rows' key blocks; the static deal within persistent_max_seqlen_k.
          if (p.seqlen_k <= (masked ? kRow.short_masked_max_seqlen_k : kRow.short_full_max_seqlen_k))
            return detail::launch_fwd<K, kRow.for_kernel(false, true, false, true, true), false>(
                p, stream, max_smem_optin, schedule_up_to(kRow.persistent_max_seqlen_k));
        }
        if constexpr (kRow.block_n_masked > 0) {
          // Up to the longest of the three limits: the masked kernel's wider key step; the static deal
          // up to the persistent / dynamic limits.
          constexpr int kPersistentMax = std::max(kRow.dynamic_max_seqlen_k, kRow.persistent_max_seqlen_k);
          constexpr int kMaskedMax = std::max(kPersistentMax, kRow.masked_max_seqlen_k);
          // From the row's masked_full_min_seqlen_k keys (tile_config.h; d 64: 4096) unmasked problems
          // on this kernel too, with a workspace or without (the kernel never depends on it).
          constexpr int kFullMin = kRow.masked_full_min_seqlen_k;
          if ((masked || (kFullMin > 0 && p.seqlen_k >= kFullMin)) && p.seqlen_k <= kMaskedMax)
            return detail::launch_fwd<K, kRow.for_kernel(false, true, false, true), false>(
                p, stream, max_smem_optin, schedule_up_to(kPersistentMax));
        }
      }
    }
    if (dynamic || p.seqlen_k <= kRow.persistent_max_seqlen_k) {
      const detail::Schedule schedule = dynamic ? detail::Schedule::kDynamic : detail::Schedule::kStatic;
      if constexpr (kRow.short_unmasked()) {
        // No mask and no score transform, query rows that pad less on the short tiles (tile_config.h).
        // Within the static deal's limit too, so that a workspace never changes the tile shape (and
        // the output's bits).
        if (!p.transform_scores && window_is_full(p.window) && p.seqlen_k <= kRow.persistent_max_seqlen_k &&
            kRow.short_pays(p.seqlen_q))
          return detail::launch_fwd<K, kRow.for_kernel(false, true, false, false, true), false>(p, stream,
                                                                                              max_smem_optin, schedule);
      }
      if (p.transform_scores)
        return detail::launch_fwd<K, kRow.for_kernel(true, true), true>(p, stream, max_smem_optin, schedule);
      if constexpr (kRow.early_q_release && kRow.early_q_max_seqlen_k > 0) {
        // Past the row's early-Q limit the same kernel freeing Q's space after the tile's last P V.
        if (p.seqlen_k > kRow.early_q_max_seqlen_k)
          return detail::launch_fwd<K, kRow.for_kernel(false, true).without_early_q(), false>(p, stream,
                                                                                            max_smem_optin, schedule);
      }
      return detail::launch_fwd<K, kRow.for_kernel(false, true), false>(p, stream, max_smem_optin, schedule);
    }
  }
  if constexpr (kRow.block_n_full > 0) {
    // No mask and no score transform: the wider key step of block_n_full.
    if (!p.transform_scores && window_is_full(p.window))
      return detail::launch_fwd<K, kRow.for_kernel(false, false, true), false>(p, stream, max_smem_optin);
  }
  return p.transform_scores ? detail::launch_fwd<K, kRow.for_kernel(true, false), true>(p, stream, max_smem_optin)
                            : detail::launch_fwd<K, kRow.for_kernel(false, false), false>(p, stream, max_smem_optin);
}

}  // namespace flashcute::sm90
