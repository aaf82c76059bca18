#pragma once
// The SM80 backward kernel family (declaration; the definition is in bwd.cuh and is instantiated
// once per manifest line). KernelKey::head_dim selects the row of bwd_tile_config.h.

#include "api/kernel_key.h"
#include "common/bwd_params.h"
#include "flashcute/args.h"
#include "flashcute/status.h"

namespace flashcute::sm80 {

template <KernelKey K>
struct Bwd {
  // Launches preprocess, main and postprocess kernels on `stream`. `max_smem_optin` is the device's
  // opt-in shared-memory limit per block, `sm_count` its SMs (the main grid's split, bwd_grid.h).
  static Status run(const BwdParams& params, Stream stream, int64_t max_smem_optin, int sm_count);
};

}  // namespace flashcute::sm80
