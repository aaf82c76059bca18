#include "tests/common/tolerance.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace flashcute::testing {
namespace {

std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "fp16";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat32: return "fp32";
    case DType::kFloat64: return "fp64";
    default: return "?";
  }
}

// Is the kernel's non-finite pattern right at this element? (golden finite: kernel finite;
// golden NaN: kernel NaN; golden +-inf: the same inf.)
bool parity_ok(double kernel, double golden) {
  if (std::isfinite(golden)) return std::isfinite(kernel);
  if (std::isnan(golden)) return std::isnan(kernel);
  return kernel == golden;
}

ToleranceResult parity_failure(const std::string& name, int64_t i, double kernel, double golden) {
  ToleranceResult r;
  r.ok = false;
  r.worst = i;
  r.message = format("%s: non-finite mismatch at [%lld]: kernel=%.9g golden=%.9g", name.c_str(),
                     static_cast<long long>(i), kernel, golden);
  return r;
}

}  // namespace

double ulp(DType dtype, double x) {
  int mant_bits = 0, emin = 0;
  switch (dtype) {
    case DType::kFloat16:
      mant_bits = 10;
      emin = -14;
      break;
    case DType::kBFloat16:
      mant_bits = 7;
      emin = -126;
      break;
    case DType::kFloat32:
      mant_bits = 23;
      emin = -126;
      break;
    case DType::kFloat64:
      mant_bits = 52;
      emin = -1022;
      break;
    default: throw std::invalid_argument("ulp: dtype must be a floating-point type");
  }
  const double ax = std::fabs(x);
  int e = emin;
  if (ax >= std::ldexp(1.0, emin) && std::isfinite(ax)) {
    std::frexp(ax, &e);  // ax = f * 2^e, f in [0.5, 1)
    e -= 1;              // floor(log2 ax)
  }
  return std::ldexp(1.0, e - mant_bits);
}

ToleranceResult check_tolerance(const std::string& name, const double* kernel, const double* golden, const double* lp,
                                int64_t n, DType dtype, Pass pass) {
  for (int64_t i = 0; i < n; ++i) {
    if (!parity_ok(kernel[i], golden[i])) return parity_failure(name, i, kernel[i], golden[i]);
  }
  double max_golden = 0.0, sum_ulp = 0.0;
  double max_err = 0.0, sum_err = 0.0, max_lp = 0.0, sum_lp = 0.0;
  int64_t worst = -1, worst_lp = -1, count = 0, count_lp = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(golden[i])) continue;
    ++count;
    max_golden = std::fmax(max_golden, std::fabs(golden[i]));
    sum_ulp += ulp(dtype, golden[i]);
    const double err = std::fabs(kernel[i] - golden[i]);
    sum_err += err;
    if (worst < 0 || err > max_err) {
      max_err = err;
      worst = i;
    }
    if (std::isfinite(lp[i])) {
      ++count_lp;
      const double e = std::fabs(lp[i] - golden[i]);
      sum_lp += e;
      if (worst_lp < 0 || e > max_lp) {
        max_lp = e;
        worst_lp = i;
      }
    }
  }
  const double R = pass == Pass::kForward ? 2.0 : 3.0;
  const double A = 2.0 * ulp(dtype, max_golden);
  const double mean_err = count > 0 ? sum_err / count : 0.0;
  const double mean_lp = count_lp > 0 ? sum_lp / count_lp : 0.0;
  const double A_mean = count > 0 ? 0.25 * sum_ulp / count : 0.0;

  ToleranceResult r;
  r.worst = worst;
  r.max_err = max_err;
  r.max_bound = R * max_lp + A;
  r.mean_err = mean_err;
  r.mean_bound = std::fmax(1.5 * mean_lp, A_mean);
  const bool max_ok = r.max_err <= r.max_bound;
  const bool mean_ok = r.mean_err <= r.mean_bound;
  r.ok = max_ok && mean_ok;
  const char* verdict = r.ok ? "ok" : (!max_ok && !mean_ok ? "FAIL max+mean" : (!max_ok ? "FAIL max" : "FAIL mean"));
  std::string at;
  if (worst >= 0) {
    at = format(" at [%lld] (kernel=%.9g golden=%.9g lp=%.9g)", static_cast<long long>(worst), kernel[worst],
                golden[worst], lp[worst]);
  }
  r.message = format(
      "%s (%s, %s, n=%lld): %s: max|k-g|=%.3e%s %s %.3e = %g*max|lp-g| %.3e + A %.3e (2 ulp at "
      "max|g|=%.6g); mean|k-g|=%.3e %s %.3e = max(1.5*mean|lp-g| %.3e, 0.25 mean ulp %.3e)",
      name.c_str(), dtype_name(dtype), pass == Pass::kForward ? "fwd" : "bwd", static_cast<long long>(n), verdict,
      max_err, at.c_str(), max_ok ? "<=" : ">", r.max_bound, R, max_lp, A, max_golden, mean_err, mean_ok ? "<=" : ">",
      r.mean_bound, mean_lp, A_mean);
  return r;
}

ToleranceResult check_tolerance(const std::string& name, const std::vector<double>& kernel,
                                const std::vector<double>& golden, const std::vector<double>& lp, DType dtype,
                                Pass pass) {
  if (kernel.size() != golden.size() || lp.size() != golden.size()) {
    ToleranceResult r;
    r.ok = false;
    r.message = format("%s: sizes differ: kernel %zu, golden %zu, lp %zu", name.c_str(), kernel.size(), golden.size(),
                       lp.size());
    return r;
  }
  return check_tolerance(name, kernel.data(), golden.data(), lp.data(), static_cast<int64_t>(golden.size()), dtype,
                         pass);
}

ToleranceResult check_lse(const std::string& name, const double* lse, const double* golden, int64_t n) {
  constexpr double kRel = 1e-5;
  ToleranceResult r;
  double worst_ratio = -1.0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(golden[i])) {
      // -inf: a row that sees no key must be exactly -inf (also covers NaN / +inf parity).
      if (!parity_ok(lse[i], golden[i])) {
        r = parity_failure(name, i, lse[i], golden[i]);
        r.message += golden[i] == -std::numeric_limits<double>::infinity()
                         ? " (a row that sees no key must have LSE exactly -inf)"
                         : "";
        return r;
      }
      continue;
    }
    const double err = std::fabs(lse[i] - golden[i]);
    const double bound = kRel * (1.0 + std::fabs(golden[i]));
    const double ratio = std::isnan(err) ? std::numeric_limits<double>::infinity() : err / bound;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      r.worst = i;
      r.max_err = err;
      r.max_bound = bound;
    }
  }
  r.ok = worst_ratio <= 1.0;
  if (r.worst < 0) {
    r.message = format("%s (n=%lld): ok: no finite golden LSE", name.c_str(), static_cast<long long>(n));
    return r;
  }
  r.message = format(
      "%s (n=%lld): %s: worst |lse-g|=%.3e at [%lld] (kernel=%.9g golden=%.9g) %s "
      "bound 1e-5*(1+|g|)=%.3e",
      name.c_str(), static_cast<long long>(n), r.ok ? "ok" : "FAIL", r.max_err, static_cast<long long>(r.worst),
      lse[r.worst], golden[r.worst], r.ok ? "<=" : ">", r.max_bound);
  return r;
}

ToleranceResult check_lse(const std::string& name, const std::vector<double>& lse, const std::vector<double>& golden) {
  if (lse.size() != golden.size()) {
    ToleranceResult r;
    r.ok = false;
    r.message = format("%s: sizes differ: kernel %zu, golden %zu", name.c_str(), lse.size(), golden.size());
    return r;
  }
  return check_lse(name, lse.data(), golden.data(), static_cast<int64_t>(golden.size()));
}

}  // namespace flashcute::testing
