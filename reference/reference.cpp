// The CPU reference: Problem's geometry, the LSE layout, rounding to fp16/bf16, validation of the
// problem description and the worker threads. The attention math is in attention.cpp.

#include "reference/reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "reference/detail.h"

namespace flashcute::ref {

double Problem::scale() const {
  if (softmax_scale != 0.0) return softmax_scale;
  return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

int64_t Problem::len_q(int64_t b) const {
  if (cu_seqlens_q.empty()) return seqlen_q;
  return static_cast<int64_t>(cu_seqlens_q[b + 1]) - cu_seqlens_q[b];
}

int64_t Problem::len_k(int64_t b) const {
  if (cu_seqlens_k.empty()) return seqlen_k;
  return static_cast<int64_t>(cu_seqlens_k[b + 1]) - cu_seqlens_k[b];
}

int64_t Problem::row0_q(int64_t b) const {
  return cu_seqlens_q.empty() ? 0 : cu_seqlens_q[b];
}

int64_t Problem::row0_k(int64_t b) const {
  return cu_seqlens_k.empty() ? 0 : cu_seqlens_k[b];
}

double Problem::slope(int64_t b, int64_t h) const {
  const auto n = static_cast<int64_t>(alibi_slopes.size());
  if (n == 0) return 0.0;
  if (n == heads_q) return alibi_slopes[h];
  if (n == batch * heads_q) return alibi_slopes[b * heads_q + h];
  throw std::invalid_argument("alibi_slopes: " + std::to_string(n) + " values, expected heads_q=" +
                              std::to_string(heads_q) + " or batch*heads_q=" + std::to_string(batch * heads_q));
}

int64_t lse_index(const Problem& p, int64_t b, int64_t h, int64_t i) {
  if (p.varlen()) return h * static_cast<int64_t>(p.cu_seqlens_q.back()) + p.cu_seqlens_q[b] + i;
  return (b * p.heads_q + h) * p.seqlen_q + i;
}

int64_t lse_size(const Problem& p) {
  if (p.varlen()) return p.heads_q * static_cast<int64_t>(p.cu_seqlens_q.back());
  return p.batch * p.heads_q * p.seqlen_q;
}

namespace {

// Round-half-to-even of y to an integer, independent of the floating-point environment. The
// fractional part y - floor(y) of a double is exact.
double round_half_even(double y) {
  const double fl = std::floor(y);
  const double frac = y - fl;
  if (frac > 0.5) return fl + 1.0;
  if (frac < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

}  // namespace

double round_to(DType dtype, double x) {
  int mant_bits = 0;  // explicit mantissa bits
  int emin = 0;       // exponent of the smallest normal
  double max_finite = 0.0;
  switch (dtype) {
    case DType::kFloat16:
      mant_bits = 10;
      emin = -14;
      max_finite = 65504.0;
      break;
    case DType::kBFloat16:
      mant_bits = 7;
      emin = -126;
      max_finite = std::ldexp(255.0, 120);  // (2 - 2^-7) * 2^127
      break;
    case DType::kFloat32: return static_cast<double>(static_cast<float>(x));
    case DType::kFloat64: return x;
    default: throw std::invalid_argument("round_to: dtype must be fp16, bf16, fp32 or fp64");
  }
  if (!std::isfinite(x) || x == 0.0) return x;  // NaN, +-inf and +-0 are kept
  int e = 0;
  std::frexp(x, &e);  // |x| = f * 2^e, f in [0.5, 1): floor(log2|x|) = e - 1
  // The spacing of representable values around x; below the smallest normal it is the subnormal
  // spacing, which gives gradual underflow.
  const int quantum = std::max(e - 1, emin) - mant_bits;
  const double r = std::ldexp(round_half_even(std::ldexp(x, -quantum)), quantum);
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return std::copysign(r, x);  // keeps the sign of values that underflow to zero
}

namespace {
std::atomic<int> g_num_threads{0};  // 0: hardware concurrency
}  // namespace

void set_num_threads(int n) {
  g_num_threads.store(n > 0 ? n : 0);
}

namespace detail {

namespace {
int num_threads() {
  const int n = g_num_threads.load();
  if (n > 0) return n;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

std::string str(int64_t v) {
  return std::to_string(v);
}

[[noreturn]] void fail(const char* who, const std::string& what) {
  throw std::invalid_argument(std::string("flashcute::ref::") + who + ": " + what);
}

void check_cu(const char* who, const char* name, const std::vector<int32_t>& cu, int64_t batch) {
  if (static_cast<int64_t>(cu.size()) != batch + 1) {
    fail(who, std::string(name) + " has " + str(static_cast<int64_t>(cu.size())) +
                  " entries, expected batch+1=" + str(batch + 1));
  }
  if (cu[0] < 0) fail(who, std::string(name) + "[0]=" + str(cu[0]) + " is negative");
  for (size_t b = 0; b + 1 < cu.size(); ++b) {
    if (cu[b + 1] < cu[b]) {
      fail(who, std::string(name) + " is not non-decreasing at " + str(static_cast<int64_t>(b)) + ": " + str(cu[b]) +
                    " > " + str(cu[b + 1]));
    }
  }
}
}  // namespace

void validate(const Problem& p, const char* who) {
  if (p.batch < 0) fail(who, "batch=" + str(p.batch) + " is negative");
  if (p.heads_q < 1 || p.heads_kv < 1) {
    fail(who, "heads_q=" + str(p.heads_q) + ", heads_kv=" + str(p.heads_kv) + " must be >= 1");
  }
  if (p.heads_q % p.heads_kv != 0) {
    fail(who, "heads_kv=" + str(p.heads_kv) + " does not divide heads_q=" + str(p.heads_q));
  }
  if (p.head_dim < 1) fail(who, "head_dim=" + str(p.head_dim) + " must be >= 1");
  if (p.head_dim_v < 0) fail(who, "head_dim_v=" + str(p.head_dim_v) + " is negative");
  if (p.softcap < 0.0 || std::isnan(p.softcap)) fail(who, "softcap must be >= 0");
  if (!std::isfinite(p.scale())) fail(who, "softmax_scale is not finite");
  if (p.cu_seqlens_q.empty() != p.cu_seqlens_k.empty()) {
    fail(who, "cu_seqlens_q and cu_seqlens_k must be given together (varlen) or both left empty");
  }
  if (p.varlen()) {
    check_cu(who, "cu_seqlens_q", p.cu_seqlens_q, p.batch);
    check_cu(who, "cu_seqlens_k", p.cu_seqlens_k, p.batch);
  } else if (p.seqlen_q < 0 || p.seqlen_k < 0) {
    fail(who, "seqlen_q=" + str(p.seqlen_q) + ", seqlen_k=" + str(p.seqlen_k) + " must be >= 0");
  }
  const auto n = static_cast<int64_t>(p.alibi_slopes.size());
  if (n != 0 && n != p.heads_q && n != p.batch * p.heads_q) {
    fail(who, "alibi_slopes has " + str(n) + " values, expected heads_q=" + str(p.heads_q) +
                  " or batch*heads_q=" + str(p.batch * p.heads_q));
  }
}

SeqOffsets seq_offsets(const Problem& p) {
  SeqOffsets s;
  s.q_start.assign(p.batch + 1, 0);
  s.k_start.assign(p.batch + 1, 0);
  for (int64_t b = 0; b < p.batch; ++b) {
    s.q_start[b + 1] = s.q_start[b] + p.len_q(b);
    s.k_start[b + 1] = s.k_start[b] + p.len_k(b);
  }
  return s;
}

void parallel_for(int64_t n, double work, const std::function<void(int64_t)>& fn) {
  // Below ~1e6 multiply-adds, starting threads costs more than it saves.
  constexpr double kMinWorkForThreads = 1e6;
  const int64_t threads = std::min<int64_t>(num_threads(), n);
  if (threads <= 1 || work < kMinWorkForThreads) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (int64_t t = 0; t + 1 < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace detail
}  // namespace flashcute::ref
