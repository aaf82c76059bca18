// flashcute._C: the Python binding of the public C++ API (include/flashcute/), and nothing else.
//
// Tensors arrive through DLPack (nanobind's ndarray: torch, CuPy, JAX, NumPy, or a raw DLPack
// capsule), streams as integer cudaStream_t handles (0 = the legacy default stream). Nothing here
// knows about torch, so one build works with every torch version. Outputs and workspace are the
// caller's: this module never allocates device memory (a `workspace` argument may be a callable
// that the binding asks for the bytes the call needs).
//
// Errors (Status -> Python exception; the message is the C++ validation message verbatim):
//   kInvalidArgument -> TypeError when the message names a dtype, else ValueError
//   kNotSupported    -> NotImplementedError (a subclass of RuntimeError, so code written for
//                       flash_attn's RuntimeError on unsupported GPUs/options still catches it)
//   kCudaError, kInternal -> RuntimeError
//
// Errors travel as values (Err), never as C++ exceptions: an entry point that fails sets the Python
// error indicator and returns a null object, which nanobind hands to the caller as the raised
// exception. So a bad-input call takes the same path out of the module as a good one (the argument
// arrays are released by a normal return, not during stack unwinding), and nothing on any error
// path depends on C++ exception unwinding across this module.
//
// Debugging aids, read once at import (both off by default):
//   FLASHCUTE_TRACE=1             one stderr line (flushed) per step of every call: arguments as
//                                 described, workspace, the C++ call, the Python exception raised
//   FLASHCUTE_NATIVE_BACKTRACE=1  on SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGABRT print the native stack
//                                 (glibc backtrace) to stderr, then hand the signal to the previous
//                                 handler (e.g. faulthandler's, which prints the Python stack)

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#if defined(__linux__)
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
#endif

#include "flashcute/flashcute.h"

namespace nb = nanobind;
namespace fc = flashcute;

namespace {

using InArray = nb::ndarray<nb::ro>;  // inputs: read-only producers are accepted
using OutArray = nb::ndarray<>;       // outputs: must be writable
using OptInArray = std::optional<InArray>;

// ---- debugging aids -------------------------------------------------------------------------------
bool g_trace = false;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

template <class... T>
void trace(const char* fmt, T... args) {
  if (!g_trace) return;
  std::fputs("[flashcute._C] ", stderr);
  if constexpr (sizeof...(T) == 0) {
    std::fputs(fmt, stderr);
  } else {
    std::fprintf(stderr, fmt, args...);
  }
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void trace_desc(const char* name, const fc::TensorDesc& t) {
  if (!g_trace) return;
  std::string s = "(";
  for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  s += ") strides (";
  for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.stride[i]);
  s += ")";
  trace("  %s: %s on %s:%d, shape %s, data %p", name, fc::to_string(t.dtype), fc::to_string(t.device_type),
        static_cast<int>(t.device_index), s.c_str(), t.data);
}

#if defined(__linux__)
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr int kNumFatalSignals = sizeof(kFatalSignals) / sizeof(kFatalSignals[0]);
struct sigaction g_previous_action[kNumFatalSignals];

void on_fatal_signal(int sig, siginfo_t*, void*) {
  static const char kHead[] = "\nflashcute._C: fatal signal; native stack, innermost frame first:\n";
  ssize_t ignored = write(STDERR_FILENO, kHead, sizeof(kHead) - 1);
  (void)ignored;
  void* frames[128];
  const int n = backtrace(frames, 128);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  // Hand over to whoever was there before (faulthandler prints the Python stack), else the default.
  for (int i = 0; i < kNumFatalSignals; ++i)
    if (kFatalSignals[i] == sig) sigaction(sig, &g_previous_action[i], nullptr);
  raise(sig);
}

void install_native_backtrace() {
  void* warm[4];
  backtrace(warm, 4);  // loads the unwinder now: backtrace() must not dlopen inside the handler
  for (int i = 0; i < kNumFatalSignals; ++i) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(kFatalSignals[i], &sa, &g_previous_action[i]);
  }
  trace("native backtrace on fatal signals: installed");
}
#else
void install_native_backtrace() {}
#endif

// ---- errors as values -----------------------------------------------------------------------------
struct Err {
  PyObject* type = nullptr;  // the Python exception class; nullptr = no error
  std::string msg;
  bool already_set = false;  // a Python callback raised: the Python error indicator is set already
  explicit operator bool() const { return type != nullptr; }
};

Err ok() { return {}; }
Err type_error(std::string msg) { return {PyExc_TypeError, std::move(msg)}; }
Err value_error(std::string msg) { return {PyExc_ValueError, std::move(msg)}; }
Err python_error_already_set() { return {PyExc_RuntimeError, std::string(), true}; }

Err from_status(const fc::Status& status) {
  const std::string& msg = status.message();
  switch (status.code()) {
    case fc::StatusCode::kOk: return ok();
    case fc::StatusCode::kInvalidArgument:
      return {msg.find("dtype") != std::string::npos ? PyExc_TypeError : PyExc_ValueError, msg};
    case fc::StatusCode::kNotSupported: return {PyExc_NotImplementedError, msg};
    case fc::StatusCode::kCudaError:
    case fc::StatusCode::kInternal: break;
  }
  return {PyExc_RuntimeError, msg};
}

#define FC_BIND_TRY(expr)          \
  do {                             \
    Err fc_err_ = (expr);          \
    if (fc_err_) return fc_err_;   \
  } while (0)

// Sets the Python error and returns the null object that tells nanobind the call raised it.
nb::object raise(const char* what, const Err& e) {
  if (e.already_set) {
    trace("%s: a Python callback raised; passing its exception on", what);
  } else {
    trace("%s: raising %s: %s", what, reinterpret_cast<PyTypeObject*>(e.type)->tp_name, e.msg.c_str());
    PyErr_SetString(e.type, e.msg.c_str());
  }
  return nb::object();
}

nb::object none_or_raise(const char* what, const Err& e) {
  if (e) return raise(what, e);
  trace("%s: done", what);
  return nb::none();
}

nb::object size_or_raise(const char* what, const Err& e, size_t bytes) {
  if (e) return raise(what, e);
  trace("%s: %zu bytes", what, bytes);
  return nb::steal(PyLong_FromSize_t(bytes));  // null (with MemoryError set) on failure: raised as well
}

// ---- DLPack arrays -> TensorDesc ------------------------------------------------------------------
fc::DType to_dtype(nb::dlpack::dtype dt) {
  using Code = nb::dlpack::dtype_code;
  if (dt.lanes != 1) return fc::DType::kOther;
  switch (static_cast<Code>(dt.code)) {
    case Code::Float:
      if (dt.bits == 16) return fc::DType::kFloat16;
      if (dt.bits == 32) return fc::DType::kFloat32;
      if (dt.bits == 64) return fc::DType::kFloat64;
      break;
    case Code::Bfloat:
      if (dt.bits == 16) return fc::DType::kBFloat16;
      break;
    case Code::Int:
      if (dt.bits == 32) return fc::DType::kInt32;
      if (dt.bits == 64) return fc::DType::kInt64;
      break;
    default: break;
  }
  return fc::DType::kOther;  // int8, fp8, bool, complex, ...: validation rejects it by name
}

fc::DeviceType to_device_type(int dl_device_type) {
  switch (dl_device_type) {
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value: return fc::DeviceType::kCUDA;
    case nb::device::cpu::value:
    case nb::device::cuda_host::value: return fc::DeviceType::kCPU;  // pinned host memory is host memory
    default: return fc::DeviceType::kOther;
  }
}

template <class Array>
std::string shape_str(const Array& a) {
  std::string s = "(";
  for (size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + ")";
}

// TensorDesc from a DLPack array: pointer (with the byte offset applied), dtype, device, shape and
// strides in elements. The rules (rank, dtype, device, strides) are checked by the C++ validation.
template <class Array>
Err describe(const char* name, const Array& a, fc::TensorDesc* out) {
  *out = fc::TensorDesc{};
  const size_t ndim = a.ndim();
  if (ndim > static_cast<size_t>(fc::kMaxRank))
    return value_error(std::string(name) + ": has " + std::to_string(ndim) + " dims " + shape_str(a) +
                       "; flashcute tensors have at most " + std::to_string(fc::kMaxRank) + " dims");
  fc::TensorDesc& t = *out;
  t.data = const_cast<void*>(static_cast<const void*>(a.data()));
  t.dtype = to_dtype(a.dtype());
  t.device_type = to_device_type(a.device_type());
  t.device_index = a.device_id();
  t.rank = static_cast<int32_t>(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    t.shape[i] = static_cast<int64_t>(a.shape(i));
    t.stride[i] = a.stride(i);
  }
  trace_desc(name, t);
  return ok();
}

Err describe(const char* name, const OptInArray& a, fc::TensorDesc* out) {
  if (!a) {
    *out = fc::TensorDesc{};
    return ok();
  }
  return describe(name, *a, out);
}

Err to_backend(const std::string& name, fc::Backend* out) {
  if (name == "auto") *out = fc::Backend::kAuto;
  else if (name == "sm80") *out = fc::Backend::kSm80;
  else if (name == "sm90") *out = fc::Backend::kSm90;
  else return value_error("backend='" + name + "' is not a known backend (auto, sm80, sm90)");
  return ok();
}

fc::Stream to_stream(uintptr_t handle) {
  return reinterpret_cast<fc::Stream>(handle);
}

struct Options {
  std::optional<float> softmax_scale;
  bool causal;
  int64_t window_left, window_right;
  float softcap;
  const OptInArray& alibi_slopes;
  float dropout_p;
  bool deterministic;
  const std::string& backend;

  Err get(fc::AttentionOptions* o) const {
    o->softmax_scale = softmax_scale;
    o->causal = causal;
    o->window_left = window_left;
    o->window_right = window_right;
    o->softcap = softcap;
    FC_BIND_TRY(describe("alibi_slopes", alibi_slopes, &o->alibi_slopes));
    o->dropout_p = dropout_p;
    o->deterministic = deterministic;
    return to_backend(backend, &o->backend);
  }
};

// A host copy of cu_seqlens (optional): CPU int32, contiguous, as long as the device array. The C++
// API reads batch + 1 values through the raw pointer, so the length is checked here.
Err host_offsets(const char* name, const OptInArray& a, const fc::TensorDesc& device_twin, const int32_t** out) {
  *out = nullptr;
  if (!a) return ok();
  fc::TensorDesc t;
  FC_BIND_TRY(describe(name, *a, &t));
  const std::string n(name);
  if (t.device_type != fc::DeviceType::kCPU)
    return value_error(n + ": tensor is on " + fc::to_string(t.device_type) + "; expected a host (CPU) tensor");
  if (t.dtype != fc::DType::kInt32) return type_error(n + ": dtype " + fc::to_string(t.dtype) + " must be int32");
  if (t.rank != 1 || (t.shape[0] > 1 && t.stride[0] != 1)) return value_error(n + ": must be a contiguous 1-D array");
  if (device_twin.rank != 1 || t.shape[0] != device_twin.shape[0])
    return value_error(n + ": length " + std::to_string(t.shape[0]) + " does not match the device array's length " +
                       (device_twin.rank == 1 ? std::to_string(device_twin.shape[0]) : std::string("(not 1-D)")));
  *out = static_cast<const int32_t*>(t.data);
  return ok();
}

// The caller's scratch memory for one call: None, a DLPack array, or a callable `alloc(nbytes)`
// returning one (called only when the call needs bytes). Kept alive until the call returns.
struct WorkspaceRef {
  nb::object owner;
  std::optional<OutArray> array;
  fc::Workspace ws;
};

template <class Args, class SizeFn>
Err workspace_for(nb::handle spec, const Args& args, SizeFn size_fn, WorkspaceRef* ref) {
  if (spec.is_none()) return ok();  // validation reports "workspace: 0 bytes given, N needed" if needed
  nb::object obj = nb::borrow(spec);
  if (PyCallable_Check(spec.ptr())) {
    size_t needed = 0;
    FC_BIND_TRY(from_status(size_fn(args, &needed)));
    if (needed == 0) return ok();
    trace("  workspace: asking the callable for %zu bytes", needed);
    nb::object nbytes = nb::steal(PyLong_FromSize_t(needed));
    if (!nbytes.is_valid()) return python_error_already_set();
    obj = nb::steal(PyObject_CallOneArg(spec.ptr(), nbytes.ptr()));
    if (!obj.is_valid()) return python_error_already_set();  // the callable raised: its exception goes on
  }
  OutArray a;
  if (!nb::try_cast(obj, a, /*convert=*/false)) {
    PyErr_Clear();
    return type_error(std::string("workspace: expected a writable DLPack array (or a callable returning one), got ") +
                      Py_TYPE(obj.ptr())->tp_name);
  }
  fc::TensorDesc t;
  FC_BIND_TRY(describe("workspace", a, &t));
  if (t.device_type != fc::DeviceType::kCUDA)
    return value_error(std::string("workspace: tensor is on ") + fc::to_string(t.device_type) +
                       "; expected a CUDA device tensor");
  if (t.device_index != args.q.device_index)
    return value_error("workspace: is on cuda:" + std::to_string(t.device_index) + " but q is on cuda:" +
                       std::to_string(args.q.device_index));
  int64_t expect = 1;  // contiguous, so that nbytes is the usable size
  for (int i = t.rank - 1; i >= 0; --i) {
    if (t.shape[i] > 1 && t.stride[i] != expect) return value_error("workspace: must be contiguous");
    expect *= t.shape[i];
  }
  ref->ws.data = t.data;
  ref->ws.bytes = a.nbytes();
  ref->owner = std::move(obj);
  ref->array = std::move(a);
  return ok();
}

template <class Args>
Err run(const char* what, Args& args, const Options& opts, uintptr_t stream, nb::handle workspace,
        fc::Status (*size_fn)(const Args&, size_t*), fc::Status (*call)(const Args&), bool workspace_zeroed = false) {
  FC_BIND_TRY(opts.get(&args.options));
  args.stream = to_stream(stream);
  WorkspaceRef ws;  // outlives the call below
  FC_BIND_TRY(workspace_for(workspace, args, size_fn, &ws));
  args.workspace = ws.ws;
  args.workspace.zeroed = workspace_zeroed && args.workspace.data != nullptr;  // fc::Workspace::zeroed
  trace("%s: calling the C++ API with the GIL released (stream %p, workspace %zu bytes)", what,
        static_cast<void*>(args.stream), args.workspace.bytes);
  fc::Status status;
  {
    nb::gil_scoped_release release;  // the call only validates and enqueues work on the stream
    status = call(args);
  }
  trace("%s: the C++ API returned %s", what, fc::to_string(status.code()));
  return from_status(status);
}

template <class Args>
Err workspace_size(Args& args, const Options& opts, fc::Status (*size_fn)(const Args&, size_t*), size_t* bytes) {
  *bytes = 0;
  FC_BIND_TRY(opts.get(&args.options));
  return from_status(size_fn(args, bytes));
}

// Overload-resolved pointers to the public functions, one per argument struct.
template <class Args>
constexpr fc::Status (*fwd_size_of)(const Args&, size_t*) = &fc::fwd_workspace_size;
template <class Args>
constexpr fc::Status (*bwd_size_of)(const Args&, size_t*) = &fc::bwd_workspace_size;
template <class Args>
constexpr fc::Status (*fwd_of)(const Args&) = &fc::fwd;
template <class Args>
constexpr fc::Status (*bwd_of)(const Args&) = &fc::bwd;

Err fwd_args(const InArray& q, const InArray& k, const InArray& v, const OutArray& out,
             const std::optional<OutArray>& lse, fc::FwdArgs* a) {
  FC_BIND_TRY(describe("q", q, &a->q));
  FC_BIND_TRY(describe("k", k, &a->k));
  FC_BIND_TRY(describe("v", v, &a->v));
  FC_BIND_TRY(describe("out", out, &a->out));
  if (lse) FC_BIND_TRY(describe("lse", *lse, &a->lse));
  return ok();
}

Err varlen_fwd_args(const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const InArray& cu_q,
                    const InArray& cu_k, int64_t max_q, int64_t max_k, const std::optional<OutArray>& lse,
                    const OptInArray& cu_q_host, const OptInArray& cu_k_host, fc::VarlenFwdArgs* a) {
  FC_BIND_TRY(describe("q", q, &a->q));
  FC_BIND_TRY(describe("k", k, &a->k));
  FC_BIND_TRY(describe("v", v, &a->v));
  FC_BIND_TRY(describe("out", out, &a->out));
  if (lse) FC_BIND_TRY(describe("lse", *lse, &a->lse));
  FC_BIND_TRY(describe("cu_seqlens_q", cu_q, &a->cu_seqlens_q));
  FC_BIND_TRY(describe("cu_seqlens_k", cu_k, &a->cu_seqlens_k));
  a->max_seqlen_q = max_q;
  a->max_seqlen_k = max_k;
  FC_BIND_TRY(host_offsets("cu_seqlens_q_host", cu_q_host, a->cu_seqlens_q, &a->cu_seqlens_q_host));
  return host_offsets("cu_seqlens_k_host", cu_k_host, a->cu_seqlens_k, &a->cu_seqlens_k_host);
}

template <class Args>
Err fill_bwd(Args* a, const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
             const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv) {
  FC_BIND_TRY(describe("dout", dout, &a->dout));
  FC_BIND_TRY(describe("q", q, &a->q));
  FC_BIND_TRY(describe("k", k, &a->k));
  FC_BIND_TRY(describe("v", v, &a->v));
  FC_BIND_TRY(describe("out", out, &a->out));
  FC_BIND_TRY(describe("lse", lse, &a->lse));
  FC_BIND_TRY(describe("dq", dq, &a->dq));
  FC_BIND_TRY(describe("dk", dk, &a->dk));
  return describe("dv", dv, &a->dv);
}

Err varlen_bwd_extra(fc::VarlenBwdArgs* a, const InArray& cu_q, const InArray& cu_k, int64_t max_q, int64_t max_k,
                     const OptInArray& cu_q_host, const OptInArray& cu_k_host) {
  FC_BIND_TRY(describe("cu_seqlens_q", cu_q, &a->cu_seqlens_q));
  FC_BIND_TRY(describe("cu_seqlens_k", cu_k, &a->cu_seqlens_k));
  a->max_seqlen_q = max_q;
  a->max_seqlen_k = max_k;
  FC_BIND_TRY(host_offsets("cu_seqlens_q_host", cu_q_host, a->cu_seqlens_q, &a->cu_seqlens_q_host));
  return host_offsets("cu_seqlens_k_host", cu_k_host, a->cu_seqlens_k, &a->cu_seqlens_k_host);
}

}  // namespace

NB_MODULE(_C, m) {
  g_trace = env_flag("FLASHCUTE_TRACE");
  if (env_flag("FLASHCUTE_NATIVE_BACKTRACE")) install_native_backtrace();

  m.doc() =
      "flashcute's compiled core: the public C++ API over DLPack tensors (torch, CuPy, JAX, ...). "
      "Outputs and workspace are the caller's; streams are integer cudaStream_t handles.";

  m.def(
      "version", [] { return std::string(fc::version()); }, "The library version, e.g. '0.1.0'.");
  m.def(
      "build_config", [] { return std::string(fc::build_config()); },
      "What this build contains (architectures, dtypes, head-dim buckets, kernel count).");

  // Every entry point below returns None / an int, or raises: a null object with the Python error set.
  // ---- forward ------------------------------------------------------------------------------------
  m.def(
      "fwd",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, uintptr_t stream, const std::string& backend, nb::handle workspace,
         float dropout_p, bool workspace_zeroed) -> nb::object {
        trace("fwd: arguments converted");
        fc::FwdArgs a;
        Err e = fwd_args(q, k, v, out, lse, &a);
        if (!e)
          e = run("fwd", a,
                  Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, false,
                          backend},
                  stream, workspace, fwd_size_of<fc::FwdArgs>, fwd_of<fc::FwdArgs>, workspace_zeroed);
        return none_or_raise("fwd", e);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("stream") = 0, nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(),
      nb::arg("dropout_p") = 0.0f, nb::arg("workspace_zeroed") = false,
      "Forward into `out` (and `lse` when given) on `stream`. q (batch, seqlen_q, heads_q, d), k/v (batch, seqlen_k, "
      "heads_kv, d/d_v), out (batch, seqlen_q, heads_q, d_v), lse fp32 (batch, heads_q, seqlen_q). Returns None.");

  m.def(
      "varlen_fwd",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, uintptr_t stream, const std::string& backend, nb::handle workspace,
         float dropout_p, const OptInArray& cu_seqlens_q_host, const OptInArray& cu_seqlens_k_host,
         bool workspace_zeroed) -> nb::object {
        trace("varlen_fwd: arguments converted");
        fc::VarlenFwdArgs a;
        Err e = varlen_fwd_args(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, lse,
                                cu_seqlens_q_host, cu_seqlens_k_host, &a);
        if (!e)
          e = run("varlen_fwd", a,
                  Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, false,
                          backend},
                  stream, workspace, fwd_size_of<fc::VarlenFwdArgs>, fwd_of<fc::VarlenFwdArgs>, workspace_zeroed);
        return none_or_raise("varlen_fwd", e);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"),
      nb::arg("max_seqlen_q"), nb::arg("max_seqlen_k"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("stream") = 0, nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(),
      nb::arg("dropout_p") = 0.0f, nb::arg("cu_seqlens_q_host").none() = nb::none(),
      nb::arg("cu_seqlens_k_host").none() = nb::none(), nb::arg("workspace_zeroed") = false,
      "Varlen forward: q (total_q, heads_q, d), k/v (total_k, heads_kv, d/d_v), cu_seqlens int32 (batch + 1) on the "
      "GPU, lse fp32 (heads_q, total_q). Optional host copies of cu_seqlens are checked too (never read from the "
      "GPU). Returns None.");

  m.def(
      "fwd_workspace_size",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, const std::string& backend, float dropout_p) -> nb::object {
        trace("fwd_workspace_size: arguments converted");
        fc::FwdArgs a;
        size_t bytes = 0;
        Err e = fwd_args(q, k, v, out, lse, &a);
        if (!e)
          e = workspace_size(a,
                             Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes,
                                     dropout_p, false, backend},
                             fwd_size_of<fc::FwdArgs>, &bytes);
        return size_or_raise("fwd_workspace_size", e, bytes);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("backend") = "auto", nb::arg("dropout_p") = 0.0f,
      "Scratch bytes (an int) fwd() needs for these arguments (validates them; launches nothing).");

  m.def(
      "varlen_fwd_workspace_size",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, const std::string& backend, float dropout_p) -> nb::object {
        trace("varlen_fwd_workspace_size: arguments converted");
        fc::VarlenFwdArgs a;
        size_t bytes = 0;
        Err e = varlen_fwd_args(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, lse,
                                std::nullopt, std::nullopt, &a);
        if (!e)
          e = workspace_size(a,
                             Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes,
                                     dropout_p, false, backend},
                             fwd_size_of<fc::VarlenFwdArgs>, &bytes);
        return size_or_raise("varlen_fwd_workspace_size", e, bytes);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"),
      nb::arg("max_seqlen_q"), nb::arg("max_seqlen_k"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("backend") = "auto", nb::arg("dropout_p") = 0.0f,
      "Scratch bytes (an int) varlen_fwd() needs for these arguments.");

  // ---- backward -----------------------------------------------------------------------------------
  m.def(
      "bwd",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, bool deterministic, uintptr_t stream, const std::string& backend,
         nb::handle workspace, float dropout_p) -> nb::object {
        trace("bwd: arguments converted");
        fc::BwdArgs a;
        Err e = fill_bwd(&a, dout, q, k, v, out, lse, dq, dk, dv);
        if (!e)
          e = run("bwd", a,
                  Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                          deterministic, backend},
                  stream, workspace, bwd_size_of<fc::BwdArgs>, bwd_of<fc::BwdArgs>);
        return none_or_raise("bwd", e);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("stream") = 0,
      nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(), nb::arg("dropout_p") = 0.0f,
      "Backward into dq, dk, dv from the forward's out and lse. `workspace`: a CUDA array of at least "
      "bwd_workspace_size() bytes, or a callable alloc(nbytes) returning one. Returns None.");

  m.def(
      "varlen_bwd",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, std::optional<float> softmax_scale,
         bool causal, int64_t window_left, int64_t window_right, float softcap, const OptInArray& alibi_slopes,
         bool deterministic, uintptr_t stream, const std::string& backend, nb::handle workspace, float dropout_p,
         const OptInArray& cu_seqlens_q_host, const OptInArray& cu_seqlens_k_host) -> nb::object {
        trace("varlen_bwd: arguments converted");
        fc::VarlenBwdArgs a;
        Err e = fill_bwd(&a, dout, q, k, v, out, lse, dq, dk, dv);
        if (!e)
          e = varlen_bwd_extra(&a, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, cu_seqlens_q_host,
                               cu_seqlens_k_host);
        if (!e)
          e = run("varlen_bwd", a,
                  Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                          deterministic, backend},
                  stream, workspace, bwd_size_of<fc::VarlenBwdArgs>, bwd_of<fc::VarlenBwdArgs>);
        return none_or_raise("varlen_bwd", e);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"), nb::arg("max_seqlen_q"),
      nb::arg("max_seqlen_k"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("stream") = 0,
      nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(), nb::arg("dropout_p") = 0.0f,
      nb::arg("cu_seqlens_q_host").none() = nb::none(), nb::arg("cu_seqlens_k_host").none() = nb::none(),
      "Varlen backward (layouts as varlen_fwd; lse fp32 (heads_q, total_q)). Returns None.");

  m.def(
      "bwd_workspace_size",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, bool deterministic, const std::string& backend,
         float dropout_p) -> nb::object {
        trace("bwd_workspace_size: arguments converted");
        fc::BwdArgs a;
        size_t bytes = 0;
        Err e = fill_bwd(&a, dout, q, k, v, out, lse, dq, dk, dv);
        if (!e)
          e = workspace_size(a,
                             Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes,
                                     dropout_p, deterministic, backend},
                             bwd_size_of<fc::BwdArgs>, &bytes);
        return size_or_raise("bwd_workspace_size", e, bytes);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("backend") = "auto",
      nb::arg("dropout_p") = 0.0f, "Scratch bytes (an int) bwd() needs for these arguments.");

  m.def(
      "varlen_bwd_workspace_size",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, std::optional<float> softmax_scale,
         bool causal, int64_t window_left, int64_t window_right, float softcap, const OptInArray& alibi_slopes,
         bool deterministic, const std::string& backend, float dropout_p) -> nb::object {
        trace("varlen_bwd_workspace_size: arguments converted");
        fc::VarlenBwdArgs a;
        size_t bytes = 0;
        Err e = fill_bwd(&a, dout, q, k, v, out, lse, dq, dk, dv);
        if (!e)
          e = varlen_bwd_extra(&a, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, std::nullopt,
                               std::nullopt);
        if (!e)
          e = workspace_size(a,
                             Options{softmax_scale, causal, window_left, window_right, softcap, alibi_slopes,
                                     dropout_p, deterministic, backend},
                             bwd_size_of<fc::VarlenBwdArgs>, &bytes);
        return size_or_raise("varlen_bwd_workspace_size", e, bytes);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"), nb::arg("max_seqlen_q"),
      nb::arg("max_seqlen_k"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("backend") = "auto",
      nb::arg("dropout_p") = 0.0f, "Scratch bytes (an int) varlen_bwd() needs for these arguments.");
}
