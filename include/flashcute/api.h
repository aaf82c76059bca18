#pragma once
// The public entry points. Every function validates its arguments before touching the GPU and
// returns a Status whose message names the argument, the value and the rule on bad input; nothing
// is written to the outputs on error. All launches go to args.stream; no call synchronizes, with one
// exception outside our control: the first launch of each kernel in a process loads its module
// (CUDA lazy loading), which waits for work already in flight. Set CUDA_MODULE_LOADING=EAGER, or make
// one call before latency-critical work (CUDA graph capture included), to take that cost up front.

#include <cstddef>

#include "flashcute/args.h"
#include "flashcute/status.h"

namespace flashcute {

// Library version, e.g. "0.1.0".
const char* version();

// Scratch bytes the call needs for these arguments (0 is a valid answer). Validates the arguments.
// The forward's workspace is optional (none at all: data null and 0 bytes): on SM90 its persistent
// kernel keeps a dynamic tile counter there and runs at more sizes with it (Workspace::zeroed, args.h,
// saves the counter's reset before each launch). The backward needs its own. A workspace may serve
// one call at a time (calls on one stream may share it).
Status fwd_workspace_size(const FwdArgs& args, size_t* bytes);
Status fwd_workspace_size(const VarlenFwdArgs& args, size_t* bytes);
Status bwd_workspace_size(const BwdArgs& args, size_t* bytes);
Status bwd_workspace_size(const VarlenBwdArgs& args, size_t* bytes);

// Checks the arguments against the contract, this build and the current GPU; launches nothing.
Status check(const FwdArgs& args);
Status check(const VarlenFwdArgs& args);
Status check(const BwdArgs& args);
Status check(const VarlenBwdArgs& args);

// Forward: out = softmax(scale * q k^T + bias, masked) v, and lse = logsumexp per row (natural log).
Status fwd(const FwdArgs& args);
Status fwd(const VarlenFwdArgs& args);

// Backward: dq, dk, dv from q, k, v, out, dout and the forward's lse.
Status bwd(const BwdArgs& args);
Status bwd(const VarlenBwdArgs& args);

// What this build contains (dtypes, head-dim buckets, architectures), as a human-readable line.
const char* build_config();

}  // namespace flashcute
