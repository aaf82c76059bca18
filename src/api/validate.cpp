#include "api/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

namespace flashcute {
namespace {

constexpr int64_t kMaxHeadDim = 256;
constexpr int64_t kHeadDimMultiple = 8;
constexpr int64_t kAlignBytes = 16;
// Kernels index rows and keys inside one sequence in 32 bits, with room for window arithmetic.
constexpr int64_t kMaxSeqlen = int64_t(1) << 29;  // 128-bit loads/stores (cp.async, TMA) need 16-byte rows

#define FC_TRY(expr)                 \
  do {                               \
    Status fc_status_ = (expr);      \
    if (!fc_status_.ok()) return fc_status_; \
  } while (0)

template <class... T>
std::string cat(const T&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

std::string shape_str(const TensorDesc& t) {
  std::ostringstream os;
  os << "(";
  for (int i = 0; i < t.rank; ++i) os << (i ? ", " : "") << t.shape[i];
  os << ")";
  return os.str();
}

std::string shape_str(std::initializer_list<int64_t> dims) {
  std::ostringstream os;
  os << "(";
  int i = 0;
  for (int64_t d : dims) os << (i++ ? ", " : "") << d;
  os << ")";
  return os.str();
}

std::string list_str(const std::vector<int32_t>& v) {
  if (v.empty()) return "none";
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os.str();
}

// Rank, device, non-negative shape, contiguous last dim, non-null data.
Status check_tensor(const char* name, const TensorDesc& t, int rank, const char* dims) {
  if (!t.given()) return Status::Invalid(cat(name, ": tensor is required but was not given"));
  if (t.rank != rank)
    return Status::Invalid(cat(name, ": has ", t.rank, " dims ", shape_str(t), "; expected ", rank, " dims ", dims));
  if (t.device_type != DeviceType::kCUDA)
    return Status::Invalid(cat(name, ": tensor is on ", to_string(t.device_type), "; expected a CUDA device tensor"));
  for (int i = 0; i < rank; ++i)
    if (t.shape[i] < 0) return Status::Invalid(cat(name, ": shape[", i, "]=", t.shape[i], " is negative"));
  if (t.shape[rank - 1] > 1 && t.stride[rank - 1] != 1)
    return Status::Invalid(cat(name, ": last dimension has stride ", t.stride[rank - 1],
                               "; it must be contiguous (stride 1)"));
  if (t.data == nullptr && t.numel() > 0)
    return Status::Invalid(cat(name, ": data pointer is null but the tensor has ", t.numel(), " elements"));
  return Status::Ok();
}

Status check_same_device(const char* name, const TensorDesc& t, const TensorDesc& ref, const char* ref_name) {
  if (t.device_index != ref.device_index)
    return Status::Invalid(cat(name, ": is on cuda:", t.device_index, " but ", ref_name, " is on cuda:", ref.device_index));
  return Status::Ok();
}

Status check_input_dtype(const char* name, const TensorDesc& t) {
  if (t.dtype != DType::kFloat16 && t.dtype != DType::kBFloat16)
    return Status::Invalid(cat(name, ": dtype ", to_string(t.dtype), " is not supported; expected float16 or bfloat16"));
  return Status::Ok();
}

Status check_dtype_matches(const char* name, const TensorDesc& t, const TensorDesc& q) {
  if (t.dtype != q.dtype)
    return Status::Invalid(cat(name, ": dtype ", to_string(t.dtype), " does not match q's dtype ", to_string(q.dtype)));
  return Status::Ok();
}

Status check_head_dim(const char* name, const char* what, int64_t d) {
  if (d <= 0) return Status::Invalid(cat(name, ": ", what, "=", d, " must be positive"));
  if (d > kMaxHeadDim) return Status::Invalid(cat(name, ": ", what, "=", d, " exceeds the maximum of ", kMaxHeadDim));
  if (d % kHeadDimMultiple != 0)
    return Status::Invalid(cat(name, ": ", what, "=", d, " must be a multiple of ", kHeadDimMultiple));
  return Status::Ok();
}

// The outer strides and the base pointer must keep every row 16-byte aligned.
Status check_alignment(const char* name, const TensorDesc& t) {
  const int64_t esize = element_size(t.dtype);
  if (esize == 0) return Status::Ok();
  const int64_t multiple = kAlignBytes / esize;
  for (int i = 0; i + 1 < t.rank; ++i) {
    if (t.shape[i] > 1 && t.stride[i] % multiple != 0)
      return Status::Invalid(cat(name, ": stride[", i, "]=", t.stride[i], " is not a multiple of ", multiple,
                                 " elements; rows must start on 16-byte boundaries"));
  }
  if (t.numel() > 0 && reinterpret_cast<uintptr_t>(t.data) % kAlignBytes != 0)
    return Status::Invalid(cat(name, ": data pointer is not 16-byte aligned"));
  return Status::Ok();
}

Status check_dims(const char* name, const TensorDesc& t, std::initializer_list<int64_t> expected) {
  int i = 0;
  bool same = static_cast<int>(expected.size()) == t.rank;
  for (int64_t d : expected) same = same && t.shape[i++] == d;
  if (!same) return Status::Invalid(cat(name, ": shape ", shape_str(t), " does not match the expected ", shape_str(expected)));
  return Status::Ok();
}

Status check_lse(const char* name, const TensorDesc& t, std::initializer_list<int64_t> expected, const char* dims,
                 const TensorDesc& q) {
  FC_TRY(check_tensor(name, t, static_cast<int>(expected.size()), dims));
  FC_TRY(check_same_device(name, t, q, "q"));
  if (t.dtype != DType::kFloat32)
    return Status::Invalid(cat(name, ": dtype ", to_string(t.dtype), " must be float32"));
  FC_TRY(check_dims(name, t, expected));
  if (t.numel() == 0) return Status::Ok();
  int64_t stride = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    if (t.shape[i] > 1 && t.stride[i] != stride)
      return Status::Invalid(cat(name, ": must be contiguous ", dims, "; stride[", i, "]=", t.stride[i],
                                 " should be ", stride));
    stride *= t.shape[i];
  }
  return Status::Ok();
}

Status check_options(const AttentionOptions& o, ProblemDesc* p) {
  if (o.window_left < -1)
    return Status::Invalid(cat("window_left=", o.window_left, " must be >= -1 (-1 = unbounded)"));
  if (o.window_right < -1)
    return Status::Invalid(cat("window_right=", o.window_right, " must be >= -1 (-1 = unbounded)"));
  if (o.causal && o.window_right > 0)
    return Status::Invalid(cat("window_right=", o.window_right, " conflicts with causal=true (causal means window_right=0)"));
  if (!std::isfinite(o.softcap) || o.softcap < 0.0f)
    return Status::Invalid(cat("softcap=", o.softcap, " must be finite and >= 0 (0 = off)"));
  if (o.softmax_scale.has_value() && !std::isfinite(*o.softmax_scale))
    return Status::Invalid(cat("softmax_scale=", *o.softmax_scale, " must be finite"));
  // The kernels subtract each row's running maximum before the exponential, which bounds p by 1
  // only for a positive scale (a zero scale would also turn masked -inf scores into NaN).
  if (o.softmax_scale.has_value() && !(*o.softmax_scale > 0.0f))
    return Status::Invalid(cat("softmax_scale=", *o.softmax_scale, " must be > 0"));
  if (!(o.dropout_p >= 0.0f && o.dropout_p < 1.0f))
    return Status::Invalid(cat("dropout_p=", o.dropout_p, " must be in [0, 1)"));
  if (o.dropout_p != 0.0f)
    return Status::NotSupported(cat("dropout_p=", o.dropout_p, ": dropout is not built yet; only dropout_p=0 is supported"));
  switch (o.backend) {
    case Backend::kAuto:
    case Backend::kSm80:
    case Backend::kSm90: break;
    default: return Status::Invalid(cat("backend=", static_cast<int>(o.backend), " is not a known backend (auto, sm80, sm90)"));
  }
  p->softmax_scale = o.softmax_scale.has_value() ? *o.softmax_scale
                                                 : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p->head_dim)));
  p->window = make_window(o.causal, o.window_left, o.window_right);
  p->softcap = o.softcap;
  p->deterministic = o.deterministic;
  p->backend = o.backend;
  return Status::Ok();
}

Status check_alibi(const TensorDesc& t, const TensorDesc& q, ProblemDesc* p) {
  if (!t.given()) return Status::Ok();
  const char* name = "alibi_slopes";
  if (t.rank != 1 && t.rank != 2)
    return Status::Invalid(cat(name, ": has ", t.rank, " dims ", shape_str(t), "; expected (heads_q=", p->heads_q,
                               ") or (batch=", p->batch, ", heads_q=", p->heads_q, ")"));
  FC_TRY(check_tensor(name, t, t.rank, "(heads_q) or (batch, heads_q)"));
  FC_TRY(check_same_device(name, t, q, "q"));
  if (t.dtype != DType::kFloat32) return Status::Invalid(cat(name, ": dtype ", to_string(t.dtype), " must be float32"));
  const bool ok = (t.rank == 1 && t.shape[0] == p->heads_q) ||
                  (t.rank == 2 && t.shape[0] == p->batch && t.shape[1] == p->heads_q);
  if (!ok)
    return Status::Invalid(cat(name, ": shape ", shape_str(t), " must be (heads_q=", p->heads_q, ") or (batch=", p->batch,
                               ", heads_q=", p->heads_q, ")"));
  if (t.rank == 2 && t.shape[0] > 1 && t.stride[0] != t.shape[1])
    return Status::Invalid(cat(name, ": must be contiguous; stride[0]=", t.stride[0], " should be ", t.shape[1]));
  p->has_alibi = true;
  p->alibi_per_batch = t.rank == 2;
  return Status::Ok();
}

// Host copy of cu_seqlens, when the caller gave one: starts at 0, never decreases, fits the total,
// and no sequence is longer than max_seqlen.
Status check_cu_seqlens_host(const char* name, const int32_t* cu, int64_t batch, int64_t total, const char* total_name,
                             int64_t max_seqlen, const char* max_name) {
  if (cu == nullptr) return Status::Ok();
  if (cu[0] != 0) return Status::Invalid(cat(name, ": ", name, "[0]=", cu[0], " must be 0"));
  for (int64_t b = 0; b < batch; ++b) {
    if (cu[b + 1] < cu[b])
      return Status::Invalid(cat(name, ": must be non-decreasing, but ", name, "[", b + 1, "]=", cu[b + 1], " < ", name,
                                 "[", b, "]=", cu[b]));
    if (cu[b + 1] - cu[b] > max_seqlen)
      return Status::Invalid(cat(max_name, "=", max_seqlen, " is smaller than sequence ", b, "'s length ", cu[b + 1] - cu[b]));
  }
  if (cu[batch] > total)
    return Status::Invalid(cat(name, ": ", name, "[", batch, "]=", cu[batch], " exceeds ", total_name, "=", total));
  return Status::Ok();
}

Status check_cu_seqlens(const char* name, const TensorDesc& t, const TensorDesc& q) {
  FC_TRY(check_tensor(name, t, 1, "(batch + 1)"));
  FC_TRY(check_same_device(name, t, q, "q"));
  if (t.dtype != DType::kInt32) return Status::Invalid(cat(name, ": dtype ", to_string(t.dtype), " must be int32"));
  if (t.shape[0] < 1) return Status::Invalid(cat(name, ": length 0; it must hold batch + 1 >= 1 offsets"));
  return Status::Ok();
}

// The 16-bit tensors: dtype, device, alignment.
Status check_io(const char* name, const TensorDesc& t, const TensorDesc& q) {
  FC_TRY(check_dtype_matches(name, t, q));
  FC_TRY(check_same_device(name, t, q, "q"));
  return check_alignment(name, t);
}

// Everything q/k/v/out share between dense and varlen, given the layout-specific dims.
// q_dims/k_dims: (batch, seq, heads, d) or (total, heads, d).
template <class Args>
Status check_common(const Args& a, int rank, const char* q_dims, const char* k_dims, const char* v_dims,
                    const char* o_dims, ProblemDesc* p) {
  FC_TRY(check_tensor("q", a.q, rank, q_dims));
  FC_TRY(check_input_dtype("q", a.q));
  FC_TRY(check_tensor("k", a.k, rank, k_dims));
  FC_TRY(check_dtype_matches("k", a.k, a.q));
  FC_TRY(check_same_device("k", a.k, a.q, "q"));
  FC_TRY(check_tensor("v", a.v, rank, v_dims));
  FC_TRY(check_dtype_matches("v", a.v, a.q));
  FC_TRY(check_same_device("v", a.v, a.q, "q"));
  FC_TRY(check_tensor("out", a.out, rank, o_dims));
  FC_TRY(check_dtype_matches("out", a.out, a.q));
  FC_TRY(check_same_device("out", a.out, a.q, "q"));

  const int h = rank - 2;  // index of the heads dim
  p->dtype = a.q.dtype;
  p->heads_q = a.q.shape[h];
  p->heads_kv = a.k.shape[h];
  p->head_dim = a.q.shape[h + 1];
  p->head_dim_v = a.v.shape[h + 1];
  FC_TRY(check_head_dim("q", "head_dim", p->head_dim));
  if (a.k.shape[h + 1] != p->head_dim)
    return Status::Invalid(cat("k: head_dim=", a.k.shape[h + 1], " does not match q's head_dim=", p->head_dim));
  FC_TRY(check_head_dim("v", "head_dim_v", p->head_dim_v));
  if (p->heads_q <= 0) return Status::Invalid(cat("q: heads_q=", p->heads_q, " must be positive"));
  if (p->heads_kv <= 0) return Status::Invalid(cat("k: heads_kv=", p->heads_kv, " must be positive"));
  if (a.v.shape[h] != p->heads_kv)
    return Status::Invalid(cat("v: heads_kv=", a.v.shape[h], " does not match k's heads_kv=", p->heads_kv));
  if (p->heads_q % p->heads_kv != 0)
    return Status::Invalid(cat("k: heads_kv=", p->heads_kv, " does not divide heads_q=", p->heads_q));
  // Alignment last: a bad head_dim (59) also breaks the row strides of a contiguous tensor, and the
  // head_dim message is the one that names the cause.
  FC_TRY(check_alignment("q", a.q));
  FC_TRY(check_alignment("k", a.k));
  FC_TRY(check_alignment("v", a.v));
  return check_alignment("out", a.out);
}

Status validate_dense(const TensorDesc& q, const TensorDesc& k, const TensorDesc& v, ProblemDesc* p) {
  p->batch = q.shape[0];
  p->seqlen_q = q.shape[1];
  p->seqlen_k = k.shape[1];
  p->total_q = p->batch * p->seqlen_q;
  p->total_k = p->batch * p->seqlen_k;
  if (k.shape[0] != p->batch) return Status::Invalid(cat("k: batch=", k.shape[0], " does not match q's batch=", p->batch));
  if (v.shape[0] != p->batch) return Status::Invalid(cat("v: batch=", v.shape[0], " does not match q's batch=", p->batch));
  if (v.shape[1] != p->seqlen_k)
    return Status::Invalid(cat("v: seqlen_k=", v.shape[1], " does not match k's seqlen_k=", p->seqlen_k));
  if (p->seqlen_q > kMaxSeqlen)
    return Status::Invalid(cat("q: seqlen_q=", p->seqlen_q, " exceeds the maximum of ", kMaxSeqlen, " (2^29)"));
  if (p->seqlen_k > kMaxSeqlen)
    return Status::Invalid(cat("k: seqlen_k=", p->seqlen_k, " exceeds the maximum of ", kMaxSeqlen, " (2^29)"));
  return Status::Ok();
}

template <class Args>
Status validate_varlen(const Args& a, ProblemDesc* p) {
  FC_TRY(check_cu_seqlens("cu_seqlens_q", a.cu_seqlens_q, a.q));
  FC_TRY(check_cu_seqlens("cu_seqlens_k", a.cu_seqlens_k, a.q));
  if (a.cu_seqlens_k.shape[0] != a.cu_seqlens_q.shape[0])
    return Status::Invalid(cat("cu_seqlens_k: length ", a.cu_seqlens_k.shape[0], " does not match cu_seqlens_q's length ",
                               a.cu_seqlens_q.shape[0], " (both are batch + 1)"));
  p->varlen = true;
  p->batch = a.cu_seqlens_q.shape[0] - 1;
  p->total_q = a.q.shape[0];
  p->total_k = a.k.shape[0];
  if (a.v.shape[0] != p->total_k)
    return Status::Invalid(cat("v: total_k=", a.v.shape[0], " does not match k's total_k=", p->total_k));
  if (a.max_seqlen_q < 0) return Status::Invalid(cat("max_seqlen_q=", a.max_seqlen_q, " must be >= 0"));
  if (a.max_seqlen_k < 0) return Status::Invalid(cat("max_seqlen_k=", a.max_seqlen_k, " must be >= 0"));
  p->seqlen_q = a.max_seqlen_q;
  p->seqlen_k = a.max_seqlen_k;
  if (p->seqlen_q > kMaxSeqlen)
    return Status::Invalid(cat("max_seqlen_q=", p->seqlen_q, " exceeds the maximum of ", kMaxSeqlen, " (2^29)"));
  if (p->seqlen_k > kMaxSeqlen)
    return Status::Invalid(cat("max_seqlen_k=", p->seqlen_k, " exceeds the maximum of ", kMaxSeqlen, " (2^29)"));
  FC_TRY(check_cu_seqlens_host("cu_seqlens_q", a.cu_seqlens_q_host, p->batch, p->total_q, "total_q", p->seqlen_q,
                               "max_seqlen_q"));
  FC_TRY(check_cu_seqlens_host("cu_seqlens_k", a.cu_seqlens_k_host, p->batch, p->total_k, "total_k", p->seqlen_k,
                               "max_seqlen_k"));
  return Status::Ok();
}

constexpr const char* kDenseQ = "(batch, seqlen_q, heads_q, head_dim)";
constexpr const char* kDenseK = "(batch, seqlen_k, heads_kv, head_dim)";
constexpr const char* kDenseV = "(batch, seqlen_k, heads_kv, head_dim_v)";
constexpr const char* kDenseO = "(batch, seqlen_q, heads_q, head_dim_v)";
constexpr const char* kDenseLse = "(batch, heads_q, seqlen_q)";
constexpr const char* kVarQ = "(total_q, heads_q, head_dim)";
constexpr const char* kVarK = "(total_k, heads_kv, head_dim)";
constexpr const char* kVarV = "(total_k, heads_kv, head_dim_v)";
constexpr const char* kVarO = "(total_q, heads_q, head_dim_v)";
constexpr const char* kVarLse = "(heads_q, total_q)";

// Gradients and dout: dtype/device/alignment and the shape of the tensor they mirror.
Status check_like(const char* name, const TensorDesc& t, const TensorDesc& like, const char* dims, const TensorDesc& q) {
  FC_TRY(check_tensor(name, t, like.rank, dims));
  FC_TRY(check_io(name, t, q));
  for (int i = 0; i < like.rank; ++i)
    if (t.shape[i] != like.shape[i])
      return Status::Invalid(cat(name, ": shape ", shape_str(t), " does not match the expected ", shape_str(like)));
  return Status::Ok();
}

}  // namespace

Status validate(const FwdArgs& a, ProblemDesc* p) {
  *p = ProblemDesc{};
  FC_TRY(check_common(a, 4, kDenseQ, kDenseK, kDenseV, kDenseO, p));
  FC_TRY(validate_dense(a.q, a.k, a.v, p));
  FC_TRY(check_dims("out", a.out, {p->batch, p->seqlen_q, p->heads_q, p->head_dim_v}));
  if (a.lse.given()) {
    FC_TRY(check_lse("lse", a.lse, {p->batch, p->heads_q, p->seqlen_q}, kDenseLse, a.q));
    p->has_lse = true;
  }
  FC_TRY(check_alibi(a.options.alibi_slopes, a.q, p));
  return check_options(a.options, p);
}

Status validate(const VarlenFwdArgs& a, ProblemDesc* p) {
  *p = ProblemDesc{};
  FC_TRY(check_common(a, 3, kVarQ, kVarK, kVarV, kVarO, p));
  FC_TRY(validate_varlen(a, p));
  FC_TRY(check_dims("out", a.out, {p->total_q, p->heads_q, p->head_dim_v}));
  if (a.lse.given()) {
    FC_TRY(check_lse("lse", a.lse, {p->heads_q, p->total_q}, kVarLse, a.q));
    p->has_lse = true;
  }
  FC_TRY(check_alibi(a.options.alibi_slopes, a.q, p));
  return check_options(a.options, p);
}

Status validate(const BwdArgs& a, ProblemDesc* p) {
  *p = ProblemDesc{};
  p->backward = true;
  FC_TRY(check_common(a, 4, kDenseQ, kDenseK, kDenseV, kDenseO, p));
  FC_TRY(validate_dense(a.q, a.k, a.v, p));
  p->backward = true;
  FC_TRY(check_dims("out", a.out, {p->batch, p->seqlen_q, p->heads_q, p->head_dim_v}));
  FC_TRY(check_like("dout", a.dout, a.out, kDenseO, a.q));
  FC_TRY(check_lse("lse", a.lse, {p->batch, p->heads_q, p->seqlen_q}, kDenseLse, a.q));
  p->has_lse = true;
  FC_TRY(check_like("dq", a.dq, a.q, kDenseQ, a.q));
  FC_TRY(check_like("dk", a.dk, a.k, kDenseK, a.q));
  FC_TRY(check_like("dv", a.dv, a.v, kDenseV, a.q));
  FC_TRY(check_alibi(a.options.alibi_slopes, a.q, p));
  return check_options(a.options, p);
}

Status validate(const VarlenBwdArgs& a, ProblemDesc* p) {
  *p = ProblemDesc{};
  FC_TRY(check_common(a, 3, kVarQ, kVarK, kVarV, kVarO, p));
  FC_TRY(validate_varlen(a, p));
  p->backward = true;
  FC_TRY(check_dims("out", a.out, {p->total_q, p->heads_q, p->head_dim_v}));
  FC_TRY(check_like("dout", a.dout, a.out, kVarO, a.q));
  FC_TRY(check_lse("lse", a.lse, {p->heads_q, p->total_q}, kVarLse, a.q));
  p->has_lse = true;
  FC_TRY(check_like("dq", a.dq, a.q, kVarQ, a.q));
  FC_TRY(check_like("dk", a.dk, a.k, kVarK, a.q));
  FC_TRY(check_like("dv", a.dv, a.v, kVarV, a.q));
  FC_TRY(check_alibi(a.options.alibi_slopes, a.q, p));
  return check_options(a.options, p);
}

int32_t head_dim_bucket(int64_t d, const std::vector<int32_t>& buckets) {
  int32_t best = 0;
  for (int32_t b : buckets)
    if (b >= d && (best == 0 || b < best)) best = b;
  return best;
}

namespace {

bool runs_on(const BuildInfo& build, int cc) {
  // Machine code runs on GPUs of the same major version and an equal or newer minor; PTX is
  // compiled by the driver for any newer GPU.
  for (int s : build.sass)
    if (s / 10 == cc / 10 && s <= cc) return true;
  for (int v : build.ptx)
    if (v <= cc) return true;
  return false;
}

std::string archs_hint(int cc) {
  return cc >= 90 && cc < 100 ? std::string("90a") : std::to_string(cc);
}

}  // namespace

Status select_kernel(const ProblemDesc& p, const std::vector<KernelKey>& keys, const char* family, const BuildInfo& build,
                     const DeviceInfo& dev, KernelKey* selected) {
  if (dev.cc() < 80)
    return Status::NotSupported(cat("device ", dev.index, " (", dev.name, ") has compute capability ", dev.cc_major, ".",
                                    dev.cc_minor, "; flashcute needs 8.0 or newer (Ampere, Ada, Hopper)"));
  if (keys.empty())
    return Status::NotSupported(cat("no attention ", family, " kernel is compiled into this build (", family,
                                    " kernels are listed in src/kernels.manifest)"));
  // Which path: SM90 on Hopper when compiled for this (dtype, bucket), else SM80.
  const bool sm90_device = dev.cc_major == 9;
  auto has = [&](Arch arch) {
    return std::any_of(keys.begin(), keys.end(), [&](const KernelKey& k) { return k.arch == arch; });
  };
  Arch arch = Arch::kSm80;
  if (p.backend == Backend::kSm90) {
    if (!has(Arch::kSm90))
      return Status::NotSupported(cat("backend=sm90: the SM90 ", family,
                                      " path is not compiled into this build; rebuild with -DFLASHCUTE_ARCHS including 90a"));
    if (!sm90_device)
      return Status::NotSupported(cat("backend=sm90 needs a compute capability 9.0 GPU; device ", dev.index, " (", dev.name,
                                      ") is ", dev.cc_major, ".", dev.cc_minor));
    arch = Arch::kSm90;
  } else if (p.backend == Backend::kAuto && sm90_device && has(Arch::kSm90)) {
    arch = Arch::kSm90;
  }
  if (arch == Arch::kSm80 && !runs_on(build, dev.cc()))
    return Status::NotSupported(cat("this build has no code for compute capability ", dev.cc_major, ".", dev.cc_minor,
                                    " (device ", dev.index, ", ", dev.name, "); rebuild with -DFLASHCUTE_ARCHS including ",
                                    archs_hint(dev.cc())));

  std::vector<int32_t> buckets;
  bool dtype_any = false;
  for (const KernelKey& k : keys) {
    if (k.dtype == p.dtype) dtype_any = true;
    if (k.arch == arch && k.dtype == p.dtype) buckets.push_back(k.head_dim);
  }
  if (!dtype_any)
    return Status::NotSupported(cat("q: dtype ", to_string(p.dtype), " is not compiled into this build; rebuild with "
                                    "-DFLASHCUTE_DTYPES including ", p.dtype == DType::kFloat16 ? "fp16" : "bf16"));
  const int64_t d = std::max(p.head_dim, p.head_dim_v);
  int32_t bucket = head_dim_bucket(d, buckets);
  if (arch == Arch::kSm90 && p.backend == Backend::kAuto) {
    // Auto keeps the SM90 path only when its bucket is as tight as the SM80 path's: padding d=64
    // up to an SM90 d=128 kernel would double the work.
    std::vector<int32_t> sm80_buckets;
    for (const KernelKey& k : keys)
      if (k.arch == Arch::kSm80 && k.dtype == p.dtype) sm80_buckets.push_back(k.head_dim);
    const int32_t sm80_bucket = head_dim_bucket(d, sm80_buckets);
    if (sm80_bucket != 0 && (bucket == 0 || sm80_bucket < bucket)) {
      arch = Arch::kSm80;
      buckets = sm80_buckets;
      bucket = sm80_bucket;
    }
  }
  if (bucket == 0) {
    std::sort(buckets.begin(), buckets.end());
    buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
    const int32_t need = head_dim_bucket(d, {64, 96, 128, 192, 256});
    return Status::NotSupported(cat("q: head_dim=", d, " needs head-dim bucket ", need, ", which is not compiled into this "
                                    "build for ", to_string(arch), "/", to_string(p.dtype), " (compiled: ", list_str(buckets),
                                    "); rebuild with -DFLASHCUTE_HEAD_DIMS including ", need));
  }
  *selected = KernelKey{arch, p.dtype, bucket, Variant::kDefault};
  return Status::Ok();
}

Status check_workspace(const Workspace& ws, size_t needed, const char* sizer) {
  if (ws.bytes < needed)
    return Status::Invalid(cat("workspace: ", ws.bytes, " bytes given, ", needed, " needed (see ", sizer, ")"));
  if (needed > 0 && ws.data == nullptr)
    return Status::Invalid(cat("workspace: data pointer is null but ", needed, " bytes are needed"));
  if (needed > 0 && reinterpret_cast<uintptr_t>(ws.data) % 256 != 0)
    return Status::Invalid("workspace: data pointer must be 256-byte aligned");
  return Status::Ok();
}

}  // namespace flashcute
