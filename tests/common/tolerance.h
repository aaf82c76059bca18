#pragma once
// The tolerance rule of docs/TESTING.md as a reusable checker.
//
// Three arrays of the same length are compared: `golden` (the fp64 reference), `lp` (the same math
// done in the input dtype the way an unfused implementation would: reference::forward_lowp /
// backward_lowp) and `kernel` (what is under test, read back as doubles). All rules below must hold:
//
//   parity  no non-finite kernel value where golden is finite; where golden is NaN the kernel is
//           NaN, where golden is +-inf the kernel is the same inf.
//   max     max|kernel - golden| <= R * max|lp - golden| + A
//           R = 2 (forward) or 3 (backward); A = 2 ulp of the dtype at max|golden|.
//   mean    mean|kernel - golden| <= max(1.5 * mean|lp - golden|, A_mean)
//           A_mean = 0.25 * mean_i ulp(golden_i): a quarter ulp of each element, averaged - the
//           mean error of correctly rounding a continuous value. Without it (TESTING.md's rule as
//           written) the rule would demand a bit-exact kernel wherever lp happens to be exact
//           (golden values that are dtype numbers: one visible key, zeros, small integers), and a
//           sound kernel whose fp32 math differs a little flips the rounding of a few of those.
//           It is a floor, not added like A: lp's own mean error is typically ~0.4 ulp, so adding
//           a quarter ulp would loosen the ordinary case by half again and hide small biases; as
//           a floor it only matters where lp is (nearly) exact. It is far below A (2 ulp at the
//           largest element), so a bias that the max rule lets through - every element off by a
//           little - is still caught.
//
// The error statistics run over the elements where golden is finite (parity covers the others);
// lp's statistics over those where lp is finite too (an lp that overflowed does not loosen the
// bound). ulp(x) = 2^(floor(log2|x|) - m), m = 10 (fp16) or 7 (bf16), for |x| at or above the
// smallest normal; below it, the subnormal spacing (2^-24, 2^-133).
//
// The LSE (fp32 in kernels) is checked on its own: |lse - lse_golden| <= 1e-5 * (1 + |lse_golden|),
// and rows whose golden LSE is -inf (they see no key) must be exactly -inf.
//
// Results carry a one-line message naming the worst element, its values and the bounds; callers
// append a line that reproduces the case (shape, options, seed).

#include <cstdint>
#include <string>
#include <vector>

#include "flashcute/tensor.h"

namespace flashcute::testing {

enum class Pass { kForward, kBackward };

struct ToleranceResult {
  bool ok = true;
  std::string message;  // one line, also when ok (the measured errors and bounds)
  int64_t worst = -1;   // the element that decided: the first parity failure, else max|k - g|
  double max_err = 0.0, max_bound = 0.0;
  double mean_err = 0.0, mean_bound = 0.0;
  explicit operator bool() const { return ok; }
};

// The spacing of `dtype` values at |x| (fp16 / bf16; fp32 and fp64 are accepted too).
double ulp(DType dtype, double x);

ToleranceResult check_tolerance(const std::string& name, const double* kernel, const double* golden, const double* lp,
                                int64_t n, DType dtype, Pass pass);
ToleranceResult check_tolerance(const std::string& name, const std::vector<double>& kernel,
                                const std::vector<double>& golden, const std::vector<double>& lp, DType dtype,
                                Pass pass);

ToleranceResult check_lse(const std::string& name, const double* lse, const double* golden, int64_t n);
ToleranceResult check_lse(const std::string& name, const std::vector<double>& lse, const std::vector<double>& golden);

}  // namespace flashcute::testing
