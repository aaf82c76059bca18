#pragma once
// The one dispatch file's interface: runtime keys -> compiled instantiations (generated from
// src/kernels.manifest). Every lookup that finds nothing is an error naming the key.

#include "api/kernel_key.h"
#include "api/problem.h"
#include "flashcute/status.h"
#include "common/bwd_params.h"
#include "common/fwd_params.h"
#include "flashcute/args.h"
#include "smoke/smoke_mma.h"

namespace flashcute {

// What this build contains: the compiled forward/backward keys and the device-code targets.
const BuildInfo& current_build();

// Launches the forward instantiation `key` (from select_kernel) on `stream`.
Status dispatch_fwd(const KernelKey& key, const FwdParams& params, Stream stream, const DeviceInfo& device);

// Launches the backward instantiation `key` (from select_kernel) on `stream`.
Status dispatch_bwd(const KernelKey& key, const BwdParams& params, Stream stream, const DeviceInfo& device);

namespace smoke {
// Runs the smoke product compiled for `arch`'s targets (kSm90: sm_90a; needs a 9.0 GPU).
Status run_smoke_mma(Arch arch, DType dtype, const SmokeMmaArgs& args);
}  // namespace smoke

}  // namespace flashcute
