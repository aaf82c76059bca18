#pragma once
// Maps the runtime dtype of a KernelKey to the CUTLASS element type a kernel is compiled for.

#include <cutlass/bfloat16.h>
#include <cutlass/half.h>

#include "flashcute/tensor.h"

namespace flashcute {

template <DType D>
struct ElementOf;
template <>
struct ElementOf<DType::kFloat16> {
  using type = cutlass::half_t;
};
template <>
struct ElementOf<DType::kBFloat16> {
  using type = cutlass::bfloat16_t;
};
template <DType D>
using element_t = typename ElementOf<D>::type;

}  // namespace flashcute
