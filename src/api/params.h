#pragma once
// Host arguments -> device Params, in one place (DESIGN.md: "host Arguments become device Params in
// one place"). Called only on validated arguments.

#include "api/problem.h"
#include "common/bwd_params.h"
#include "common/fwd_params.h"
#include "flashcute/args.h"

namespace flashcute {

FwdParams make_fwd_params(const FwdArgs& args, const ProblemDesc& problem);
FwdParams make_fwd_params(const VarlenFwdArgs& args, const ProblemDesc& problem);

// The backward's params, with args.workspace carved as src/sm80/bwd_workspace.h lays it out (the
// caller has checked that it holds bwd_workspace_size() bytes).
BwdParams make_bwd_params(const BwdArgs& args, const ProblemDesc& problem);
BwdParams make_bwd_params(const VarlenBwdArgs& args, const ProblemDesc& problem);

}  // namespace flashcute
