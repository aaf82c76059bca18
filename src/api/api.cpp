// Public entry points: validate, size the workspace, pick the kernel, launch.

#include "flashcute/api.h"

#include <algorithm>
#include <vector>

#include "api/device.h"
#include "api/dispatch.h"
#include "api/params.h"
#include "api/validate.h"
#include "build_config.h"
#include "sm80/bwd_workspace.h"

namespace flashcute {
namespace {

#define FC_TRY(expr)                         \
  do {                                       \
    Status fc_status_ = (expr);              \
    if (!fc_status_.ok()) return fc_status_; \
  } while (0)

// The forward's workspace is optional: its bytes hold the SM90 persistent kernel's dynamic tile
// counter. Without one, that kernel deals its tiles statically (and runs only where that paid).
size_t fwd_bytes(const ProblemDesc&) { return kFwdWorkspaceBytes; }

// The backward's scratch: fp32 dQ accumulator, per-row D and LSE, GQA dK/dV shares, deterministic
// turn counters (src/sm80/bwd_workspace.h).
size_t bwd_bytes(const ProblemDesc& p) { return sm80::bwd_workspace_bytes(p); }

// The bucket of the backward kernel that will run (the backward is the SM80 kernel on every GPU:
// the tightest compiled bucket of the dtype, as select_kernel picks it). Where none is compiled the
// call fails at selection; the size then uses the tightest bucket of all.
template <class Args>
Status validate_bwd(const Args& args, ProblemDesc* p) {
  FC_TRY(validate(args, p));
  std::vector<int32_t> buckets;
  for (const KernelKey& k : current_build().bwd)
    if (k.dtype == p->dtype) buckets.push_back(k.head_dim);
  const int64_t d = std::max(p->head_dim, p->head_dim_v);
  p->bwd_bucket = head_dim_bucket(d, buckets);
  if (p->bwd_bucket == 0) p->bwd_bucket = head_dim_bucket(d, {64, 96, 128, 192, 256});
  return Status::Ok();
}

Status select(const ProblemDesc& p, int device_index, const std::vector<KernelKey>& keys, const char* family,
              KernelKey* key, DeviceInfo* dev) {
  FC_TRY(device_info(device_index, dev));
  return select_kernel(p, keys, family, current_build(), *dev, key);
}

template <class Args>
Status check_fwd(const Args& args, ProblemDesc* p) {
  FC_TRY(validate(args, p));
  // Optional: none at all (no pointer, 0 bytes) is fine; one that is given must be whole.
  if (args.workspace.data == nullptr && args.workspace.bytes == 0) return Status::Ok();
  return check_workspace(args.workspace, fwd_bytes(*p), "fwd_workspace_size");
}

template <class Args>
Status check_bwd(const Args& args, ProblemDesc* p) {
  FC_TRY(validate_bwd(args, p));
  return check_workspace(args.workspace, bwd_bytes(*p), "bwd_workspace_size");
}

template <class Args>
Status run_fwd(const Args& args) {
  ProblemDesc p;
  FC_TRY(check_fwd(args, &p));
  if (p.no_output()) return Status::Ok();  // nothing to write: no launch
  DeviceInfo dev_check;
  FC_TRY(device_info(args.q.device_index, &dev_check));  // names a bad device index before cudaSetDevice
  DeviceGuard guard(args.q.device_index);
  FC_TRY(guard.status());
  KernelKey key;
  DeviceInfo dev;
  FC_TRY(select(p, args.q.device_index, current_build().fwd, "forward", &key, &dev));
  return dispatch_fwd(key, make_fwd_params(args, p), args.stream, dev);
}

template <class Args>
Status run_bwd(const Args& args) {
  ProblemDesc p;
  FC_TRY(check_bwd(args, &p));
  if (p.no_output() && p.total_k == 0) return Status::Ok();
  DeviceGuard guard(args.q.device_index);
  FC_TRY(guard.status());
  KernelKey key;
  DeviceInfo dev;
  FC_TRY(select(p, args.q.device_index, current_build().bwd, "backward", &key, &dev));
  return dispatch_bwd(key, make_bwd_params(args, p), args.stream, dev);
}

}  // namespace

const char* version() { return FLASHCUTE_VERSION; }
const char* build_config() { return FLASHCUTE_BUILD_CONFIG; }

Status fwd_workspace_size(const FwdArgs& args, size_t* bytes) {
  ProblemDesc p;
  FC_TRY(validate(args, &p));
  *bytes = fwd_bytes(p);
  return Status::Ok();
}
Status fwd_workspace_size(const VarlenFwdArgs& args, size_t* bytes) {
  ProblemDesc p;
  FC_TRY(validate(args, &p));
  *bytes = fwd_bytes(p);
  return Status::Ok();
}
Status bwd_workspace_size(const BwdArgs& args, size_t* bytes) {
  ProblemDesc p;
  FC_TRY(validate_bwd(args, &p));
  *bytes = bwd_bytes(p);
  return Status::Ok();
}
Status bwd_workspace_size(const VarlenBwdArgs& args, size_t* bytes) {
  ProblemDesc p;
  FC_TRY(validate_bwd(args, &p));
  *bytes = bwd_bytes(p);
  return Status::Ok();
}

Status check(const FwdArgs& args) {
  ProblemDesc p;
  return check_fwd(args, &p);
}
Status check(const VarlenFwdArgs& args) {
  ProblemDesc p;
  return check_fwd(args, &p);
}
Status check(const BwdArgs& args) {
  ProblemDesc p;
  return check_bwd(args, &p);
}
Status check(const VarlenBwdArgs& args) {
  ProblemDesc p;
  return check_bwd(args, &p);
}

Status fwd(const FwdArgs& args) { return run_fwd(args); }
Status fwd(const VarlenFwdArgs& args) { return run_fwd(args); }
Status bwd(const BwdArgs& args) { return run_bwd(args); }
Status bwd(const VarlenBwdArgs& args) { return run_bwd(args); }

}  // namespace flashcute
