// The one dispatch file (DESIGN.md): each kernel family's table of compiled instantiations comes
// from the generated <family>.inc (one FC_KERNEL line per manifest line that this build compiled);
// lookups return an error naming the key when it is missing.

#include "api/dispatch.h"

#include <string>

#include "build_config.h"
#include "sm80/bwd.h"
#include "sm80/fwd.h"
#include "sm90/fwd.h"

namespace flashcute {
namespace {

// Manifest tokens -> key fields.
constexpr Arch fc_arch_sm80 = Arch::kSm80;
constexpr Arch fc_arch_sm90 = Arch::kSm90;
constexpr DType fc_dtype_fp16 = DType::kFloat16;
constexpr DType fc_dtype_bf16 = DType::kBFloat16;
#define FC_KEY(arch, dtype, hdim, variant) KernelKey{fc_arch_##arch, fc_dtype_##dtype, hdim, Variant::variant}

template <class Fn>
struct Entry {
  KernelKey key;
  Fn fn;
};

template <class Fn, size_t N>
Status lookup(const Entry<Fn> (&table)[N], const KernelKey& key, const char* family, Fn* fn) {
  for (const Entry<Fn>& e : table) {
    if (e.fn != nullptr && e.key == key) {
      *fn = e.fn;
      return Status::Ok();
    }
  }
  return Status::NotSupported(std::string(family) + ": no instantiation for arch=" + to_string(key.arch) +
                              " dtype=" + to_string(key.dtype) + " head_dim=" + std::to_string(key.head_dim) +
                              " in this build (" FLASHCUTE_BUILD_CONFIG ")");
}

// --- smoke_mma ------------------------------------------------------------------------------
using SmokeFn = Status (*)(const smoke::SmokeMmaArgs&);
#define FC_KERNEL(arch, dtype, hdim, variant) \
  {FC_KEY(arch, dtype, hdim, variant), &smoke::SmokeMma<FC_KEY(arch, dtype, hdim, variant)>::run},
const Entry<SmokeFn> kSmokeMma[] = {
    {KernelKey{}, nullptr},  // keeps the table non-empty when the build filters every line out
#include "kernels/smoke_mma.inc"
};
#undef FC_KERNEL

// --- forward: fwd_sm80 and fwd_sm90 in one table (select_kernel picks the arch) ----------------
using FwdFn = Status (*)(const FwdParams&, Stream, int64_t);
const Entry<FwdFn> kFwd[] = {
    {KernelKey{}, nullptr},
#define FC_KERNEL(arch, dtype, hdim, variant) \
  {FC_KEY(arch, dtype, hdim, variant), &sm80::Fwd<FC_KEY(arch, dtype, hdim, variant)>::run},
#include "kernels/fwd_sm80.inc"
#undef FC_KERNEL
#define FC_KERNEL(arch, dtype, hdim, variant) \
  {FC_KEY(arch, dtype, hdim, variant), &sm90::Fwd<FC_KEY(arch, dtype, hdim, variant)>::run},
#include "kernels/fwd_sm90.inc"
#undef FC_KERNEL
};

// --- backward: bwd_sm80 -----------------------------------------------------------------------
using BwdFn = Status (*)(const BwdParams&, Stream, int64_t, int);
#define FC_KERNEL(arch, dtype, hdim, variant) \
  {FC_KEY(arch, dtype, hdim, variant), &sm80::Bwd<FC_KEY(arch, dtype, hdim, variant)>::run},
const Entry<BwdFn> kBwd[] = {
    {KernelKey{}, nullptr},
#include "kernels/bwd_sm80.inc"
};
#undef FC_KERNEL

template <class Fn, size_t N>
std::vector<KernelKey> keys_of(const Entry<Fn> (&table)[N]) {
  std::vector<KernelKey> keys;
  for (const Entry<Fn>& e : table)
    if (e.fn != nullptr) keys.push_back(e.key);
  return keys;
}

}  // namespace

Status dispatch_fwd(const KernelKey& key, const FwdParams& params, Stream stream, const DeviceInfo& device) {
  FwdFn fn = nullptr;
  const Status s = lookup(kFwd, key, "forward", &fn);
  if (!s.ok()) return s;
  return fn(params, stream, device.max_smem_per_block_optin);
}

Status dispatch_bwd(const KernelKey& key, const BwdParams& params, Stream stream, const DeviceInfo& device) {
  BwdFn fn = nullptr;
  const Status s = lookup(kBwd, key, "backward", &fn);
  if (!s.ok()) return s;
  return fn(params, stream, device.max_smem_per_block_optin, device.sm_count);
}

const BuildInfo& current_build() {
  static const BuildInfo info = [] {
    BuildInfo b;
    b.fwd = keys_of(kFwd);
    b.bwd = keys_of(kBwd);
    b.sass = FLASHCUTE_SASS_TARGETS;
    b.ptx = FLASHCUTE_PTX_TARGETS;
    return b;
  }();
  return info;
}

namespace smoke {
Status run_smoke_mma(Arch arch, DType dtype, const SmokeMmaArgs& args) {
  SmokeFn fn = nullptr;
  const Status s = lookup(kSmokeMma, KernelKey{arch, dtype, 0, Variant::kDefault}, "smoke_mma", &fn);
  if (!s.ok()) return s;
  return fn(args);
}
}  // namespace smoke

}  // namespace flashcute
