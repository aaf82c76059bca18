#pragma once
// Argument structs of the public API: forward, backward, and their varlen forms.
//
// Layouts (flash_attn's, DESIGN.md "The contract"):
//   dense:  q (batch, seqlen_q, heads_q, d)   k (batch, seqlen_k, heads_kv, d)
//           v (batch, seqlen_k, heads_kv, d_v) out (batch, seqlen_q, heads_q, d_v)
//           lse fp32 (batch, heads_q, seqlen_q)
//   varlen: q (total_q, heads_q, d)  k (total_k, heads_kv, d)  v (total_k, heads_kv, d_v)
//           out (total_q, heads_q, d_v)  lse fp32 (heads_q, total_q)
//           cu_seqlens_q / cu_seqlens_k int32 (batch + 1), non-decreasing, starting at 0.
// Any strides for batch/seq/head; the last dimension must be contiguous (stride 1).

#include <cstddef>
#include <cstdint>
#include <optional>

#include "flashcute/tensor.h"

struct CUstream_st;  // cudaStream_t without including the CUDA headers

namespace flashcute {

using Stream = CUstream_st*;  // nullptr = the legacy default stream

// Which compiled path runs the problem. kAuto picks the best path for the GPU.
enum class Backend : int32_t { kAuto = 0, kSm80 = 1, kSm90 = 2 };

const char* to_string(Backend backend);

struct AttentionOptions {
  // Scale applied to QK^T. Empty = 1/sqrt(d). Must be finite and > 0.
  std::optional<float> softmax_scale;
  // Causal mask aligned bottom-right (query i sees key j <= i + seqlen_k - seqlen_q).
  // Equivalent to window_right = 0; combining it with window_right > 0 is an error.
  bool causal = false;
  // Sliding window aligned bottom-right: query i sees key j iff
  // i + off - window_left <= j <= i + off + window_right, off = seqlen_k - seqlen_q; -1 = unbounded.
  int64_t window_left = -1;
  int64_t window_right = -1;
  // Softcap c > 0 replaces s*scale by c*tanh(s*scale/c); 0 = off.
  float softcap = 0.0f;
  // ALiBi slopes, fp32 (heads_q) or (batch, heads_q); adds -slope * |i + off - j|. Optional.
  TensorDesc alibi_slopes;
  // Dropout probability. Dropout is not built yet: anything but 0 is rejected.
  float dropout_p = 0.0f;
  // Backward only: bitwise reproducible dQ (and dK/dV under GQA) at some cost in speed.
  bool deterministic = false;
  Backend backend = Backend::kAuto;
};

// Caller-owned device scratch memory. Size it with *_workspace_size(); the library never allocates.
// Optional for the forward (api.h), required by the backward.
struct Workspace {
  void* data = nullptr;
  size_t bytes = 0;
  // Forward only. true: the caller promises the forward's fwd_workspace_size bytes are zero (zeroed once,
  // then used by forward calls only), so the SM90 launcher skips resetting its tile counter; its
  // kernel leaves the counter zero again when it completes. false: the launcher resets the counter
  // on the call's stream before each launch (a 4-byte cudaMemsetAsync). Ignored by the backward.
  bool zeroed = false;
};

struct FwdArgs {
  TensorDesc q, k, v;  // inputs
  TensorDesc out;      // output, dtype of q
  TensorDesc lse;      // output, fp32 (batch, heads_q, seqlen_q); optional (may be left empty)
  AttentionOptions options;
  Workspace workspace;
  Stream stream = nullptr;
};

struct VarlenFwdArgs {
  TensorDesc q, k, v, out, lse;            // rank-3 tensors; lse fp32 (heads_q, total_q), optional
  TensorDesc cu_seqlens_q, cu_seqlens_k;   // int32 (batch + 1) on the GPU
  int64_t max_seqlen_q = 0;                // >= every sequence's length (may be larger)
  int64_t max_seqlen_k = 0;
  // Optional host copies of cu_seqlens (batch + 1 values each). When given, validation also checks
  // that they start at 0, never decrease and end within total_q / total_k. The device arrays are
  // never read on the host (that would synchronize the stream).
  const int32_t* cu_seqlens_q_host = nullptr;
  const int32_t* cu_seqlens_k_host = nullptr;
  AttentionOptions options;
  Workspace workspace;
  Stream stream = nullptr;
};

struct BwdArgs {
  TensorDesc q, k, v, out, dout;  // dtype of q; out is the forward's output
  TensorDesc lse;                 // fp32 (batch, heads_q, seqlen_q), from the forward
  TensorDesc dq, dk, dv;          // outputs, shaped like q, k, v
  AttentionOptions options;
  Workspace workspace;
  Stream stream = nullptr;
};

struct VarlenBwdArgs {
  TensorDesc q, k, v, out, dout, lse, dq, dk, dv;
  TensorDesc cu_seqlens_q, cu_seqlens_k;
  int64_t max_seqlen_q = 0;
  int64_t max_seqlen_k = 0;
  const int32_t* cu_seqlens_q_host = nullptr;
  const int32_t* cu_seqlens_k_host = nullptr;
  AttentionOptions options;
  Workspace workspace;
  Stream stream = nullptr;
};

}  // namespace flashcute
