#pragma once
// The SM80 forward kernel family (declaration; the definition is in fwd.cuh and is instantiated
// once per manifest line). KernelKey::head_dim selects the row of tile_config.h.

#include "api/kernel_key.h"
#include "common/fwd_params.h"
#include "flashcute/args.h"
#include "flashcute/status.h"

namespace flashcute::sm80 {

template <KernelKey K>
struct Fwd {
  // Launches the forward on `stream`. `max_smem_optin` is the device's opt-in shared-memory limit.
  static Status run(const FwdParams& params, Stream stream, int64_t max_smem_optin);
};

}  // namespace flashcute::sm80
