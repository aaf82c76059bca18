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

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "flashcute/flashcute.h"

namespace nb = nanobind;
namespace fc = flashcute;

namespace {

using InArray = nb::ndarray<nb::ro>;  // inputs: read-only producers are accepted
using OutArray = nb::ndarray<>;       // outputs: must be writable
using OptInArray = std::optional<InArray>;

[[noreturn]] void raise_status(const fc::Status& status) {
  const std::string& msg = status.message();
  switch (status.code()) {
    case fc::StatusCode::kInvalidArgument:
      if (msg.find("dtype") != std::string::npos) throw nb::type_error(msg.c_str());
      throw nb::value_error(msg.c_str());
    case fc::StatusCode::kNotSupported:
      PyErr_SetString(PyExc_NotImplementedError, msg.c_str());
      throw nb::python_error();
    case fc::StatusCode::kOk:  // not an error: a bug in the caller of raise_status
    case fc::StatusCode::kCudaError:
    case fc::StatusCode::kInternal: break;
  }
  throw std::runtime_error(msg);
}

void check(const fc::Status& status) {
  if (!status.ok()) raise_status(status);
}

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
fc::TensorDesc describe(const char* name, const Array& a) {
  fc::TensorDesc t;
  const size_t ndim = a.ndim();
  if (ndim > static_cast<size_t>(fc::kMaxRank))
    throw nb::value_error((std::string(name) + ": has " + std::to_string(ndim) + " dims " + shape_str(a) +
                           "; flashcute tensors have at most " + std::to_string(fc::kMaxRank) + " dims")
                              .c_str());
  t.data = const_cast<void*>(static_cast<const void*>(a.data()));
  t.dtype = to_dtype(a.dtype());
  t.device_type = to_device_type(a.device_type());
  t.device_index = a.device_id();
  t.rank = static_cast<int32_t>(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    t.shape[i] = static_cast<int64_t>(a.shape(i));
    t.stride[i] = a.stride(i);
  }
  return t;
}

fc::TensorDesc describe(const char* name, const OptInArray& a) {
  return a ? describe(name, *a) : fc::TensorDesc{};
}

fc::Backend to_backend(const std::string& name) {
  if (name == "auto") return fc::Backend::kAuto;
  if (name == "sm80") return fc::Backend::kSm80;
  if (name == "sm90") return fc::Backend::kSm90;
  throw nb::value_error(("backend='" + name + "' is not a known backend (auto, sm80, sm90)").c_str());
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

  fc::AttentionOptions get() const {
    fc::AttentionOptions o;
    o.softmax_scale = softmax_scale;
    o.causal = causal;
    o.window_left = window_left;
    o.window_right = window_right;
    o.softcap = softcap;
    o.alibi_slopes = describe("alibi_slopes", alibi_slopes);
    o.dropout_p = dropout_p;
    o.deterministic = deterministic;
    o.backend = to_backend(backend);
    return o;
  }
};

// A host copy of cu_seqlens (optional): CPU int32, contiguous, as long as the device array. The C++
// API reads batch + 1 values through the raw pointer, so the length is checked here.
const int32_t* host_offsets(const char* name, const OptInArray& a, const fc::TensorDesc& device_twin) {
  if (!a) return nullptr;
  const fc::TensorDesc t = describe(name, *a);
  const std::string n(name);
  if (t.device_type != fc::DeviceType::kCPU)
    throw nb::value_error(
        (n + ": tensor is on " + fc::to_string(t.device_type) + "; expected a host (CPU) tensor").c_str());
  if (t.dtype != fc::DType::kInt32)
    throw nb::type_error((n + ": dtype " + fc::to_string(t.dtype) + " must be int32").c_str());
  if (t.rank != 1 || (t.shape[0] > 1 && t.stride[0] != 1))
    throw nb::value_error((n + ": must be a contiguous 1-D array").c_str());
  if (device_twin.rank != 1 || t.shape[0] != device_twin.shape[0])
    throw nb::value_error((n + ": length " + std::to_string(t.shape[0]) + " does not match the device array's length " +
                           (device_twin.rank == 1 ? std::to_string(device_twin.shape[0]) : std::string("(not 1-D)")))
                              .c_str());
  return static_cast<const int32_t*>(t.data);
}

// The caller's scratch memory for one call: None, a DLPack array, or a callable `alloc(nbytes)`
// returning one (called only when the call needs bytes). Kept alive until the call returns.
struct WorkspaceRef {
  nb::object owner;
  std::optional<OutArray> array;
  fc::Workspace ws;
};

template <class Args, class SizeFn>
WorkspaceRef workspace_for(nb::handle spec, const Args& args, SizeFn size_fn) {
  WorkspaceRef ref;
  if (spec.is_none()) return ref;  // validation reports "workspace: 0 bytes given, N needed" if needed
  nb::object obj = nb::borrow(spec);
  if (PyCallable_Check(spec.ptr())) {
    size_t needed = 0;
    check(size_fn(args, &needed));
    if (needed == 0) return ref;
    obj = spec(needed);
  }
  OutArray a;
  if (!nb::try_cast(obj, a, /*convert=*/false))
    throw nb::type_error(("workspace: expected a writable DLPack array (or a callable returning one), got " +
                          std::string(nb::type_name(obj.type()).c_str()))
                             .c_str());
  const fc::TensorDesc t = describe("workspace", a);
  if (t.device_type != fc::DeviceType::kCUDA)
    throw nb::value_error(
        (std::string("workspace: tensor is on ") + fc::to_string(t.device_type) + "; expected a CUDA device tensor")
            .c_str());
  if (t.device_index != args.q.device_index)
    throw nb::value_error(("workspace: is on cuda:" + std::to_string(t.device_index) +
                           " but q is on cuda:" + std::to_string(args.q.device_index))
                              .c_str());
  int64_t expect = 1;  // contiguous, so that nbytes is the usable size
  for (int i = t.rank - 1; i >= 0; --i) {
    if (t.shape[i] > 1 && t.stride[i] != expect) throw nb::value_error("workspace: must be contiguous");
    expect *= t.shape[i];
  }
  ref.ws.data = t.data;
  ref.ws.bytes = a.nbytes();
  ref.owner = std::move(obj);
  ref.array = std::move(a);
  return ref;
}

template <class Args>
void run(Args& args, Options opts, uintptr_t stream, nb::handle workspace, fc::Status (*size_fn)(const Args&, size_t*),
         fc::Status (*call)(const Args&)) {
  args.options = opts.get();
  args.stream = to_stream(stream);
  WorkspaceRef ws = workspace_for(workspace, args, size_fn);
  args.workspace = ws.ws;
  fc::Status status;
  {
    nb::gil_scoped_release release;  // the call only validates and enqueues work on the stream
    status = call(args);
  }
  check(status);
}

template <class Args>
size_t workspace_size(Args& args, Options opts, fc::Status (*size_fn)(const Args&, size_t*)) {
  args.options = opts.get();
  size_t bytes = 0;
  check(size_fn(args, &bytes));
  return bytes;
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

fc::FwdArgs fwd_args(const InArray& q, const InArray& k, const InArray& v, const OutArray& out,
                     const std::optional<OutArray>& lse) {
  fc::FwdArgs a;
  a.q = describe("q", q);
  a.k = describe("k", k);
  a.v = describe("v", v);
  a.out = describe("out", out);
  if (lse) a.lse = describe("lse", *lse);
  return a;
}

fc::VarlenFwdArgs varlen_fwd_args(const InArray& q, const InArray& k, const InArray& v, const OutArray& out,
                                  const InArray& cu_q, const InArray& cu_k, int64_t max_q, int64_t max_k,
                                  const std::optional<OutArray>& lse, const OptInArray& cu_q_host,
                                  const OptInArray& cu_k_host) {
  fc::VarlenFwdArgs a;
  a.q = describe("q", q);
  a.k = describe("k", k);
  a.v = describe("v", v);
  a.out = describe("out", out);
  if (lse) a.lse = describe("lse", *lse);
  a.cu_seqlens_q = describe("cu_seqlens_q", cu_q);
  a.cu_seqlens_k = describe("cu_seqlens_k", cu_k);
  a.max_seqlen_q = max_q;
  a.max_seqlen_k = max_k;
  a.cu_seqlens_q_host = host_offsets("cu_seqlens_q_host", cu_q_host, a.cu_seqlens_q);
  a.cu_seqlens_k_host = host_offsets("cu_seqlens_k_host", cu_k_host, a.cu_seqlens_k);
  return a;
}

template <class Args>
void fill_bwd(Args& a, const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
              const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv) {
  a.dout = describe("dout", dout);
  a.q = describe("q", q);
  a.k = describe("k", k);
  a.v = describe("v", v);
  a.out = describe("out", out);
  a.lse = describe("lse", lse);
  a.dq = describe("dq", dq);
  a.dk = describe("dk", dk);
  a.dv = describe("dv", dv);
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() =
      "flashcute's compiled core: the public C++ API over DLPack tensors (torch, CuPy, JAX, ...). "
      "Outputs and workspace are the caller's; streams are integer cudaStream_t handles.";

  m.def(
      "version", [] { return std::string(fc::version()); }, "The library version, e.g. '0.1.0'.");
  m.def(
      "build_config", [] { return std::string(fc::build_config()); },
      "What this build contains (architectures, dtypes, head-dim buckets, kernel count).");

  // ---- forward ------------------------------------------------------------------------------------
  m.def(
      "fwd",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, uintptr_t stream, const std::string& backend, nb::handle workspace,
         float dropout_p) {
        fc::FwdArgs a = fwd_args(q, k, v, out, lse);
        run(a, {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, false, backend},
            stream, workspace, fwd_size_of<fc::FwdArgs>, fwd_of<fc::FwdArgs>);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("stream") = 0, nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(),
      nb::arg("dropout_p") = 0.0f,
      "Forward into `out` (and `lse` when given) on `stream`. q (batch, seqlen_q, heads_q, d), k/v (batch, seqlen_k, "
      "heads_kv, d/d_v), out (batch, seqlen_q, heads_q, d_v), lse fp32 (batch, heads_q, seqlen_q).");

  m.def(
      "varlen_fwd",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, uintptr_t stream, const std::string& backend, nb::handle workspace,
         float dropout_p, const OptInArray& cu_seqlens_q_host, const OptInArray& cu_seqlens_k_host) {
        fc::VarlenFwdArgs a = varlen_fwd_args(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, lse,
                                              cu_seqlens_q_host, cu_seqlens_k_host);
        run(a, {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, false, backend},
            stream, workspace, fwd_size_of<fc::VarlenFwdArgs>, fwd_of<fc::VarlenFwdArgs>);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"),
      nb::arg("max_seqlen_q"), nb::arg("max_seqlen_k"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("stream") = 0, nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(),
      nb::arg("dropout_p") = 0.0f, nb::arg("cu_seqlens_q_host").none() = nb::none(),
      nb::arg("cu_seqlens_k_host").none() = nb::none(),
      "Varlen forward: q (total_q, heads_q, d), k/v (total_k, heads_kv, d/d_v), cu_seqlens int32 (batch + 1) on the "
      "GPU, lse fp32 (heads_q, total_q). Optional host copies of cu_seqlens are checked too (never read from the "
      "GPU).");

  m.def(
      "fwd_workspace_size",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, const std::string& backend, float dropout_p) {
        fc::FwdArgs a = fwd_args(q, k, v, out, lse);
        return workspace_size(
            a, {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, false, backend},
            fwd_size_of<fc::FwdArgs>);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("backend") = "auto", nb::arg("dropout_p") = 0.0f,
      "Scratch bytes fwd() needs for these arguments (validates them; launches nothing).");

  m.def(
      "varlen_fwd_workspace_size",
      [](const InArray& q, const InArray& k, const InArray& v, const OutArray& out, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, const std::optional<OutArray>& lse,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, const std::string& backend, float dropout_p) {
        fc::VarlenFwdArgs a = varlen_fwd_args(q, k, v, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, lse,
                                              std::nullopt, std::nullopt);
        return workspace_size(
            a, {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, false, backend},
            fwd_size_of<fc::VarlenFwdArgs>);
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"),
      nb::arg("max_seqlen_q"), nb::arg("max_seqlen_k"), nb::arg("lse").none() = nb::none(),
      nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false, nb::arg("window_left") = -1,
      nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f, nb::arg("alibi_slopes").none() = nb::none(),
      nb::arg("backend") = "auto", nb::arg("dropout_p") = 0.0f,
      "Scratch bytes varlen_fwd() needs for these arguments.");

  // ---- backward -----------------------------------------------------------------------------------
  m.def(
      "bwd",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, bool deterministic, uintptr_t stream, const std::string& backend,
         nb::handle workspace, float dropout_p) {
        fc::BwdArgs a;
        fill_bwd(a, dout, q, k, v, out, lse, dq, dk, dv);
        run(a,
            {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, deterministic,
             backend},
            stream, workspace, bwd_size_of<fc::BwdArgs>, bwd_of<fc::BwdArgs>);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("stream") = 0,
      nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(), nb::arg("dropout_p") = 0.0f,
      "Backward into dq, dk, dv from the forward's out and lse. `workspace`: a CUDA array of at least "
      "bwd_workspace_size() bytes, or a callable alloc(nbytes) returning one.");

  m.def(
      "varlen_bwd",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, std::optional<float> softmax_scale,
         bool causal, int64_t window_left, int64_t window_right, float softcap, const OptInArray& alibi_slopes,
         bool deterministic, uintptr_t stream, const std::string& backend, nb::handle workspace, float dropout_p,
         const OptInArray& cu_seqlens_q_host, const OptInArray& cu_seqlens_k_host) {
        fc::VarlenBwdArgs a;
        fill_bwd(a, dout, q, k, v, out, lse, dq, dk, dv);
        a.cu_seqlens_q = describe("cu_seqlens_q", cu_seqlens_q);
        a.cu_seqlens_k = describe("cu_seqlens_k", cu_seqlens_k);
        a.max_seqlen_q = max_seqlen_q;
        a.max_seqlen_k = max_seqlen_k;
        a.cu_seqlens_q_host = host_offsets("cu_seqlens_q_host", cu_seqlens_q_host, a.cu_seqlens_q);
        a.cu_seqlens_k_host = host_offsets("cu_seqlens_k_host", cu_seqlens_k_host, a.cu_seqlens_k);
        run(a,
            {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p, deterministic,
             backend},
            stream, workspace, bwd_size_of<fc::VarlenBwdArgs>, bwd_of<fc::VarlenBwdArgs>);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"), nb::arg("max_seqlen_q"),
      nb::arg("max_seqlen_k"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("stream") = 0,
      nb::arg("backend") = "auto", nb::arg("workspace").none() = nb::none(), nb::arg("dropout_p") = 0.0f,
      nb::arg("cu_seqlens_q_host").none() = nb::none(), nb::arg("cu_seqlens_k_host").none() = nb::none(),
      "Varlen backward (layouts as varlen_fwd; lse fp32 (heads_q, total_q)).");

  m.def(
      "bwd_workspace_size",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv,
         std::optional<float> softmax_scale, bool causal, int64_t window_left, int64_t window_right, float softcap,
         const OptInArray& alibi_slopes, bool deterministic, const std::string& backend, float dropout_p) {
        fc::BwdArgs a;
        fill_bwd(a, dout, q, k, v, out, lse, dq, dk, dv);
        return workspace_size(a,
                              {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                               deterministic, backend},
                              bwd_size_of<fc::BwdArgs>);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("backend") = "auto",
      nb::arg("dropout_p") = 0.0f, "Scratch bytes bwd() needs for these arguments.");

  m.def(
      "varlen_bwd_workspace_size",
      [](const InArray& dout, const InArray& q, const InArray& k, const InArray& v, const InArray& out,
         const OptInArray& lse, const OutArray& dq, const OutArray& dk, const OutArray& dv, const InArray& cu_seqlens_q,
         const InArray& cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k, std::optional<float> softmax_scale,
         bool causal, int64_t window_left, int64_t window_right, float softcap, const OptInArray& alibi_slopes,
         bool deterministic, const std::string& backend, float dropout_p) {
        fc::VarlenBwdArgs a;
        fill_bwd(a, dout, q, k, v, out, lse, dq, dk, dv);
        a.cu_seqlens_q = describe("cu_seqlens_q", cu_seqlens_q);
        a.cu_seqlens_k = describe("cu_seqlens_k", cu_seqlens_k);
        a.max_seqlen_q = max_seqlen_q;
        a.max_seqlen_k = max_seqlen_k;
        return workspace_size(a,
                              {softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, dropout_p,
                               deterministic, backend},
                              bwd_size_of<fc::VarlenBwdArgs>);
      },
      nb::arg("dout"), nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("out"), nb::arg("lse").none(), nb::arg("dq"),
      nb::arg("dk"), nb::arg("dv"), nb::arg("cu_seqlens_q"), nb::arg("cu_seqlens_k"), nb::arg("max_seqlen_q"),
      nb::arg("max_seqlen_k"), nb::arg("softmax_scale").none() = nb::none(), nb::arg("causal") = false,
      nb::arg("window_left") = -1, nb::arg("window_right") = -1, nb::arg("softcap") = 0.0f,
      nb::arg("alibi_slopes").none() = nb::none(), nb::arg("deterministic") = false, nb::arg("backend") = "auto",
      nb::arg("dropout_p") = 0.0f, "Scratch bytes varlen_bwd() needs for these arguments.");
}
