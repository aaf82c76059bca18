#pragma once
// KernelKey: the runtime key of one compiled instantiation and, being a structural type, also its
// template argument (`template <KernelKey K> struct Family`). The manifest names keys; CMake turns
// each into a generated TU and a table entry; dispatch looks keys up at run time.

#include <cstdint>

#include "flashcute/tensor.h"

namespace flashcute {

enum class Arch : int32_t {
  kSm80 = 80,  // cp.async + ldmatrix + mma.sync: every GPU from Ampere on
  kSm90 = 90,  // TMA + wgmma, warp-specialized: Hopper (sm_90a)
};

// Variants of one family at the same (arch, dtype, head_dim); each family documents its own.
enum class Variant : int32_t {
  kDefault = 0,
};

struct KernelKey {
  Arch arch = Arch::kSm80;
  DType dtype = DType::kFloat16;
  int32_t head_dim = 0;  // head-dim bucket; 0 where the family has none
  Variant variant = Variant::kDefault;

  constexpr bool operator==(const KernelKey&) const = default;
};

const char* to_string(Arch arch);

}  // namespace flashcute
