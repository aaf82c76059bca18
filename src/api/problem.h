#pragma once
// Internal, normalized description of one call, produced by validation and consumed by dispatch.

#include <cstdint>
#include <string>
#include <vector>

#include "api/kernel_key.h"
#include "common/mask.h"
#include "flashcute/args.h"

namespace flashcute {

struct ProblemDesc {
  bool backward = false;
  bool varlen = false;
  DType dtype = DType::kFloat16;
  int64_t batch = 0;
  int64_t seqlen_q = 0;  // varlen: max_seqlen_q
  int64_t seqlen_k = 0;  // varlen: max_seqlen_k
  int64_t total_q = 0;   // varlen: rows of q; dense: batch * seqlen_q
  int64_t total_k = 0;
  int64_t heads_q = 0;
  int64_t heads_kv = 0;
  int64_t head_dim = 0;
  int64_t head_dim_v = 0;
  float softmax_scale = 0.0f;  // resolved (default 1/sqrt(d) applied)
  Window window;               // causal folded in
  float softcap = 0.0f;
  bool has_alibi = false;
  bool alibi_per_batch = false;
  bool has_lse = false;
  bool deterministic = false;
  Backend backend = Backend::kAuto;
  // Backward only: the head-dim bucket of the SM80 backward kernel this build runs for the problem
  // (set by the API from the compiled kernels; sizes the dQ accumulator's tiles, bwd_workspace.h).
  int32_t bwd_bucket = 0;

  // True when no output element exists: nothing to launch.
  bool no_output() const { return batch == 0 || total_q == 0 || heads_q == 0; }
};

// The GPU a call runs on, as far as validation cares. Tests construct their own.
struct DeviceInfo {
  int index = 0;
  int cc_major = 0;
  int cc_minor = 0;
  std::string name;
  int sm_count = 0;
  int64_t max_smem_per_block_optin = 0;

  int cc() const { return cc_major * 10 + cc_minor; }
};

// What this build contains. current_build() reads the generated tables; tests construct their own.
struct BuildInfo {
  std::vector<KernelKey> fwd;  // compiled forward instantiations
  std::vector<KernelKey> bwd;  // compiled backward instantiations
  std::vector<int> sass;       // SM targets with machine code, e.g. {80, 90}
  std::vector<int> ptx;        // virtual targets with PTX, e.g. {80}
};

}  // namespace flashcute
