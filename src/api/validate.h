#pragma once
// Validation of every bad-input rule of the contract (TESTING.md, "Bad input"). Needs no GPU: the
// device and the build are passed in, so each rule is unit-tested on the CPU (tests/cpu/).
// Each failure names the argument, the value and the rule.

#include "api/problem.h"
#include "flashcute/args.h"
#include "flashcute/status.h"

namespace flashcute {

// Shape, dtype, stride, device and option rules. On success fills *problem.
Status validate(const FwdArgs& args, ProblemDesc* problem);
Status validate(const VarlenFwdArgs& args, ProblemDesc* problem);
Status validate(const BwdArgs& args, ProblemDesc* problem);
Status validate(const VarlenBwdArgs& args, ProblemDesc* problem);

// Can this build run the (already validated) problem on this device? Picks the kernel to run.
// `family` names the pass in messages ("forward" / "backward"); `keys` are that pass's kernels.
Status select_kernel(const ProblemDesc& problem, const std::vector<KernelKey>& keys, const char* family,
                     const BuildInfo& build, const DeviceInfo& device, KernelKey* selected);

// The smallest head-dim bucket >= d among `buckets`, or 0 if none.
int32_t head_dim_bucket(int64_t d, const std::vector<int32_t>& buckets);

// Workspace rule: at least `needed` bytes (and a pointer when needed > 0).
Status check_workspace(const Workspace& ws, size_t needed, const char* sizer);

}  // namespace flashcute
