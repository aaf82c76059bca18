#pragma once
// Harness of the GPU forward tests (test_fwd_grid.cpp, test_fwd_edge.cpp, test_fwd_errors.cpp).
// Header-only: tests/CMakeLists.txt makes one executable per tests/gpu/test_*.cpp.
//
// One FwdCase describes a call of flashcute::fwd through the public API only. For a case the harness
//   1. draws randn inputs (std::mt19937_64, times input_scale), rounds them to the dtype and keeps
//      both the 16-bit bits (for the GPU) and the doubles (for the oracle). Values are drawn in
//      logical order (row, head, dim) whatever the device layout, so two cases that differ only in
//      layout, stream or sampling see the same numbers;
//   2. uploads them with the requested strides. Every byte of a buffer that is not an element of
//      its tensor (padding between heads/rows/batches, and a guard before and after) is NaN: an
//      input element the kernel should never read poisons the result if it is read, and the output
//      buffer (out and lse are pre-filled with 0xFF bytes, NaN) must keep those bytes after the
//      call: the kernel must not write outside out's elements;
//   3. calls flashcute::fwd (dense or varlen overload), on the legacy default stream or on a
//      non-blocking stream, with a workspace sized by fwd_workspace_size;
//   4. computes the golden (ref::forward) and low-precision (ref::forward_lowp) results on the CPU
//      and applies the tolerance rule of TESTING.md (tests/common/tolerance.h) to out and lse, plus
//      exact checks: a row that sees no key has out exactly 0 and lse exactly -inf.
// A failure message starts with one line "REPRO: ..." that names every field of the case.
//
// Big problems: the oracle costs batch*heads*seqlen_q*seqlen_k*(d+dv) multiply-adds twice. Above
// kFullReferenceWork the harness checks a sample of rows (every q-block boundary row of the first
// (batch, head), random boundary rows of the last, random and last rows of two others) exactly as the
// full reference would: the sampled rows become the rows of a varlen reference problem with no mask
// whose sequences hold exactly the keys those rows see (rows that see the same keys share a
// sequence). The softmax of a row depends only on its visible keys (in order) and the scale/softcap,
// so golden and lp are the same computation as in the full problem. ALiBi's bias depends on the
// distance to the diagonal, which a one-row sequence puts at its last key: that is only right when
// the row's last visible key is its diagonal (causal, or window_right 0), and the harness refuses
// other ALiBi cases in sampled mode. Rows not sampled are still checked cheaply: empty rows exactly
// 0 / -inf, all others finite and within max|v|.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "common/mask.h"
#include "flashcute/flashcute.h"
#include "gpu_env.h"
#include "reference/numeric.h"
#include "reference/reference.h"
#include "tests/common/tolerance.h"

namespace flashcute {
// GoogleTest prints backend parameters with this (test listings, failures).
inline void PrintTo(Backend b, std::ostream* os) {
  *os << to_string(b);
}
}  // namespace flashcute

namespace flashcute::testing {

// ------------------------------------------------------------------------------------------------
// CUDA errors inside harness functions throw (GoogleTest reports an exception as a test failure);
// tests use FC_CUDA_CHECK from gpu_env.h directly.
#define FC_HARNESS_CUDA(expr)                                                               \
  do {                                                                                      \
    const cudaError_t fc_e_ = (expr);                                                       \
    if (fc_e_ != cudaSuccess) {                                                             \
      throw std::runtime_error(std::string(#expr) + ": " + cudaGetErrorName(fc_e_) + " (" + \
                               cudaGetErrorString(fc_e_) + ")");                            \
    }                                                                                       \
  } while (0)

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr uint16_t kNaNBits16 = 0xFFFFu;  // NaN in both fp16 and bf16 (what 0xFF bytes give)
inline constexpr int64_t kGuardElems = 128;      // guard before and after every buffer (256 bytes)
// Above this many multiply-adds (batch*heads_q*seqlen_q*seqlen_k*(d+dv)) the reference is sampled.
inline constexpr double kFullReferenceWork = 5e9;

// A device allocation freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { allocate(bytes); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  void allocate(size_t bytes) {
    reset();
    bytes_ = bytes;
    if (bytes > 0) FC_HARNESS_CUDA(cudaMalloc(&ptr_, bytes));
  }
  void reset() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A non-blocking CUDA stream destroyed on scope exit (or the legacy default stream).
class TestStream {
 public:
  explicit TestStream(bool non_blocking) {
    if (non_blocking) FC_HARNESS_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  ~TestStream() {
    if (s_ != nullptr) cudaStreamDestroy(s_);
  }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  cudaStream_t get() const { return s_; }
  Stream api() const { return reinterpret_cast<Stream>(s_); }

 private:
  cudaStream_t s_ = nullptr;
};

// ------------------------------------------------------------------------------------------------
// The case description.

enum class Layout {
  kContiguous,  // (batch, seq, heads, dim) row-major (varlen: (total, heads, dim))
  kPadded,      // a slice of a bigger tensor: head stride dim+8, row stride heads*(dim+8)+16, batch +32
  kHeadMajor,   // (batch, heads, seq, dim) in memory, seen through (batch, seq, heads, dim), +8 padding
};
enum class Alibi { kNone, kPerHead, kPerBatchHead };
enum class StreamKind { kLegacyDefault, kNonBlocking };
enum class Sampling { kAuto, kFull, kSampled };

inline const char* to_string(Layout l) {
  switch (l) {
    case Layout::kContiguous: return "contig";
    case Layout::kPadded: return "padded";
    case Layout::kHeadMajor: return "headmajor";
  }
  return "?";
}
inline const char* to_string(Alibi a) {
  switch (a) {
    case Alibi::kNone: return "none";
    case Alibi::kPerHead: return "per_head";
    case Alibi::kPerBatchHead: return "per_batch_head";
  }
  return "?";
}
inline const char* dtype_str(DType t) {
  return t == DType::kFloat16 ? "fp16" : t == DType::kBFloat16 ? "bf16" : "other";
}

// The backend of the running test: set by OnBackend fixtures for their test's duration; a case whose
// own backend is kAuto runs on this one.
inline Backend& ambient_backend() {
  static Backend b = Backend::kAuto;
  return b;
}

struct FwdCase {
  DType dtype = DType::kBFloat16;
  int64_t batch = 1;  // varlen: derived from cu_seqlens (size - 1)
  int64_t seqlen_q = 1;
  int64_t seqlen_k = 1;
  int64_t heads_q = 1;
  int64_t heads_kv = 1;
  int64_t d = 128;
  int64_t dv = 0;  // 0: same as d
  bool causal = false;
  int64_t window_left = -1;
  int64_t window_right = -1;
  float softcap = 0.0f;
  std::optional<float> scale;  // empty: the default 1/sqrt(d)
  Alibi alibi = Alibi::kNone;
  // Varlen when non-empty (both): batch+1 offsets each; total = back().
  std::vector<int32_t> cu_seqlens_q, cu_seqlens_k;
  int64_t max_seqlen_q = 0, max_seqlen_k = 0;  // varlen; 0: the true maximum
  bool pass_host_cu = true;                    // give the optional host copies of cu_seqlens
  Layout layout_q = Layout::kContiguous, layout_k = Layout::kContiguous, layout_v = Layout::kContiguous,
         layout_out = Layout::kContiguous;
  double input_scale = 1.0;
  uint64_t seed = 1;
  StreamKind stream = StreamKind::kLegacyDefault;
  bool with_lse = true;
  Sampling sampling = Sampling::kAuto;
  // Which path runs the case; kAuto: the ambient backend of the running test (see OnBackend), which
  // is itself kAuto outside backend-parameterized tests.
  Backend backend = Backend::kAuto;

  bool varlen() const { return !cu_seqlens_q.empty(); }
  Backend effective_backend() const { return backend != Backend::kAuto ? backend : ambient_backend(); }
  int64_t head_dim_v() const { return dv > 0 ? dv : d; }
  int64_t nbatch() const { return varlen() ? static_cast<int64_t>(cu_seqlens_q.size()) - 1 : batch; }
  int64_t rows_q() const { return varlen() ? cu_seqlens_q.back() : batch * seqlen_q; }
  int64_t rows_k() const { return varlen() ? cu_seqlens_k.back() : batch * seqlen_k; }
  int64_t len_q(int64_t b) const { return varlen() ? cu_seqlens_q[b + 1] - cu_seqlens_q[b] : seqlen_q; }
  int64_t len_k(int64_t b) const { return varlen() ? cu_seqlens_k[b + 1] - cu_seqlens_k[b] : seqlen_k; }
  int64_t row0_q(int64_t b) const { return varlen() ? cu_seqlens_q[b] : b * seqlen_q; }
  int64_t row0_k(int64_t b) const { return varlen() ? cu_seqlens_k[b] : b * seqlen_k; }
  int64_t true_max_q() const {
    int64_t m = 0;
    for (int64_t b = 0; b < nbatch(); ++b) m = std::max(m, len_q(b));
    return m;
  }
  int64_t true_max_k() const {
    int64_t m = 0;
    for (int64_t b = 0; b < nbatch(); ++b) m = std::max(m, len_k(b));
    return m;
  }
  void set_layouts(Layout l) { layout_q = layout_k = layout_v = layout_out = l; }
  double work() const {
    double w = 0;
    for (int64_t b = 0; b < nbatch(); ++b) w += static_cast<double>(len_q(b)) * static_cast<double>(len_k(b));
    return w * static_cast<double>(heads_q) * static_cast<double>(d + head_dim_v());
  }

  // One line naming every field: enough to rebuild the case.
  std::string str() const {
    std::ostringstream os;
    os << "dtype=" << dtype_str(dtype);
    if (varlen()) {
      os << " varlen cu_seqlens_q=[";
      for (size_t i = 0; i < cu_seqlens_q.size(); ++i) os << (i ? "," : "") << cu_seqlens_q[i];
      os << "] cu_seqlens_k=[";
      for (size_t i = 0; i < cu_seqlens_k.size(); ++i) os << (i ? "," : "") << cu_seqlens_k[i];
      os << "] max_seqlen_q=" << (max_seqlen_q > 0 ? max_seqlen_q : true_max_q())
         << " max_seqlen_k=" << (max_seqlen_k > 0 ? max_seqlen_k : true_max_k())
         << " host_cu=" << (pass_host_cu ? 1 : 0);
    } else {
      os << " batch=" << batch << " seqlen_q=" << seqlen_q << " seqlen_k=" << seqlen_k;
    }
    os << " heads_q=" << heads_q << " heads_kv=" << heads_kv << " d=" << d << " dv=" << head_dim_v()
       << " causal=" << (causal ? 1 : 0) << " window=(" << window_left << "," << window_right << ")"
       << " softcap=" << softcap << " scale=";
    if (scale) {
      os << *scale;
    } else {
      os << "default";
    }
    os << " alibi=" << to_string(alibi) << " layout(q,k,v,out)=" << to_string(layout_q) << "," << to_string(layout_k)
       << "," << to_string(layout_v) << "," << to_string(layout_out) << " input_scale=x" << input_scale
       << " seed=" << seed << " stream=" << (stream == StreamKind::kNonBlocking ? "non_blocking" : "legacy_default")
       << " lse=" << (with_lse ? 1 : 0) << " backend=" << to_string(effective_backend())
       << " sampling="
       << (sampling == Sampling::kAuto   ? "auto"
           : sampling == Sampling::kFull ? "full"
                                         : "sampled");
    return os.str();
  }

  // A readable test-name fragment ([A-Za-z0-9_] only).
  std::string name() const {
    std::ostringstream os;
    os << dtype_str(dtype);
    if (varlen()) {
      os << "_varlen" << nbatch() << "_tq" << rows_q() << "_tk" << rows_k();
    } else {
      os << "_b" << batch << "_q" << seqlen_q << "_k" << seqlen_k;
    }
    os << "_h" << heads_q << "x" << heads_kv << "_d" << d;
    if (dv > 0 && dv != d) os << "_dv" << dv;
    if (causal) os << "_causal";
    if (window_left >= 0 || window_right >= 0) {
      os << "_win" << (window_left < 0 ? std::string("inf") : std::to_string(window_left)) << "_"
         << (window_right < 0 ? std::string("inf") : std::to_string(window_right));
    }
    if (softcap > 0) os << "_cap" << static_cast<int>(softcap);
    if (scale) os << "_scale" << static_cast<int>(std::lround(*scale * 1000)) << "m";
    if (alibi == Alibi::kPerHead) os << "_alibiH";
    if (alibi == Alibi::kPerBatchHead) os << "_alibiBH";
    if (layout_q != Layout::kContiguous || layout_k != Layout::kContiguous || layout_v != Layout::kContiguous ||
        layout_out != Layout::kContiguous) {
      os << "_L" << to_string(layout_q)[0] << to_string(layout_k)[0] << to_string(layout_v)[0]
         << to_string(layout_out)[0];
    }
    if (input_scale != 1.0) os << "_x" << static_cast<int>(input_scale);
    if (stream == StreamKind::kNonBlocking) os << "_stream";
    if (!with_lse) os << "_nolse";
    if (backend != Backend::kAuto) os << "_" << to_string(backend);
    return os.str();
  }
};

// GoogleTest prints parameters with this (test listings, failures).
inline void PrintTo(const FwdCase& c, std::ostream* os) {
  *os << c.str();
}

// ------------------------------------------------------------------------------------------------
// Host inputs.

// A tensor in logical order (rows, heads, dim): row = b * seqlen + s (dense) or the packed row.
struct HostTensor {
  int64_t rows = 0, heads = 0, dim = 0;
  std::vector<uint16_t> bits;
  std::vector<double> vals;

  int64_t index(int64_t row, int64_t h, int64_t c = 0) const { return (row * heads + h) * dim + c; }
  const double* row_ptr(int64_t row, int64_t h) const { return vals.data() + index(row, h); }
  void resize(int64_t r, int64_t h, int64_t d) {
    rows = r;
    heads = h;
    dim = d;
    bits.assign(static_cast<size_t>(r * h * d), 0);
    vals.assign(static_cast<size_t>(r * h * d), 0.0);
  }
  void set(DType dtype, int64_t i, double x) {
    bits[i] = numeric::to_bits(dtype, static_cast<float>(x));
    vals[i] = numeric::from_bits(dtype, bits[i]);
  }
  void set_bits(DType dtype, int64_t i, uint16_t b) {
    bits[i] = b;
    vals[i] = numeric::from_bits(dtype, b);
  }
};

struct FwdInputs {
  HostTensor q, k, v;
  std::vector<float> alibi;  // heads_q (per head) or batch*heads_q (per batch x head) values
};

inline void fill_randn(HostTensor& t, DType dtype, double scale, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  for (size_t i = 0; i < t.bits.size(); ++i) t.set(dtype, static_cast<int64_t>(i), normal(rng) * scale);
}

inline std::vector<float> alibi_slopes(const FwdCase& c) {
  std::vector<float> s;
  if (c.alibi == Alibi::kNone) return s;
  // The usual geometric slopes 2^(-8(h+1)/H); per batch x head they also vary with the batch.
  const int64_t nb = c.alibi == Alibi::kPerBatchHead ? c.nbatch() : 1;
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t h = 0; h < c.heads_q; ++h) {
      const double base = std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(c.heads_q));
      s.push_back(static_cast<float>(base * (1.0 + 0.75 * static_cast<double>(b) / static_cast<double>(nb))));
    }
  }
  return s;
}

inline FwdInputs make_inputs(const FwdCase& c) {
  FwdInputs in;
  std::mt19937_64 rng(c.seed);
  in.q.resize(c.rows_q(), c.heads_q, c.d);
  in.k.resize(c.rows_k(), c.heads_kv, c.d);
  in.v.resize(c.rows_k(), c.heads_kv, c.head_dim_v());
  fill_randn(in.q, c.dtype, c.input_scale, rng);
  fill_randn(in.k, c.dtype, c.input_scale, rng);
  fill_randn(in.v, c.dtype, c.input_scale, rng);
  in.alibi = alibi_slopes(c);
  return in;
}

// ------------------------------------------------------------------------------------------------
// Device layouts.

// Strides (in elements) of one tensor on the device, and the element offsets they give.
struct DeviceLayout {
  bool varlen = false;
  int64_t batch = 0, seq = 0, heads = 0, dim = 0;  // varlen: batch 1, seq = total
  int64_t sb = 0, sr = 0, sh = 0;
  int64_t span = 0;  // elements from the first to one past the last element (0 when empty)

  int64_t offset(int64_t row, int64_t h) const {  // row in logical order
    if (varlen || seq == 0) return row * sr + h * sh;
    return (row / seq) * sb + (row % seq) * sr + h * sh;
  }
  TensorDesc desc(void* data, DType dtype) const {
    TensorDesc t;
    t.data = data;
    t.dtype = dtype;
    t.device_type = DeviceType::kCUDA;
    t.device_index = 0;
    if (varlen) {
      t.rank = 3;
      t.shape[0] = seq;
      t.shape[1] = heads;
      t.shape[2] = dim;
      t.stride[0] = sr;
      t.stride[1] = sh;
      t.stride[2] = 1;
    } else {
      t.rank = 4;
      t.shape[0] = batch;
      t.shape[1] = seq;
      t.shape[2] = heads;
      t.shape[3] = dim;
      t.stride[0] = sb;
      t.stride[1] = sr;
      t.stride[2] = sh;
      t.stride[3] = 1;
    }
    return t;
  }
};

inline DeviceLayout make_layout(Layout kind, bool varlen, int64_t batch, int64_t seq, int64_t heads, int64_t dim) {
  DeviceLayout l;
  l.varlen = varlen;
  l.batch = varlen ? 1 : batch;
  l.seq = seq;
  l.heads = heads;
  l.dim = dim;
  switch (kind) {
    case Layout::kContiguous:
      l.sh = dim;
      l.sr = heads * dim;
      l.sb = seq * l.sr;
      break;
    case Layout::kPadded:
      l.sh = dim + 8;
      l.sr = heads * l.sh + 16;
      l.sb = seq * l.sr + 32;
      break;
    case Layout::kHeadMajor:
      l.sr = dim;
      l.sh = seq * dim + 8;
      l.sb = heads * l.sh + 8;
      break;
  }
  if (l.batch > 0 && seq > 0 && heads > 0 && dim > 0) {
    l.span = (l.batch - 1) * l.sb + (seq - 1) * l.sr + (heads - 1) * l.sh + dim;
  }
  return l;
}

// A 16-bit tensor on the device: guard + span + guard elements; data points past the front guard.
struct DeviceTensor16 {
  DeviceLayout layout;
  DeviceBuffer buf;
  int64_t total_elems = 0;
  void* data() const { return buf.as<uint16_t>() + kGuardElems; }
};

// Uploads `t` (logical order) into the layout; every non-element position holds NaN.
inline DeviceTensor16 upload(const HostTensor& t, const DeviceLayout& layout) {
  DeviceTensor16 d;
  d.layout = layout;
  d.total_elems = 2 * kGuardElems + layout.span;
  std::vector<uint16_t> phys(static_cast<size_t>(d.total_elems), kNaNBits16);
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t h = 0; h < t.heads; ++h) {
      std::memcpy(&phys[kGuardElems + layout.offset(r, h)], &t.bits[t.index(r, h)], t.dim * sizeof(uint16_t));
    }
  }
  d.buf.allocate(phys.size() * sizeof(uint16_t));
  FC_HARNESS_CUDA(cudaMemcpy(d.buf.get(), phys.data(), phys.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  return d;
}

// An output tensor: every byte 0xFF (NaN) before the call.
inline DeviceTensor16 alloc_output(const DeviceLayout& layout) {
  DeviceTensor16 d;
  d.layout = layout;
  d.total_elems = 2 * kGuardElems + layout.span;
  d.buf.allocate(d.total_elems * sizeof(uint16_t));
  FC_HARNESS_CUDA(cudaMemset(d.buf.get(), 0xFF, d.total_elems * sizeof(uint16_t)));
  return d;
}

// Reads an output back: the elements in logical order, and whether every other position (padding,
// guards) still holds the 0xFF fill. `untouched` (optional) says whether the elements do too.
struct ReadBack {
  std::vector<uint16_t> elems;
  std::string outside_written;  // empty: nothing outside the elements was written
  bool all_untouched = true;    // elements too still 0xFFFF
};

inline ReadBack read_back(const DeviceTensor16& d, int64_t rows, int64_t heads, int64_t dim) {
  ReadBack rb;
  std::vector<uint16_t> phys(static_cast<size_t>(d.total_elems));
  FC_HARNESS_CUDA(cudaMemcpy(phys.data(), d.buf.get(), phys.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  std::vector<uint8_t> is_elem(phys.size(), 0);
  rb.elems.resize(static_cast<size_t>(rows * heads * dim));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t off = kGuardElems + d.layout.offset(r, h);
      std::memcpy(&rb.elems[(r * heads + h) * dim], &phys[off], dim * sizeof(uint16_t));
      std::memset(&is_elem[off], 1, dim);
    }
  }
  for (size_t i = 0; i < phys.size(); ++i) {
    if (phys[i] == kNaNBits16) continue;
    if (is_elem[i]) {
      rb.all_untouched = false;
      continue;
    }
    if (rb.outside_written.empty()) {
      std::ostringstream os;
      const int64_t pos = static_cast<int64_t>(i) - kGuardElems;
      os << "wrote outside the tensor's elements: buffer position " << pos
         << (pos < 0                ? " (front guard)"
             : pos >= d.layout.span ? " (back guard)"
                                    : " (padding between elements)")
         << " holds 0x" << std::hex << phys[i] << std::dec << ", expected the 0xFFFF fill";
      rb.outside_written = os.str();
    }
  }
  return rb;
}

// An fp32 buffer with guards, pre-filled with 0xFF bytes.
struct DeviceFloats {
  DeviceBuffer buf;
  int64_t n = 0;
  float* data() const { return buf.as<float>() + kGuardElems; }
};

inline DeviceFloats alloc_floats_nan(int64_t n) {
  DeviceFloats d;
  d.n = n;
  d.buf.allocate((n + 2 * kGuardElems) * sizeof(float));
  FC_HARNESS_CUDA(cudaMemset(d.buf.get(), 0xFF, d.buf.bytes()));
  return d;
}

inline std::vector<float> read_floats(const DeviceFloats& d, std::string* outside_written, bool* all_untouched) {
  std::vector<uint32_t> phys(static_cast<size_t>(d.n + 2 * kGuardElems));
  FC_HARNESS_CUDA(cudaMemcpy(phys.data(), d.buf.get(), phys.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  std::vector<float> out(static_cast<size_t>(d.n));
  if (all_untouched) *all_untouched = true;
  for (size_t i = 0; i < phys.size(); ++i) {
    const int64_t pos = static_cast<int64_t>(i) - kGuardElems;
    const bool elem = pos >= 0 && pos < d.n;
    if (elem) {
      std::memcpy(&out[pos], &phys[i], sizeof(float));
      if (phys[i] != 0xFFFFFFFFu && all_untouched) *all_untouched = false;
    } else if (phys[i] != 0xFFFFFFFFu && outside_written && outside_written->empty()) {
      *outside_written = "wrote outside lse's elements: guard position " + std::to_string(pos);
    }
  }
  return out;
}

template <class T>
inline DeviceBuffer upload_vector(const std::vector<T>& v) {
  DeviceBuffer b(std::max<size_t>(v.size(), 1) * sizeof(T));
  if (!v.empty()) FC_HARNESS_CUDA(cudaMemcpy(b.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return b;
}

// ------------------------------------------------------------------------------------------------
// Running the kernel.

struct GpuResult {
  Status status;
  std::vector<uint16_t> out;    // logical (rows_q, heads_q, dv)
  std::vector<float> lse;       // the lse layout: dense (batch, heads_q, seqlen_q), varlen (heads_q, total_q)
  std::string outside_written;  // non-empty: the kernel wrote outside out's / lse's elements
  bool out_untouched = true;    // no element of out or lse was written (expected on error)
  float call_ms = 0;            // host time of the fwd() call itself
};

// Everything a call needs on the device; kept alive for repeated calls on the same buffers.
struct FwdDeviceState {
  DeviceTensor16 q, k, v, out;
  DeviceFloats lse;
  DeviceBuffer alibi, cu_q, cu_k, workspace;
  std::vector<int32_t> cu_q_host, cu_k_host;
  FwdArgs dense;
  VarlenFwdArgs var;
  bool varlen = false;
};

inline AttentionOptions make_options(const FwdCase& c) {
  AttentionOptions o;
  o.softmax_scale = c.scale;
  o.causal = c.causal;
  o.window_left = c.window_left;
  o.window_right = c.window_right;
  o.softcap = c.softcap;
  o.backend = c.effective_backend();
  return o;
}

// Uploads the inputs and fills the argument structs (stream and workspace not yet set).
inline void prepare_device(const FwdCase& c, const FwdInputs& in, FwdDeviceState* st) {
  const bool vl = c.varlen();
  st->varlen = vl;
  const int64_t B = c.nbatch();
  const int64_t sq = vl ? c.rows_q() : c.seqlen_q;
  const int64_t sk = vl ? c.rows_k() : c.seqlen_k;
  const int64_t dv = c.head_dim_v();
  st->q = upload(in.q, make_layout(c.layout_q, vl, B, sq, c.heads_q, c.d));
  st->k = upload(in.k, make_layout(c.layout_k, vl, B, sk, c.heads_kv, c.d));
  st->v = upload(in.v, make_layout(c.layout_v, vl, B, sk, c.heads_kv, dv));
  st->out = alloc_output(make_layout(c.layout_out, vl, B, sq, c.heads_q, dv));
  const int64_t lse_n = c.heads_q * c.rows_q();
  st->lse = alloc_floats_nan(lse_n);

  AttentionOptions opt = make_options(c);
  if (c.alibi != Alibi::kNone) {
    st->alibi = upload_vector(in.alibi);
    opt.alibi_slopes = c.alibi == Alibi::kPerHead ? make_tensor_1d(st->alibi.get(), DType::kFloat32, c.heads_q)
                                                  : make_tensor_2d(st->alibi.get(), DType::kFloat32, B, c.heads_q);
  }
  const DType dt = c.dtype;
  if (!vl) {
    FwdArgs& a = st->dense;
    a = FwdArgs{};
    a.q = st->q.layout.desc(st->q.data(), dt);
    a.k = st->k.layout.desc(st->k.data(), dt);
    a.v = st->v.layout.desc(st->v.data(), dt);
    a.out = st->out.layout.desc(st->out.data(), dt);
    if (c.with_lse) a.lse = make_tensor_3d(st->lse.data(), DType::kFloat32, B, c.heads_q, c.seqlen_q);
    a.options = opt;
  } else {
    VarlenFwdArgs& a = st->var;
    a = VarlenFwdArgs{};
    a.q = st->q.layout.desc(st->q.data(), dt);
    a.k = st->k.layout.desc(st->k.data(), dt);
    a.v = st->v.layout.desc(st->v.data(), dt);
    a.out = st->out.layout.desc(st->out.data(), dt);
    if (c.with_lse) a.lse = make_tensor_2d(st->lse.data(), DType::kFloat32, c.heads_q, c.rows_q());
    st->cu_q_host = c.cu_seqlens_q;
    st->cu_k_host = c.cu_seqlens_k;
    st->cu_q = upload_vector(c.cu_seqlens_q);
    st->cu_k = upload_vector(c.cu_seqlens_k);
    a.cu_seqlens_q = make_tensor_1d(st->cu_q.get(), DType::kInt32, B + 1);
    a.cu_seqlens_k = make_tensor_1d(st->cu_k.get(), DType::kInt32, B + 1);
    a.max_seqlen_q = c.max_seqlen_q > 0 ? c.max_seqlen_q : c.true_max_q();
    a.max_seqlen_k = c.max_seqlen_k > 0 ? c.max_seqlen_k : c.true_max_k();
    if (c.pass_host_cu) {
      a.cu_seqlens_q_host = st->cu_q_host.data();
      a.cu_seqlens_k_host = st->cu_k_host.data();
    }
    a.options = opt;
  }
  // Workspace sized by the API, filled with 0xFF bytes (the kernels may not expect it zeroed);
  // cudaMalloc is 256-byte aligned.
  size_t ws = 0;
  const Status s = vl ? fwd_workspace_size(st->var, &ws) : fwd_workspace_size(st->dense, &ws);
  if (s.ok() && ws > 0) {
    st->workspace.allocate(ws);
    FC_HARNESS_CUDA(cudaMemset(st->workspace.get(), 0xFF, ws));
  }
  const Workspace w{st->workspace.get(), st->workspace.bytes()};
  st->dense.workspace = w;
  st->var.workspace = w;
  // Uploads and fills ran on the legacy stream, which a non-blocking stream does not wait for.
  FC_HARNESS_CUDA(cudaDeviceSynchronize());
}

// One call on `stream`, then a synchronize of that stream and a check for a CUDA error.
inline Status call_fwd(FwdDeviceState* st, Stream stream, float* host_ms = nullptr) {
  st->dense.stream = stream;
  st->var.stream = stream;
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = st->varlen ? fwd(st->var) : fwd(st->dense);
  const auto t1 = std::chrono::steady_clock::now();
  if (host_ms) *host_ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
  FC_HARNESS_CUDA(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)));
  FC_HARNESS_CUDA(cudaGetLastError());
  return s;
}

inline GpuResult read_result(const FwdCase& c, const FwdDeviceState& st) {
  GpuResult g;
  ReadBack rb = read_back(st.out, c.rows_q(), c.heads_q, c.head_dim_v());
  g.out = std::move(rb.elems);
  g.outside_written = rb.outside_written;
  bool lse_untouched = true;
  std::string lse_outside;
  g.lse = read_floats(st.lse, &lse_outside, &lse_untouched);
  if (g.outside_written.empty()) g.outside_written = lse_outside;
  if (!c.with_lse && !lse_untouched && g.outside_written.empty()) {
    g.outside_written = "lse was not given but its (unpassed) buffer was written";
  }
  g.out_untouched = rb.all_untouched && lse_untouched;
  return g;
}

// Uploads, calls fwd once on the case's stream and reads everything back.
inline GpuResult run_gpu(const FwdCase& c, const FwdInputs& in) {
  FwdDeviceState st;
  prepare_device(c, in, &st);
  TestStream stream(c.stream == StreamKind::kNonBlocking);
  float ms = 0;
  const Status s = call_fwd(&st, stream.api(), &ms);
  GpuResult g = read_result(c, st);
  g.status = s;
  g.call_ms = ms;
  return g;
}

// ------------------------------------------------------------------------------------------------
// The oracle.

inline void init_reference_threads() {
  static const bool once = [] {
    const unsigned hw = std::thread::hardware_concurrency();
    ref::set_num_threads(hw > 0 ? static_cast<int>(hw) : 1);
    return true;
  }();
  (void)once;
}

inline ref::Problem make_problem(const FwdCase& c, const FwdInputs& in) {
  ref::Problem p;
  p.batch = c.nbatch();
  p.seqlen_q = c.varlen() ? 0 : c.seqlen_q;
  p.seqlen_k = c.varlen() ? 0 : c.seqlen_k;
  p.heads_q = c.heads_q;
  p.heads_kv = c.heads_kv;
  p.head_dim = c.d;
  p.head_dim_v = c.head_dim_v();
  p.softmax_scale = c.scale ? static_cast<double>(*c.scale) : 0.0;
  p.causal = c.causal;
  p.window_left = c.window_left;
  p.window_right = c.window_right;
  p.softcap = c.softcap;
  for (float s : in.alibi) p.alibi_slopes.push_back(s);
  p.cu_seqlens_q = c.cu_seqlens_q;
  p.cu_seqlens_k = c.cu_seqlens_k;
  return p;
}

inline ref::ConstView view_of(const HostTensor& t, const FwdCase& c, int64_t seqlen) {
  ref::ConstView v;
  v.data = t.vals.data();
  v.stride_head = t.dim;
  v.stride_row = t.heads * t.dim;
  v.stride_batch = c.varlen() ? 0 : seqlen * v.stride_row;
  return v;
}

struct RowSample {
  int64_t b = 0, h = 0, i = 0;  // batch, q head, row within sequence b
};

// Golden and lp results, either of the whole problem (full) or of sampled rows.
struct RefResult {
  bool sampled = false;
  std::vector<RowSample> samples;          // sampled mode only
  std::vector<double> out_golden, out_lp;  // full: logical (rows_q, heads_q, dv); sampled: (n, dv)
  std::vector<double> lse_golden, lse_lp;  // full: the lse layout; sampled: (n)
};

// Row accessors for the sampled reference: pointers to d (or dv) doubles.
using QRowFn = std::function<const double*(int64_t b, int64_t i, int64_t h)>;
using KRowFn = std::function<const double*(int64_t b, int64_t j, int64_t hk)>;

// Golden and lp of sampled rows of a problem (geometry, mask, scale, softcap, ALiBi from `p`; p's
// cu_seqlens, when given, only supply the lengths). See the header comment for why this is exact.
inline void reference_rows(const ref::Problem& p, DType dtype, const std::vector<RowSample>& samples,
                           const QRowFn& qrow, const KRowFn& krow, const KRowFn& vrow, RefResult* r) {
  init_reference_threads();
  const int64_t n = static_cast<int64_t>(samples.size());
  const int64_t d = p.head_dim, dv = p.dv(), group = p.heads_q / p.heads_kv;
  const Window w = make_window(p.causal, p.window_left, p.window_right);
  // Samples that see the same keys (same batch, kv head and visible range) and have no ALiBi bias
  // share one unmasked sub-sequence: every row of it sees all of its keys, exactly their own set.
  // A row with ALiBi gets a sequence of its own (the bias puts its diagonal at the last key).
  struct Group {
    int64_t b = 0, hk = 0, jb = 0, je = 0;
    double slope = 0.0;
    std::vector<int64_t> members;
  };
  std::vector<Group> groups;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, size_t> index;
  for (int64_t x = 0; x < n; ++x) {
    const RowSample& rs = samples[x];
    const int64_t lq = p.len_q(rs.b), lk = p.len_k(rs.b);
    int64_t jb = 0, je = 0;
    visible_key_range(rs.i, lq, lk, w, &jb, &je);
    if (je < jb) je = jb;
    const double slope = p.slope(rs.b, rs.h);
    if (slope != 0.0 && je > jb && je - 1 != rs.i + lk - lq) {
      throw std::logic_error(
          "sampled reference: ALiBi needs each row's last visible key on its diagonal (causal or "
          "window_right=0); use Sampling::kFull for this case");
    }
    const int64_t hk = rs.h / group;
    if (slope == 0.0) {
      const auto key = std::make_tuple(rs.b, hk, jb, je);
      const auto it = index.find(key);
      if (it != index.end()) {
        groups[it->second].members.push_back(x);
        continue;
      }
      index.emplace(key, groups.size());
    }
    groups.push_back(Group{rs.b, hk, jb, je, slope, {x}});
  }
  ref::Problem s;
  s.batch = static_cast<int64_t>(groups.size());
  s.heads_q = 1;
  s.heads_kv = 1;
  s.head_dim = d;
  s.head_dim_v = dv;
  s.softmax_scale = p.scale();
  s.softcap = p.softcap;
  s.cu_seqlens_q.push_back(0);
  s.cu_seqlens_k.push_back(0);
  for (const Group& g : groups) {
    if (!p.alibi_slopes.empty()) s.alibi_slopes.push_back(g.slope);
    s.cu_seqlens_q.push_back(static_cast<int32_t>(s.cu_seqlens_q.back() + static_cast<int64_t>(g.members.size())));
    s.cu_seqlens_k.push_back(static_cast<int32_t>(s.cu_seqlens_k.back() + (g.je - g.jb)));
  }
  const int64_t total_k = s.cu_seqlens_k.back();
  std::vector<double> q(static_cast<size_t>(n * d)), k(static_cast<size_t>(total_k * d)),
      v(static_cast<size_t>(total_k * dv));
  std::vector<int64_t> sub_row(static_cast<size_t>(n));  // sample -> row of the sub-problem
  int64_t qr = 0, kr = 0;
  for (const Group& g : groups) {
    for (int64_t x : g.members) {
      const RowSample& rs = samples[x];
      std::memcpy(&q[qr * d], qrow(rs.b, rs.i, rs.h), d * sizeof(double));
      sub_row[x] = qr++;
    }
    for (int64_t j = g.jb; j < g.je; ++j, ++kr) {
      std::memcpy(&k[kr * d], krow(g.b, j, g.hk), d * sizeof(double));
      std::memcpy(&v[kr * dv], vrow(g.b, j, g.hk), dv * sizeof(double));
    }
  }
  const ref::ConstView qv{q.data(), 0, d, d}, kv{k.data(), 0, d, d}, vv{v.data(), 0, dv, dv};
  std::vector<double> og_rows(static_cast<size_t>(n * dv)), ol_rows(og_rows.size()), lg(static_cast<size_t>(n)),
      ll(static_cast<size_t>(n));
  const ref::MutView og{og_rows.data(), 0, dv, dv}, ol{ol_rows.data(), 0, dv, dv};
  ref::forward(s, qv, kv, vv, og, lg.data());
  ref::forward_lowp(dtype, s, qv, kv, vv, ol, ll.data());
  // Back to the order of `samples` (the sub-problem's lse layout is (1, total) = its row order).
  r->sampled = true;
  r->samples = samples;
  r->out_golden.resize(static_cast<size_t>(n * dv));
  r->out_lp.resize(static_cast<size_t>(n * dv));
  r->lse_golden.resize(static_cast<size_t>(n));
  r->lse_lp.resize(static_cast<size_t>(n));
  for (int64_t x = 0; x < n; ++x) {
    const int64_t sr = sub_row[x];
    std::copy_n(og_rows.begin() + sr * dv, dv, r->out_golden.begin() + x * dv);
    std::copy_n(ol_rows.begin() + sr * dv, dv, r->out_lp.begin() + x * dv);
    r->lse_golden[x] = lg[sr];
    r->lse_lp[x] = ll[sr];
  }
}

// Rows to check in sampled mode: for the first (batch, head), every q-block boundary row (multiples
// of 64 and the row before: the boundaries of both block sizes) and the first two and last two rows;
// for the last (batch, head), its first and last rows and 12 random boundary pairs; for two random
// (batch, head) pairs, 8 random rows and the last row.
inline std::vector<RowSample> choose_samples(const FwdCase& c) {
  std::vector<RowSample> out;
  std::mt19937_64 rng(c.seed ^ 0x5a5a5a5aULL);
  const int64_t H = c.heads_q;
  std::vector<int64_t> nonempty;  // batches with query rows (varlen sequences may be empty)
  for (int64_t b = 0; b < c.nbatch(); ++b) {
    if (c.len_q(b) > 0) nonempty.push_back(b);
  }
  if (nonempty.empty()) return out;
  const auto pick = [&] { return nonempty[rng() % nonempty.size()]; };
  std::vector<std::pair<int64_t, int64_t>> bh = {{nonempty.front(), 0}, {nonempty.back(), H - 1}};
  for (int t = 0; t < 2; ++t) bh.emplace_back(pick(), static_cast<int64_t>(rng() % H));
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t x = 0; x < bh.size(); ++x) {
    if (!seen.insert(bh[x]).second) continue;
    const auto [b, h] = bh[x];
    const int64_t lq = c.len_q(b);
    const int64_t blocks = (lq - 1) / 64;  // boundaries 64m, m = 1..blocks
    std::set<int64_t> rows = {0, lq - 1};
    if (x == 0) {
      rows.insert({1, lq - 2});
      for (int64_t m = 1; m <= blocks; ++m) rows.insert({64 * m - 1, 64 * m});
    } else if (x == 1) {
      for (int t = 0; t < 12 && blocks > 0; ++t) {
        const int64_t m = 1 + static_cast<int64_t>(rng() % blocks);
        rows.insert({64 * m - 1, 64 * m});
      }
    } else {
      for (int t = 0; t < 8; ++t) rows.insert(static_cast<int64_t>(rng() % lq));
    }
    for (int64_t r : rows) {
      if (r >= 0 && r < lq) out.push_back({b, h, r});
    }
  }
  return out;
}

inline bool use_sampling(const FwdCase& c) {
  if (c.sampling == Sampling::kFull) return false;
  if (c.sampling == Sampling::kSampled) return true;
  return c.work() > kFullReferenceWork;
}

inline RefResult compute_reference(const FwdCase& c, const FwdInputs& in) {
  init_reference_threads();
  const ref::Problem p = make_problem(c, in);
  RefResult r;
  if (use_sampling(c)) {
    const auto qrow = [&](int64_t b, int64_t i, int64_t h) { return in.q.row_ptr(c.row0_q(b) + i, h); };
    const auto krow = [&](int64_t b, int64_t j, int64_t hk) { return in.k.row_ptr(c.row0_k(b) + j, hk); };
    const auto vrow = [&](int64_t b, int64_t j, int64_t hk) { return in.v.row_ptr(c.row0_k(b) + j, hk); };
    reference_rows(p, c.dtype, choose_samples(c), qrow, krow, vrow, &r);
    return r;
  }
  const int64_t dv = c.head_dim_v();
  r.out_golden.assign(static_cast<size_t>(c.rows_q() * c.heads_q * dv), kNaN);
  r.out_lp.assign(r.out_golden.size(), kNaN);
  r.lse_golden.assign(static_cast<size_t>(ref::lse_size(p)), kNaN);
  r.lse_lp.assign(r.lse_golden.size(), kNaN);
  const ref::ConstView qv = view_of(in.q, c, c.seqlen_q), kv = view_of(in.k, c, c.seqlen_k),
                       vv = view_of(in.v, c, c.seqlen_k);
  ref::MutView og, ol;
  og.data = r.out_golden.data();
  og.stride_head = dv;
  og.stride_row = c.heads_q * dv;
  og.stride_batch = c.varlen() ? 0 : c.seqlen_q * og.stride_row;
  ol = og;
  ol.data = r.out_lp.data();
  ref::forward(p, qv, kv, vv, og, r.lse_golden.data());
  ref::forward_lowp(c.dtype, p, qv, kv, vv, ol, r.lse_lp.data());
  return r;
}

// ------------------------------------------------------------------------------------------------
// Checking.

struct FwdOutcome {
  bool ok = true;
  bool skipped = false;
  std::string message;  // failure: "REPRO: <case>" then the details; skip: why; pass: a summary
  ToleranceResult out_tol, lse_tol;
};

inline std::string build_line() {
  return std::string("build: ") + build_config();
}

inline FwdOutcome skip_outcome(const Status& s) {
  FwdOutcome o;
  o.skipped = true;
  o.message = std::string("kernel not in this build (kNotSupported): ") + s.message() + " [" + build_line() + "]";
  return o;
}

inline double out_value(const FwdCase& c, const GpuResult& g, int64_t row, int64_t h, int64_t col) {
  const int64_t dv = c.head_dim_v();
  return numeric::from_bits(c.dtype, g.out[(row * c.heads_q + h) * dv + col]);
}

inline int64_t lse_pos(const FwdCase& c, int64_t b, int64_t h, int64_t i) {
  if (c.varlen()) return h * c.rows_q() + c.row0_q(b) + i;
  return (b * c.heads_q + h) * c.seqlen_q + i;
}

// Checks a kernel result against the oracle. Does not look at g.status (see check_fwd_case).
inline FwdOutcome check_result(const FwdCase& c, const FwdInputs& in, const GpuResult& g, const RefResult& r) {
  FwdOutcome o;
  std::vector<std::string> errors;
  const int64_t dv = c.head_dim_v(), H = c.heads_q;
  if (!g.outside_written.empty()) errors.push_back(g.outside_written);

  // The kernel's values in the oracle's order.
  std::vector<double> k_out, k_lse;
  if (r.sampled) {
    for (const RowSample& s : r.samples) {
      for (int64_t col = 0; col < dv; ++col) k_out.push_back(out_value(c, g, c.row0_q(s.b) + s.i, s.h, col));
      k_lse.push_back(g.lse[lse_pos(c, s.b, s.h, s.i)]);
    }
  } else {
    k_out.resize(g.out.size());
    for (size_t x = 0; x < g.out.size(); ++x) k_out[x] = numeric::from_bits(c.dtype, g.out[x]);
    k_lse.assign(g.lse.begin(), g.lse.end());
  }
  o.out_tol = check_tolerance("out", k_out, r.out_golden, r.out_lp, c.dtype, Pass::kForward);
  if (!o.out_tol.ok) {
    std::string m = o.out_tol.message;
    if (o.out_tol.worst >= 0) {
      const int64_t e = o.out_tol.worst / dv, col = o.out_tol.worst % dv;
      std::ostringstream os;
      if (r.sampled) {
        const RowSample& s = r.samples[e];
        os << " [batch " << s.b << ", head " << s.h << ", row " << s.i << ", col " << col << "]";
      } else {
        os << " [logical row " << e / H << ", head " << e % H << ", col " << col << "]";
      }
      m += os.str();
    }
    errors.push_back(m);
  }
  if (c.with_lse) {
    o.lse_tol = check_lse("lse", k_lse, r.lse_golden);
    if (!o.lse_tol.ok) errors.push_back(o.lse_tol.message);
  }

  // Every row, sampled or not: a row that sees no key is exactly 0 with lse -inf; in sampled mode
  // every other row is finite and within max|v| (out is a convex combination of v's rows).
  const Window w = make_window(c.causal, c.window_left, c.window_right);
  double vmax = 0;
  for (double x : in.v.vals) vmax = std::max(vmax, std::fabs(x));
  const double vbound = vmax * (1.0 + 1.0 / 64.0) + 1e-30;
  int64_t bad_empty = 0, bad_other = 0;
  std::string first_empty, first_other;
  for (int64_t b = 0; b < c.nbatch(); ++b) {
    const int64_t lq = c.len_q(b), lk = c.len_k(b);
    for (int64_t i = 0; i < lq; ++i) {
      int64_t jb = 0, je = 0;
      visible_key_range(i, lq, lk, w, &jb, &je);
      const bool empty = je <= jb;
      if (!empty && !r.sampled) continue;  // the tolerance rule covered it
      for (int64_t h = 0; h < H; ++h) {
        const int64_t row = c.row0_q(b) + i;
        const double l = g.lse[lse_pos(c, b, h, i)];
        bool bad = false;
        for (int64_t col = 0; col < dv && !bad; ++col) {
          const double x = out_value(c, g, row, h, col);
          bad = empty ? !(x == 0.0) : !(std::isfinite(x) && std::fabs(x) <= vbound);
        }
        if (c.with_lse) bad = bad || (empty ? !(l == -kInf) : !std::isfinite(l));
        if (!bad) continue;
        std::ostringstream os;
        os << "batch " << b << " head " << h << " row " << i << " (lse=" << l
           << ", out[0]=" << out_value(c, g, row, h, 0) << ")";
        if (empty) {
          if (bad_empty++ == 0) first_empty = os.str();
        } else if (bad_other++ == 0) {
          first_other = os.str();
        }
      }
    }
  }
  if (bad_empty > 0) {
    errors.push_back(std::to_string(bad_empty) +
                     " (batch, head, row)s that see no key are not exactly out=0, lse=-inf; first: " + first_empty);
  }
  if (bad_other > 0) {
    errors.push_back(std::to_string(bad_other) + " unsampled rows not finite or beyond max|v|=" + std::to_string(vmax) +
                     "; first: " + first_other);
  }

  std::ostringstream os;
  if (errors.empty()) {
    os << c.name() << (r.sampled ? " [sampled " + std::to_string(r.samples.size()) + " rows]" : "") << ": "
       << o.out_tol.message;
    if (c.with_lse) os << " | " << o.lse_tol.message;
  } else {
    o.ok = false;
    os << "REPRO: " << c.str() << "\n";
    for (const auto& e : errors) os << "  " << e << "\n";
  }
  o.message = os.str();
  return o;
}

// Runs one case end to end: kNotSupported -> skipped; any other error status -> failure.
inline FwdOutcome check_fwd_case(const FwdCase& c, const FwdInputs& in) {
  const GpuResult g = run_gpu(c, in);
  if (!g.status.ok() && (!g.out_untouched || !g.outside_written.empty())) {
    FwdOutcome o;
    o.ok = false;
    o.message = "REPRO: " + c.str() + "\n  fwd() returned " + to_string(g.status.code()) + " (" + g.status.message() +
                ") but wrote to out/lse: nothing may be written on error";
    return o;
  }
  if (g.status.code() == StatusCode::kNotSupported) return skip_outcome(g.status);
  if (!g.status.ok()) {
    FwdOutcome o;
    o.ok = false;
    o.message = "REPRO: " + c.str() + "\n  fwd() returned " + to_string(g.status.code()) + ": " + g.status.message();
    return o;
  }
  const RefResult r = compute_reference(c, in);
  return check_result(c, in, g, r);
}

inline FwdOutcome check_fwd_case(const FwdCase& c) {
  return check_fwd_case(c, make_inputs(c));
}

// Reports an outcome in a test body: skip with the status message, fail with the REPRO line, or
// print the one-line summary (measured errors against their bounds).
#define FC_EXPECT_FWD_OUTCOME(outcome_expr)                        \
  do {                                                             \
    const ::flashcute::testing::FwdOutcome fc_o_ = (outcome_expr); \
    if (fc_o_.skipped) GTEST_SKIP() << fc_o_.message;              \
    ASSERT_TRUE(fc_o_.ok) << fc_o_.message;                        \
    std::printf("[ fwd ok ] %s\n", fc_o_.message.c_str());         \
  } while (0)

#define FC_CHECK_FWD_CASE(case_expr) FC_EXPECT_FWD_OUTCOME(::flashcute::testing::check_fwd_case(case_expr))

// For tests that call the kernel themselves: skip on kNotSupported, fail on any other error.
#define FC_ASSERT_FWD_STATUS(status_expr)                                                                            \
  do {                                                                                                               \
    const ::flashcute::Status fc_s_ = (status_expr);                                                                 \
    if (fc_s_.code() == ::flashcute::StatusCode::kNotSupported)                                                      \
      GTEST_SKIP() << ::flashcute::testing::skip_outcome(fc_s_).message;                                             \
    ASSERT_TRUE(fc_s_.ok()) << "fwd() returned " << ::flashcute::to_string(fc_s_.code()) << ": " << fc_s_.message(); \
  } while (0)

// ------------------------------------------------------------------------------------------------
// Both paths: every forward test runs once on the SM80 path and once on the SM90 path (kAuto would
// pick SM90 on a Hopper GPU and SM80 elsewhere, testing only one of them per machine).

inline const std::vector<Backend>& test_backends() {
  static const std::vector<Backend> b = {Backend::kSm80, Backend::kSm90};
  return b;
}

// Empty when `b` can run on this machine's GPU; else why not (an SM90 test on a GPU that is not
// compute capability 9.x). Whether the path is compiled is the library's answer (kNotSupported ->
// the harness skips with its message).
inline std::string backend_unavailable_reason(Backend b) {
  if (b != Backend::kSm90) return {};
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    cudaGetLastError();
    return "backend=sm90: no usable CUDA device";
  }
  if (major != 9)
    return "backend=sm90 needs a compute capability 9.x GPU; this one is " + std::to_string(major) + "." +
           std::to_string(minor) + " (the SM80 instance of this test runs here)";
  return {};
}

// Each case of a list once per backend (the case's name and REPRO line say which).
inline std::vector<FwdCase> on_each_backend(const std::vector<FwdCase>& cases) {
  std::vector<FwdCase> out;
  for (Backend b : test_backends()) {
    for (FwdCase c : cases) {
      c.backend = b;
      out.push_back(c);
    }
  }
  return out;
}

// Skips an SM90 case with a visible message where this GPU cannot run it.
#define FC_REQUIRE_BACKEND(backend_expr)                                                                   \
  do {                                                                                                     \
    const std::string fc_why_ = ::flashcute::testing::backend_unavailable_reason(backend_expr);          \
    if (!fc_why_.empty()) GTEST_SKIP() << fc_why_;                                                         \
  } while (0)

// A fixture whose tests run once per backend: the parameter becomes the ambient backend of every
// case the test builds (FwdCase::backend kAuto) and of its direct API calls (use ambient_backend()).
// `P` is the test's own parameter, void for none.
template <class P>
class OnBackendBase : public ::testing::TestWithParam<std::tuple<P, Backend>> {
 protected:
  void SetUp() override {
    ambient_backend() = std::get<1>(this->GetParam());
    if (gpu_unavailable_reason().empty()) FC_REQUIRE_BACKEND(ambient_backend());
  }
  void TearDown() override { ambient_backend() = Backend::kAuto; }
  const P& param() const { return std::get<0>(this->GetParam()); }
};
class OnBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ambient_backend() = GetParam();
    if (gpu_unavailable_reason().empty()) FC_REQUIRE_BACKEND(ambient_backend());
  }
  void TearDown() override { ambient_backend() = Backend::kAuto; }
};

inline std::string backend_param_name(const ::testing::TestParamInfo<Backend>& info) {
  return to_string(info.param);
}

// ------------------------------------------------------------------------------------------------
// Helpers for metamorphic tests.

// Index of the first differing element, or -1 when a and b are bitwise equal (and equally long).
template <class T>
inline int64_t first_bit_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<int64_t>(i);
  }
  return -1;
}

// Offsets (batch+1 values) from lengths.
inline std::vector<int32_t> offsets_from_lengths(const std::vector<int32_t>& lens) {
  std::vector<int32_t> cu{0};
  for (int32_t l : lens) cu.push_back(cu.back() + l);
  return cu;
}

// The GoogleTest name of a list of cases: name(), deduplicated with a suffix.
inline std::vector<std::string> unique_names(const std::vector<FwdCase>& cases) {
  std::vector<std::string> names;
  std::map<std::string, int> count;
  for (const auto& c : cases) {
    std::string n = c.name();
    const int k = count[n]++;
    if (k > 0) n += "_v" + std::to_string(k + 1);
    names.push_back(n);
  }
  return names;
}

}  // namespace flashcute::testing
