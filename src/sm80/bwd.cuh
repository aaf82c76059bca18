#pragma once
// Host launcher of the SM80 backward for one KernelKey: preprocess (D, clear the dQ accumulator and
// turn counters), main (a one-dimensional grid of key blocks x q heads x batch in bwd_grid.h's
// order, its last wave possibly split, block = warps x 32, dynamic shared memory from the tile
// config, raised above 48 KB by attribute), postprocess (dQ; dK/dV group sums under GQA/MQA). All
// on one stream, in that order; nothing synchronizes.

#include <cuda_runtime.h>

#include <string>

#include "common/element.cuh"
#include "sm80/bwd.h"
#include "sm80/bwd_grid.h"
#include "sm80/bwd_kernel.cuh"
#include "sm80/bwd_prepost.cuh"

namespace flashcute::sm80 {

template <KernelKey K>
Status Bwd<K>::run(const BwdParams& params, Stream stream, int64_t max_smem_optin, int sm_count) {
  static_assert(K.arch == Arch::kSm80, "sm80::Bwd instantiated with a non-SM80 key");
  constexpr BwdTileConfig kConfig = bwd_tile_config(K.head_dim);
  static_assert(kConfig.head_dim == K.head_dim, "no SM80 backward tile config for this head-dim bucket");
  using Traits = BwdTraits<element_t<K.dtype>, kConfig>;
  constexpr int64_t kSmem = Traits::kSmemBytes;

  if (kSmem > max_smem_optin)
    return Status::NotSupported("sm80 backward: head-dim bucket " + std::to_string(K.head_dim) + " needs " +
                                std::to_string(kSmem) + " bytes of shared memory per block; this GPU allows " +
                                std::to_string(max_smem_optin));
  if (params.heads_q > 65535 || params.batch > 65535)
    return Status::NotSupported("sm80 backward: heads_q and batch must be <= 65535 (grid y/z limits)");
  if (params.batch == 0) return Status::Ok();

  const cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  const auto launched = [](const char* what) {
    const cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) return Status::Ok();
    return Status::Cuda(std::string("sm80 backward ") + what + " launch: " + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ")");
  };
  const auto blocks = [](int64_t n, int64_t per) { return static_cast<unsigned>((n + per - 1) / per); };

  // The main kernel's grid (bwd_grid.h): its order, and the split of its last wave where the workspace
  // has the slots for it (uniform work, not deterministic). Planned first: the preprocess clears the
  // slots the plan uses.
  const unsigned n_blocks = blocks(params.seqlen_k, kConfig.block_n);
  // The plain kernel (no softcap, no ALiBi) carries only the raw forms of P and dS; the split grid
  // runs its own instantiation of it.
  using KernelFn = void (*)(BwdParams);
  const auto set_smem = [](KernelFn kernel) {
    if constexpr (kSmem > 48 * 1024) {
      const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem));
      if (err != cudaSuccess)
        return Status::Cuda(std::string("sm80 backward: cudaFuncSetAttribute: ") + cudaGetErrorString(err));
    }
    return Status::Ok();
  };
  KernelFn kernel = params.transform_scores ? bwd_kernel<Traits, true, false> : bwd_kernel<Traits, false, false>;
  const int64_t pairs = int64_t(params.heads_q) * params.batch;
  const int64_t units = int64_t(n_blocks) * pairs;
  constexpr int64_t kMaxCtas = 0x7fffffff;  // the grid's x limit
  if (units > kMaxCtas)
    return Status::NotSupported("sm80 backward: key blocks x heads_q x batch = " + std::to_string(units) +
                                " CTAs exceeds the grid limit 2^31 - 1");
  BwdParams p = params;
  p.cta_group = bwd_cta_group(params.seqlen_q, K.head_dim, pairs);
  if (params.split_slots > 0 && !params.deterministic && !params.transform_scores && units > 0) {
    KernelFn split_kernel = bwd_kernel<Traits, false, true>;
    if (Status st = set_smem(split_kernel); !st.ok()) return st;
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, split_kernel, Traits::kThreads, kSmem) != cudaSuccess) {
      cudaGetLastError();  // no plan without the count; not an error of the call
      per_sm = 0;
    }
    const BwdSplit split =
        bwd_split_plan(units, blocks(params.seqlen_q, kConfig.block_m), int64_t(sm_count) * per_sm, params.split_slots);
    if (split.pieces > 1 && units + int64_t(split.tail) * (split.pieces - 1) <= kMaxCtas) {
      p.split_first = static_cast<int>(units - split.tail);
      p.split_tail = split.tail;
      p.split_pieces = split.pieces;
      kernel = split_kernel;
    }
  }
  if (Status st = set_smem(kernel); !st.ok()) return st;
  const int64_t ctas = units + int64_t(p.split_tail) * (p.split_pieces - 1);

  const unsigned q_row_blocks = blocks(p.seqlen_q, kBwdRowsPerCta);
  if (q_row_blocks > 0) {
    const dim3 grid(q_row_blocks, static_cast<unsigned>(p.heads_q), static_cast<unsigned>(p.batch));
    bwd_preprocess_kernel<Traits><<<grid, kBwdRowThreads, 0, s>>>(p);
    if (Status st = launched("preprocess"); !st.ok()) return st;
  }

  if (ctas > 0) {
    kernel<<<static_cast<unsigned>(ctas), Traits::kThreads, kSmem, s>>>(p);
    if (Status st = launched("main"); !st.ok()) return st;
  }

  if (const unsigned m_blocks = blocks(p.seqlen_q, kConfig.block_m); m_blocks > 0) {
    const dim3 grid(m_blocks, static_cast<unsigned>(p.heads_q), static_cast<unsigned>(p.batch));
    bwd_postprocess_dq_kernel<Traits><<<grid, Traits::kThreads, 0, s>>>(p);
    if (Status st = launched("dq postprocess"); !st.ok()) return st;
  }

  const unsigned k_chunk_blocks = blocks(p.seqlen_k * (K.head_dim / 8), kBwdRowThreads);
  if (p.dk_accum != nullptr && k_chunk_blocks > 0) {
    const dim3 grid(k_chunk_blocks, static_cast<unsigned>(p.heads_kv), static_cast<unsigned>(p.batch));
    bwd_postprocess_dkv_kernel<Traits><<<grid, kBwdRowThreads, 0, s>>>(p);
    if (Status st = launched("dk/dv postprocess"); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace flashcute::sm80
