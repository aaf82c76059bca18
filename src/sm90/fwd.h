#pragma once
// The SM90 forward kernel family (declaration; the definition is in fwd.cuh and is instantiated once
// per manifest line, compiled for sm_90a only). KernelKey::head_dim selects the row of tile_config.h.

#include "api/kernel_key.h"
#include "common/fwd_params.h"
#include "flashcute/args.h"
#include "flashcute/status.h"

namespace flashcute::sm90 {

template <KernelKey K>
struct Fwd {
  // Launches the forward on `stream`. `max_smem_optin` is the device's opt-in shared-memory limit.
  // Returns kNotSupported (naming the reason) where a tensor cannot be described to TMA.
  static Status run(const FwdParams& params, Stream stream, int64_t max_smem_optin);
};

}  // namespace flashcute::sm90
