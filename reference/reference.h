#pragma once
// flashcute's oracle: exact attention on the CPU in fp64 (TESTING.md, "The oracle").
//
// Inputs are doubles holding the already-rounded fp16/bf16 values the kernel sees. Every feature of
// the contract is implemented: bottom-right causal masks and windows (via src/common/mask.h, the
// same predicate the kernels use), softcap and its gradient, ALiBi, GQA/MQA, varlen with zero-length
// sequences, arbitrary batch/seq/head strides, rows that see no key (O = 0, LSE = -inf, zero
// gradients, never NaN).
//
// Besides the golden fp64 result, `forward_lowp` / `backward_lowp` compute the same math the way an
// unfused implementation in the input dtype would (fp32 accumulation and softmax, every matrix-product
// input rounded to fp16/bf16, outputs rounded to the dtype). The tolerance rule compares the kernel's
// error against that implementation's error (tests/common/tolerance.h).

#include <cstdint>
#include <vector>

#include "flashcute/tensor.h"

namespace flashcute::ref {

// A strided view of a (batch, seq, heads, dim) array of doubles; the last dim is contiguous.
// Varlen views use stride_batch = 0 and rows offset by cu_seqlens (see Problem).
template <class T>
struct View {
  T* data = nullptr;
  int64_t stride_batch = 0;
  int64_t stride_row = 0;
  int64_t stride_head = 0;

  T* at(int64_t b, int64_t row, int64_t h) const {
    return data + b * stride_batch + row * stride_row + h * stride_head;
  }
};
using ConstView = View<const double>;
using MutView = View<double>;

struct Problem {
  int64_t batch = 1;
  int64_t seqlen_q = 0;  // dense: every sequence's length; varlen: ignored (from cu_seqlens)
  int64_t seqlen_k = 0;
  int64_t heads_q = 1;
  int64_t heads_kv = 1;
  int64_t head_dim = 0;    // d of q and k
  int64_t head_dim_v = 0;  // d of v and out; 0 = same as head_dim

  double softmax_scale = 0.0;  // 0 = 1/sqrt(head_dim)
  bool causal = false;
  int64_t window_left = -1;
  int64_t window_right = -1;
  double softcap = 0.0;  // 0 = off
  // ALiBi: empty = off; heads_q values (per head) or batch*heads_q values (per batch x head).
  std::vector<double> alibi_slopes;

  // Varlen: both empty = dense. Otherwise batch+1 non-decreasing offsets each; sequence b's rows
  // are [cu_seqlens[b], cu_seqlens[b+1]) of a (total, heads, dim) array (stride_batch unused).
  std::vector<int32_t> cu_seqlens_q;
  std::vector<int32_t> cu_seqlens_k;

  bool varlen() const { return !cu_seqlens_q.empty(); }
  int64_t dv() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
  double scale() const;
  int64_t len_q(int64_t b) const;
  int64_t len_k(int64_t b) const;
  int64_t row0_q(int64_t b) const;  // first row of sequence b in the q-side arrays
  int64_t row0_k(int64_t b) const;
  double slope(int64_t b, int64_t h) const;  // 0 when ALiBi is off
};

// LSE layout: dense (batch, heads_q, seqlen_q) contiguous; varlen (heads_q, total_q) contiguous.
// lse_index() gives the flat position of (b, h, i) in that layout.
int64_t lse_index(const Problem& p, int64_t b, int64_t h, int64_t i);
int64_t lse_size(const Problem& p);

// Golden forward in fp64: out (batch, seqlen_q, heads_q, dv) view, lse as above (natural log).
void forward(const Problem& p, ConstView q, ConstView k, ConstView v, MutView out, double* lse);

// Golden backward in fp64. dk/dv are summed over the q heads of each kv group. lse is the
// forward's (golden) lse; out is the golden out. Outputs are overwritten.
void backward(const Problem& p, ConstView q, ConstView k, ConstView v, ConstView out,
              ConstView dout, const double* lse, MutView dq, MutView dk, MutView dv);

// The same math as an unfused implementation in `dtype` (fp16/bf16) would do it: see the header
// comment. Outputs are doubles holding dtype-rounded values (lse stays fp32-rounded).
void forward_lowp(DType dtype, const Problem& p, ConstView q, ConstView k, ConstView v, MutView out,
                  double* lse);
void backward_lowp(DType dtype, const Problem& p, ConstView q, ConstView k, ConstView v,
                   ConstView out, ConstView dout, const double* lse, MutView dq, MutView dk,
                   MutView dv);

// Rounds x to the nearest fp16 / bf16 value (round-to-nearest-even, with overflow to +-inf as the
// hardware conversion does), returned as a double.
double round_to(DType dtype, double x);

// Number of worker threads the reference uses (default: hardware concurrency).
void set_num_threads(int n);

}  // namespace flashcute::ref
