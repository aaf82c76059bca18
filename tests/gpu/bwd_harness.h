#pragma once
// Harness of the GPU backward tests (test_bwd_grid.cpp, test_bwd_edge.cpp). Header-only, built on the
// forward harness (fwd_harness.h: inputs, device layouts, NaN-filled buffers, read-back, the oracle's
// problem description).
//
// One BwdCase describes a call of flashcute::bwd through the public API only. For a case the harness
//   1. draws q, k, v like the forward harness (same seed, same numbers) and dout after them (randn,
//      times input_scale);
//   2. produces the forward's out and lse: by default the fp64 oracle's (out rounded to the dtype,
//      lse rounded to fp32), so a backward failure never hides behind a forward one; with
//      Source::kGpuForward, flashcute::fwd's own out and lse (the end-to-end chain). The oracle's
//      backward sees the same out and lse as the kernel in the second case, the golden ones in the
//      first (ref::backward's contract);
//   3. uploads q, k, v, out, dout with the requested strides (NaN in every padding byte and guard),
//      fills dq, dk, dv and the whole workspace with 0xFF bytes (NaN), and calls flashcute::bwd
//      (dense or varlen, default or non-blocking stream, deterministic or not);
//   4. computes golden (ref::backward) and lp (ref::backward_lowp) gradients and applies the
//      tolerance rule of TESTING.md with R = 3 (tests/common/tolerance.h, Pass::kBackward) to dq, dk,
//      dv, plus exact checks: a query row that sees no key has dq exactly 0, a key that no query row
//      sees has dk and dv exactly 0, and nothing outside the gradients' elements is written.
// A failure message starts with one line "REPRO: ..." that names every field of the case.
// The oracle's backward is never sampled: cases keep batch*heads_q*seqlen_q*seqlen_k*(d+dv) below
// kMaxBackwardReferenceWork (about 3 s of fp64 reference on a 16-core host).

#include "fwd_harness.h"

namespace flashcute::testing {

inline constexpr double kMaxBackwardReferenceWork = 2.0e10;

enum class Source { kReference, kGpuForward };

struct BwdCase {
  FwdCase f;  // shapes, options, q/k/v/out layouts, input scale, seed, stream
  Layout layout_dout = Layout::kContiguous;
  Layout layout_dq = Layout::kContiguous, layout_dk = Layout::kContiguous, layout_dv = Layout::kContiguous;
  bool deterministic = false;
  Source source = Source::kReference;

  void set_layouts(Layout l) {
    f.set_layouts(l);
    layout_dout = layout_dq = layout_dk = layout_dv = l;
  }
  bool noncontiguous_grads() const {
    return layout_dout != Layout::kContiguous || layout_dq != Layout::kContiguous || layout_dk != Layout::kContiguous ||
           layout_dv != Layout::kContiguous;
  }
  std::string str() const {
    std::ostringstream os;
    os << f.str() << " layout(dout,dq,dk,dv)=" << to_string(layout_dout) << "," << to_string(layout_dq) << ","
       << to_string(layout_dk) << "," << to_string(layout_dv) << " deterministic=" << (deterministic ? 1 : 0)
       << " source=" << (source == Source::kReference ? "reference" : "gpu_forward");
    return os.str();
  }
  std::string name() const {
    std::string n = f.name();
    if (noncontiguous_grads()) {
      n += std::string("_G") + to_string(layout_dout)[0] + to_string(layout_dq)[0] + to_string(layout_dk)[0] +
           to_string(layout_dv)[0];
    }
    if (deterministic) n += "_det";
    if (source == Source::kGpuForward) n += "_e2e";
    return n;
  }
};

inline void PrintTo(const BwdCase& c, std::ostream* os) {
  *os << c.str();
}

// ------------------------------------------------------------------------------------------------
// Inputs.

struct BwdInputs {
  FwdInputs fwd;                // q, k, v, alibi slopes
  HostTensor dout;              // (rows_q, heads_q, dv)
  HostTensor out;               // what the kernel sees: the dtype's bits and their values
  std::vector<float> lse;       // what the kernel sees, in the LSE layout
  std::vector<double> ref_out;  // what the oracle's backward sees (logical (rows_q, heads_q, dv))
  std::vector<double> ref_lse;  // (the LSE layout)
  Status forward_status;        // Source::kGpuForward: the forward call's status
};

// q, k, v and dout only (out and lse come from produce_forward).
inline BwdInputs make_bwd_inputs(const BwdCase& c) {
  BwdInputs in;
  in.fwd = make_inputs(c.f);
  std::mt19937_64 rng(c.f.seed ^ 0xd0d0d0d0ULL);
  in.dout.resize(c.f.rows_q(), c.f.heads_q, c.f.head_dim_v());
  fill_randn(in.dout, c.f.dtype, c.f.input_scale, rng);
  return in;
}

inline ref::MutView mut_view(std::vector<double>& v, const FwdCase& c, int64_t seqlen, int64_t heads, int64_t dim) {
  ref::MutView m;
  m.data = v.data();
  m.stride_head = dim;
  m.stride_row = heads * dim;
  m.stride_batch = c.varlen() ? 0 : seqlen * m.stride_row;
  return m;
}

inline ref::ConstView const_view(const std::vector<double>& v, const FwdCase& c, int64_t seqlen, int64_t heads,
                                 int64_t dim) {
  ref::ConstView m;
  m.data = v.data();
  m.stride_head = dim;
  m.stride_row = heads * dim;
  m.stride_batch = c.varlen() ? 0 : seqlen * m.stride_row;
  return m;
}

// Fills in.out / in.lse (the kernel's) and in.ref_out / in.ref_lse (the oracle's).
inline void produce_forward(const BwdCase& c, BwdInputs& in) {
  const FwdCase& f = c.f;
  const int64_t dv = f.head_dim_v();
  in.out.resize(f.rows_q(), f.heads_q, dv);
  if (c.source == Source::kReference) {
    init_reference_threads();
    const ref::Problem p = make_problem(f, in.fwd);
    in.ref_out.assign(static_cast<size_t>(f.rows_q() * f.heads_q * dv), 0.0);
    in.ref_lse.assign(static_cast<size_t>(ref::lse_size(p)), 0.0);
    ref::forward(p, view_of(in.fwd.q, f, f.seqlen_q), view_of(in.fwd.k, f, f.seqlen_k),
                 view_of(in.fwd.v, f, f.seqlen_k), mut_view(in.ref_out, f, f.seqlen_q, f.heads_q, dv),
                 in.ref_lse.data());
    for (size_t i = 0; i < in.ref_out.size(); ++i) in.out.set(f.dtype, static_cast<int64_t>(i), in.ref_out[i]);
    in.lse.resize(in.ref_lse.size());
    for (size_t i = 0; i < in.ref_lse.size(); ++i) in.lse[i] = static_cast<float>(in.ref_lse[i]);
    return;
  }
  // flashcute::fwd through the public API, contiguous out, legacy stream.
  FwdCase fc = f;
  fc.layout_out = Layout::kContiguous;
  fc.stream = StreamKind::kLegacyDefault;
  fc.with_lse = true;
  const GpuResult g = run_gpu(fc, in.fwd);
  in.forward_status = g.status;
  if (!g.status.ok()) return;
  for (size_t i = 0; i < g.out.size(); ++i) in.out.set_bits(f.dtype, static_cast<int64_t>(i), g.out[i]);
  in.lse = g.lse;
  in.ref_out = in.out.vals;
  in.ref_lse.assign(g.lse.begin(), g.lse.end());
}

// ------------------------------------------------------------------------------------------------
// Running the kernel.

struct BwdGpuResult {
  Status status;
  std::vector<uint16_t> dq, dk, dv;  // logical (rows, heads, dim)
  std::string outside_written;       // non-empty: the kernel wrote outside a gradient's elements
  bool untouched = true;             // no element of dq, dk, dv was written (expected on error)
};

struct BwdDeviceState {
  DeviceTensor16 q, k, v, out, dout, dq, dk, dv;
  DeviceBuffer lse, alibi, cu_q, cu_k, workspace;
  std::vector<int32_t> cu_q_host, cu_k_host;
  BwdArgs dense;
  VarlenBwdArgs var;
  bool varlen = false;
};

inline void prepare_bwd_device(const BwdCase& c, const BwdInputs& in, BwdDeviceState* st) {
  const FwdCase& f = c.f;
  const bool vl = f.varlen();
  st->varlen = vl;
  const int64_t B = f.nbatch();
  const int64_t sq = vl ? f.rows_q() : f.seqlen_q;
  const int64_t sk = vl ? f.rows_k() : f.seqlen_k;
  const int64_t dv = f.head_dim_v();
  st->q = upload(in.fwd.q, make_layout(f.layout_q, vl, B, sq, f.heads_q, f.d));
  st->k = upload(in.fwd.k, make_layout(f.layout_k, vl, B, sk, f.heads_kv, f.d));
  st->v = upload(in.fwd.v, make_layout(f.layout_v, vl, B, sk, f.heads_kv, dv));
  st->out = upload(in.out, make_layout(f.layout_out, vl, B, sq, f.heads_q, dv));
  st->dout = upload(in.dout, make_layout(c.layout_dout, vl, B, sq, f.heads_q, dv));
  st->dq = alloc_output(make_layout(c.layout_dq, vl, B, sq, f.heads_q, f.d));
  st->dk = alloc_output(make_layout(c.layout_dk, vl, B, sk, f.heads_kv, f.d));
  st->dv = alloc_output(make_layout(c.layout_dv, vl, B, sk, f.heads_kv, dv));
  st->lse = upload_vector(in.lse);

  AttentionOptions opt = make_options(f);
  opt.deterministic = c.deterministic;
  if (f.alibi != Alibi::kNone) {
    st->alibi = upload_vector(in.fwd.alibi);
    opt.alibi_slopes = f.alibi == Alibi::kPerHead ? make_tensor_1d(st->alibi.get(), DType::kFloat32, f.heads_q)
                                                  : make_tensor_2d(st->alibi.get(), DType::kFloat32, B, f.heads_q);
  }
  const DType dt = f.dtype;
  const auto fill = [&](auto& a) {
    a.q = st->q.layout.desc(st->q.data(), dt);
    a.k = st->k.layout.desc(st->k.data(), dt);
    a.v = st->v.layout.desc(st->v.data(), dt);
    a.out = st->out.layout.desc(st->out.data(), dt);
    a.dout = st->dout.layout.desc(st->dout.data(), dt);
    a.dq = st->dq.layout.desc(st->dq.data(), dt);
    a.dk = st->dk.layout.desc(st->dk.data(), dt);
    a.dv = st->dv.layout.desc(st->dv.data(), dt);
    a.options = opt;
  };
  if (!vl) {
    st->dense = BwdArgs{};
    fill(st->dense);
    st->dense.lse = make_tensor_3d(st->lse.get(), DType::kFloat32, B, f.heads_q, f.seqlen_q);
  } else {
    VarlenBwdArgs& a = st->var;
    a = VarlenBwdArgs{};
    fill(a);
    a.lse = make_tensor_2d(st->lse.get(), DType::kFloat32, f.heads_q, f.rows_q());
    st->cu_q_host = f.cu_seqlens_q;
    st->cu_k_host = f.cu_seqlens_k;
    st->cu_q = upload_vector(f.cu_seqlens_q);
    st->cu_k = upload_vector(f.cu_seqlens_k);
    a.cu_seqlens_q = make_tensor_1d(st->cu_q.get(), DType::kInt32, B + 1);
    a.cu_seqlens_k = make_tensor_1d(st->cu_k.get(), DType::kInt32, B + 1);
    a.max_seqlen_q = f.max_seqlen_q > 0 ? f.max_seqlen_q : f.true_max_q();
    a.max_seqlen_k = f.max_seqlen_k > 0 ? f.max_seqlen_k : f.true_max_k();
    if (f.pass_host_cu) {
      a.cu_seqlens_q_host = st->cu_q_host.data();
      a.cu_seqlens_k_host = st->cu_k_host.data();
    }
  }
  // Workspace sized by the API and filled with NaN: the kernels must initialize what they read.
  size_t ws = 0;
  const Status s = vl ? bwd_workspace_size(st->var, &ws) : bwd_workspace_size(st->dense, &ws);
  if (s.ok() && ws > 0) {
    st->workspace.allocate(ws);
    FC_HARNESS_CUDA(cudaMemset(st->workspace.get(), 0xFF, ws));
  }
  const Workspace w{st->workspace.get(), st->workspace.bytes()};
  st->dense.workspace = w;
  st->var.workspace = w;
  FC_HARNESS_CUDA(cudaDeviceSynchronize());  // a non-blocking stream does not wait for the uploads
}

inline Status call_bwd(BwdDeviceState* st, Stream stream) {
  st->dense.stream = stream;
  st->var.stream = stream;
  const Status s = st->varlen ? bwd(st->var) : bwd(st->dense);
  FC_HARNESS_CUDA(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)));
  FC_HARNESS_CUDA(cudaGetLastError());
  return s;
}

inline BwdGpuResult read_bwd_result(const BwdCase& c, const BwdDeviceState& st) {
  const FwdCase& f = c.f;
  BwdGpuResult g;
  ReadBack q = read_back(st.dq, f.rows_q(), f.heads_q, f.d);
  ReadBack k = read_back(st.dk, f.rows_k(), f.heads_kv, f.d);
  ReadBack v = read_back(st.dv, f.rows_k(), f.heads_kv, f.head_dim_v());
  for (const ReadBack* rb : {&q, &k, &v}) {
    if (g.outside_written.empty() && !rb->outside_written.empty()) {
      g.outside_written = std::string(rb == &q ? "dq: " : rb == &k ? "dk: " : "dv: ") + rb->outside_written;
    }
  }
  g.untouched = q.all_untouched && k.all_untouched && v.all_untouched;
  g.dq = std::move(q.elems);
  g.dk = std::move(k.elems);
  g.dv = std::move(v.elems);
  return g;
}

inline BwdGpuResult run_bwd_gpu(const BwdCase& c, const BwdInputs& in) {
  BwdDeviceState st;
  prepare_bwd_device(c, in, &st);
  TestStream stream(c.f.stream == StreamKind::kNonBlocking);
  const Status s = call_bwd(&st, stream.api());
  BwdGpuResult g = read_bwd_result(c, st);
  g.status = s;
  return g;
}

// ------------------------------------------------------------------------------------------------
// The oracle.

struct BwdRefResult {
  std::vector<double> dq_golden, dk_golden, dv_golden, dq_lp, dk_lp, dv_lp;  // logical (rows, heads, dim)
};

inline BwdRefResult compute_bwd_reference(const BwdCase& c, const BwdInputs& in) {
  const FwdCase& f = c.f;
  if (f.work() > kMaxBackwardReferenceWork) {
    throw std::logic_error("backward test case too big for the full fp64 reference: " + c.str());
  }
  init_reference_threads();
  const ref::Problem p = make_problem(f, in.fwd);
  const int64_t dv = f.head_dim_v();
  BwdRefResult r;
  const size_t nq = static_cast<size_t>(f.rows_q() * f.heads_q * f.d);
  const size_t nk = static_cast<size_t>(f.rows_k() * f.heads_kv * f.d);
  const size_t nv = static_cast<size_t>(f.rows_k() * f.heads_kv * dv);
  r.dq_golden.assign(nq, kNaN), r.dq_lp.assign(nq, kNaN);
  r.dk_golden.assign(nk, kNaN), r.dk_lp.assign(nk, kNaN);
  r.dv_golden.assign(nv, kNaN), r.dv_lp.assign(nv, kNaN);
  const ref::ConstView qv = view_of(in.fwd.q, f, f.seqlen_q), kv = view_of(in.fwd.k, f, f.seqlen_k),
                       vv = view_of(in.fwd.v, f, f.seqlen_k), gv = view_of(in.dout, f, f.seqlen_q);
  const ref::ConstView ov = const_view(in.ref_out, f, f.seqlen_q, f.heads_q, dv);
  ref::backward(p, qv, kv, vv, ov, gv, in.ref_lse.data(), mut_view(r.dq_golden, f, f.seqlen_q, f.heads_q, f.d),
                mut_view(r.dk_golden, f, f.seqlen_k, f.heads_kv, f.d),
                mut_view(r.dv_golden, f, f.seqlen_k, f.heads_kv, dv));
  ref::backward_lowp(
      f.dtype, p, qv, kv, vv, ov, gv, in.ref_lse.data(), mut_view(r.dq_lp, f, f.seqlen_q, f.heads_q, f.d),
      mut_view(r.dk_lp, f, f.seqlen_k, f.heads_kv, f.d), mut_view(r.dv_lp, f, f.seqlen_k, f.heads_kv, dv));
  return r;
}

// ------------------------------------------------------------------------------------------------
// Checking.

struct BwdOutcome {
  bool ok = true;
  bool skipped = false;
  std::string message;  // failure: "REPRO: <case>" then the details; skip: why; pass: a summary
};

inline BwdOutcome bwd_skip_outcome(const Status& s, const char* what) {
  BwdOutcome o;
  o.skipped = true;
  o.message = std::string(what) + " not in this build (kNotSupported): " + s.message() + " [" + build_line() + "]";
  return o;
}

inline std::vector<double> to_doubles(DType dtype, const std::vector<uint16_t>& bits) {
  std::vector<double> v(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) v[i] = numeric::from_bits(dtype, bits[i]);
  return v;
}

// Rows of q that see no key and keys that no row sees, per sequence (logical row indices).
inline void empty_rows_and_keys(const FwdCase& f, std::vector<int64_t>* rows, std::vector<int64_t>* keys) {
  const Window w = make_window(f.causal, f.window_left, f.window_right);
  for (int64_t b = 0; b < f.nbatch(); ++b) {
    const int64_t lq = f.len_q(b), lk = f.len_k(b);
    std::vector<int64_t> diff(static_cast<size_t>(lk + 1), 0);  // coverage of keys by rows' intervals
    for (int64_t i = 0; i < lq; ++i) {
      int64_t jb = 0, je = 0;
      visible_key_range(i, lq, lk, w, &jb, &je);
      if (je <= jb) {
        rows->push_back(f.row0_q(b) + i);
      } else {
        ++diff[jb];
        --diff[je];
      }
    }
    int64_t cover = 0;
    for (int64_t j = 0; j < lk; ++j) {
      cover += diff[j];
      if (cover == 0) keys->push_back(f.row0_k(b) + j);
    }
  }
}

// Checks a kernel result against the oracle. Does not look at g.status (see check_bwd_case).
inline BwdOutcome check_bwd_result(const BwdCase& c, const BwdInputs& in, const BwdGpuResult& g,
                                   const BwdRefResult& r) {
  (void)in;
  const FwdCase& f = c.f;
  BwdOutcome o;
  std::vector<std::string> errors;
  if (!g.outside_written.empty()) errors.push_back(g.outside_written);
  const int64_t dv = f.head_dim_v();
  struct Grad {
    const char* name;
    const std::vector<uint16_t>* bits;
    const std::vector<double>* golden;
    const std::vector<double>* lp;
    int64_t heads, dim;
  };
  const Grad grads[] = {{"dq", &g.dq, &r.dq_golden, &r.dq_lp, f.heads_q, f.d},
                        {"dk", &g.dk, &r.dk_golden, &r.dk_lp, f.heads_kv, f.d},
                        {"dv", &g.dv, &r.dv_golden, &r.dv_lp, f.heads_kv, dv}};
  std::ostringstream summary;
  for (const Grad& gr : grads) {
    const std::vector<double> k = to_doubles(f.dtype, *gr.bits);
    const ToleranceResult t = check_tolerance(gr.name, k, *gr.golden, *gr.lp, f.dtype, Pass::kBackward);
    summary << " | " << t.message;
    if (!t.ok) {
      std::ostringstream os;
      os << t.message;
      if (t.worst >= 0) {
        const int64_t e = t.worst / gr.dim;
        os << " [logical row " << e / gr.heads << ", head " << e % gr.heads << ", col " << t.worst % gr.dim << "]";
      }
      errors.push_back(os.str());
    }
  }
  // Exact zeros: rows that see no key (dq), keys that no row sees (dk, dv).
  std::vector<int64_t> rows, keys;
  empty_rows_and_keys(f, &rows, &keys);
  const auto exact_zero = [&](const char* name, const std::vector<uint16_t>& bits, const std::vector<int64_t>& which,
                              int64_t heads, int64_t dim, const char* why) {
    for (int64_t row : which) {
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t col = 0; col < dim; ++col) {
          const double x = numeric::from_bits(f.dtype, bits[(row * heads + h) * dim + col]);
          if (!(x == 0.0)) {
            std::ostringstream os;
            os << name << ": logical row " << row << " head " << h << " col " << col << " is " << x << "; " << why
               << " must have exactly zero gradient";
            errors.push_back(os.str());
            return;
          }
        }
      }
    }
  };
  exact_zero("dq", g.dq, rows, f.heads_q, f.d, "a query row that sees no key");
  exact_zero("dk", g.dk, keys, f.heads_kv, f.d, "a key that no query row sees");
  exact_zero("dv", g.dv, keys, f.heads_kv, dv, "a key that no query row sees");

  std::ostringstream os;
  if (errors.empty()) {
    os << c.name() << summary.str();
  } else {
    o.ok = false;
    os << "REPRO: " << c.str() << "\n";
    for (const auto& e : errors) os << "  " << e << "\n";
  }
  o.message = os.str();
  return o;
}

// Runs one case end to end: kNotSupported -> skipped; any other error status -> failure.
inline BwdOutcome check_bwd_case(const BwdCase& c, BwdInputs in) {
  produce_forward(c, in);
  if (c.source == Source::kGpuForward && !in.forward_status.ok()) {
    if (in.forward_status.code() == StatusCode::kNotSupported) return bwd_skip_outcome(in.forward_status, "forward");
    BwdOutcome o;
    o.ok = false;
    o.message = "REPRO: " + c.str() + "\n  fwd() returned " + to_string(in.forward_status.code()) + ": " +
                in.forward_status.message();
    return o;
  }
  const BwdGpuResult g = run_bwd_gpu(c, in);
  if (!g.status.ok() && (!g.untouched || !g.outside_written.empty())) {
    BwdOutcome o;
    o.ok = false;
    o.message = "REPRO: " + c.str() + "\n  bwd() returned " + to_string(g.status.code()) + " (" + g.status.message() +
                ") but wrote to dq/dk/dv: nothing may be written on error";
    return o;
  }
  if (g.status.code() == StatusCode::kNotSupported) return bwd_skip_outcome(g.status, "backward kernel");
  if (!g.status.ok()) {
    BwdOutcome o;
    o.ok = false;
    o.message = "REPRO: " + c.str() + "\n  bwd() returned " + to_string(g.status.code()) + ": " + g.status.message();
    return o;
  }
  return check_bwd_result(c, in, g, compute_bwd_reference(c, in));
}

inline BwdOutcome check_bwd_case(const BwdCase& c) {
  return check_bwd_case(c, make_bwd_inputs(c));
}

#define FC_EXPECT_BWD_OUTCOME(outcome_expr)                        \
  do {                                                             \
    const ::flashcute::testing::BwdOutcome fc_o_ = (outcome_expr); \
    if (fc_o_.skipped) GTEST_SKIP() << fc_o_.message;              \
    ASSERT_TRUE(fc_o_.ok) << fc_o_.message;                        \
    std::printf("[ bwd ok ] %s\n", fc_o_.message.c_str());         \
  } while (0)

#define FC_CHECK_BWD_CASE(case_expr) FC_EXPECT_BWD_OUTCOME(::flashcute::testing::check_bwd_case(case_expr))

// For tests that call the kernel themselves: skip on kNotSupported, fail on any other error.
#define FC_ASSERT_BWD_STATUS(status_expr)                                                                            \
  do {                                                                                                               \
    const ::flashcute::Status fc_s_ = (status_expr);                                                                 \
    if (fc_s_.code() == ::flashcute::StatusCode::kNotSupported)                                                      \
      GTEST_SKIP() << ::flashcute::testing::bwd_skip_outcome(fc_s_, "backward kernel").message;                      \
    ASSERT_TRUE(fc_s_.ok()) << "bwd() returned " << ::flashcute::to_string(fc_s_.code()) << ": " << fc_s_.message(); \
  } while (0)

inline std::vector<std::string> unique_names(const std::vector<BwdCase>& cases) {
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

struct BwdCaseName {
  std::vector<std::string> names;
  explicit BwdCaseName(const std::vector<BwdCase>& cases) : names(unique_names(cases)) {}
  std::string operator()(const ::testing::TestParamInfo<BwdCase>& info) const { return names[info.index]; }
};

}  // namespace flashcute::testing
