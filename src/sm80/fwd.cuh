#pragma once
// Host launcher of the SM80 forward for one KernelKey: grid (query blocks, heads, batch), block =
// warps x 32, dynamic shared memory from the tile config (raised above 48 KB by attribute).

#include <cuda_runtime.h>

#include <string>

#include "common/element.cuh"
#include "sm80/fwd.h"
#include "sm80/fwd_kernel.cuh"

namespace flashcute::sm80 {

namespace detail {

template <KernelKey K, bool kTransform>
Status launch_fwd(const FwdParams& p, Stream stream, int64_t max_smem_optin) {
  constexpr FwdTileConfig kConfig = fwd_tile_config(K.head_dim, kTransform);
  static_assert(kConfig.head_dim == K.head_dim, "no SM80 forward tile config for this head-dim bucket");
  using Traits = FwdTraits<element_t<K.dtype>, kConfig>;
  constexpr int64_t kSmem = Traits::kSmemBytes;
  if (kSmem > max_smem_optin)
    return Status::NotSupported("sm80 forward: head-dim bucket " + std::to_string(K.head_dim) + " needs " +
                                std::to_string(kSmem) + " bytes of shared memory per block; this GPU allows " +
                                std::to_string(max_smem_optin));
  auto kernel = fwd_kernel<Traits, kTransform>;
  if constexpr (kSmem > 48 * 1024) {
    const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem));
    if (err != cudaSuccess)
      return Status::Cuda(std::string("sm80 forward: cudaFuncSetAttribute: ") + cudaGetErrorString(err));
  }
  const int64_t m_blocks = (p.seqlen_q + kConfig.block_m - 1) / kConfig.block_m;
  const dim3 grid(static_cast<unsigned>(m_blocks), static_cast<unsigned>(p.heads_q), static_cast<unsigned>(p.batch));
  kernel<<<grid, Traits::kThreads, kSmem, reinterpret_cast<cudaStream_t>(stream)>>>(p);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return Status::Cuda(std::string("sm80 forward launch: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  return Status::Ok();
}

}  // namespace detail

template <KernelKey K>
Status Fwd<K>::run(const FwdParams& p, Stream stream, int64_t max_smem_optin) {
  static_assert(K.arch == Arch::kSm80, "sm80::Fwd instantiated with a non-SM80 key");
  if (p.heads_q > 65535 || p.batch > 65535)
    return Status::NotSupported("sm80 forward: heads_q and batch must be <= 65535 (grid y/z limits)");
  return p.transform_scores ? detail::launch_fwd<K, true>(p, stream, max_smem_optin)
                            : detail::launch_fwd<K, false>(p, stream, max_smem_optin);
}

}  // namespace flashcute::sm80
