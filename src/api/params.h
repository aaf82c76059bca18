#pragma once
// Host arguments -> device Params, in one place (DESIGN.md: "host Arguments become device Params in
// one place"). Called only on validated arguments.

#include "api/problem.h"
#include "common/fwd_params.h"
#include "flashcute/args.h"

namespace flashcute {

FwdParams make_fwd_params(const FwdArgs& args, const ProblemDesc& problem);
FwdParams make_fwd_params(const VarlenFwdArgs& args, const ProblemDesc& problem);

}  // namespace flashcute
