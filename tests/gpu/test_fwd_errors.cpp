// Bad input on the GPU path (docs/TESTING.md, "Bad input"): flashcute::fwd with real device buffers
// and one broken argument returns the right StatusCode and a message naming the argument, the value
// and the rule; check() and fwd_workspace_size() agree; and nothing is written: out and lse are
// pre-filled with a sentinel that must survive the call (checked after a device synchronize).
// tests/cpu/test_validation.cpp covers the validation rules one by one without a GPU; these tests
// make sure the GPU entry point reports them the same way and launches nothing.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "fwd_harness.h"

namespace flashcute::testing {
namespace {

constexpr DType kBf16 = DType::kBFloat16;
constexpr uint8_t kSentinel = 0xAB;
constexpr size_t kBufBytes = size_t{8} << 20;  // generous: a wrongly accepted shape cannot write out of bounds

// Valid arguments over real device buffers; each case breaks one thing.
struct ErrArgs {
  bool varlen = false;
  FwdArgs dense;
  VarlenFwdArgs var;
  std::vector<int32_t> cu_q_host{0, 40, 100}, cu_k_host{0, 70, 150};
};

struct ErrBuffers {
  DeviceBuffer q, k, v, out, lse, alibi, cu_q, cu_k, cu_i64;
  ErrBuffers() {
    for (DeviceBuffer* b : {&q, &k, &v, &out, &lse, &alibi, &cu_q, &cu_k, &cu_i64}) b->allocate(kBufBytes);
    FC_HARNESS_CUDA(cudaMemset(q.get(), 0, kBufBytes));
    FC_HARNESS_CUDA(cudaMemset(k.get(), 0, kBufBytes));
    FC_HARNESS_CUDA(cudaMemset(v.get(), 0, kBufBytes));
    FC_HARNESS_CUDA(cudaMemset(alibi.get(), 0, kBufBytes));
    const int32_t cq[] = {0, 40, 100}, ck[] = {0, 70, 150};
    FC_HARNESS_CUDA(cudaMemcpy(cu_q.get(), cq, sizeof(cq), cudaMemcpyHostToDevice));
    FC_HARNESS_CUDA(cudaMemcpy(cu_k.get(), ck, sizeof(ck), cudaMemcpyHostToDevice));
    fill_sentinel();
  }
  void fill_sentinel() {
    FC_HARNESS_CUDA(cudaMemset(out.get(), kSentinel, kBufBytes));
    FC_HARNESS_CUDA(cudaMemset(lse.get(), kSentinel, kBufBytes));
    FC_HARNESS_CUDA(cudaDeviceSynchronize());
  }
  // Empty when out and lse still hold the sentinel everywhere.
  std::string written() const {
    std::vector<uint8_t> h(kBufBytes);
    for (const auto& [name, b] : {std::pair<const char*, const DeviceBuffer*>{"out", &out}, {"lse", &lse}}) {
      FC_HARNESS_CUDA(cudaMemcpy(h.data(), b->get(), kBufBytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < h.size(); ++i) {
        if (h[i] != kSentinel) return std::string(name) + " byte " + std::to_string(i) + " was written";
      }
    }
    return {};
  }
};

ErrArgs valid_args(const ErrBuffers& b, bool varlen) {
  ErrArgs a;
  a.varlen = varlen;
  if (!varlen) {
    FwdArgs& f = a.dense;
    f.q = make_tensor_4d(b.q.get(), kBf16, 2, 64, 8, 64);
    f.k = make_tensor_4d(b.k.get(), kBf16, 2, 96, 2, 64);
    f.v = make_tensor_4d(b.v.get(), kBf16, 2, 96, 2, 64);
    f.out = make_tensor_4d(b.out.get(), kBf16, 2, 64, 8, 64);
    f.lse = make_tensor_3d(b.lse.get(), DType::kFloat32, 2, 8, 64);
  } else {
    VarlenFwdArgs& f = a.var;
    f.q = make_tensor_3d(b.q.get(), kBf16, 100, 8, 64);
    f.k = make_tensor_3d(b.k.get(), kBf16, 150, 2, 64);
    f.v = make_tensor_3d(b.v.get(), kBf16, 150, 2, 64);
    f.out = make_tensor_3d(b.out.get(), kBf16, 100, 8, 64);
    f.lse = make_tensor_2d(b.lse.get(), DType::kFloat32, 8, 100);
    f.cu_seqlens_q = make_tensor_1d(b.cu_q.get(), DType::kInt32, 3);
    f.cu_seqlens_k = make_tensor_1d(b.cu_k.get(), DType::kInt32, 3);
    f.max_seqlen_q = 60;
    f.max_seqlen_k = 80;
  }
  return a;
}

// After the copy into the case (the host pointers must point into the copy).
void bind_host_cu(ErrArgs& a) {
  if (a.varlen) {
    a.var.cu_seqlens_q_host = a.cu_q_host.data();
    a.var.cu_seqlens_k_host = a.cu_k_host.data();
  }
}

struct ErrCase {
  std::string name;
  bool varlen;
  std::function<void(ErrArgs&, const ErrBuffers&)> breaker;
  StatusCode code;
  std::string expected;  // a substring of the message (the rule's text)
};

// A contiguous 4-d tensor of a new shape on the same buffer.
TensorDesc reshaped(const TensorDesc& t, int64_t s0, int64_t s1, int64_t s2, int64_t s3) {
  return make_tensor_4d(t.data, t.dtype, s0, s1, s2, s3, t.device_index);
}

std::vector<ErrCase> error_cases() {
  using A = ErrArgs&;
  using B = const ErrBuffers&;
  const StatusCode inv = StatusCode::kInvalidArgument;
  std::vector<ErrCase> v = {
      // dtypes
      {"QDtypeFloat32", false, [](A a, B) { a.dense.q.dtype = DType::kFloat32; }, inv,
       "q: dtype float32 is not supported; expected float16 or bfloat16"},
      {"QDtypeOther", false, [](A a, B) { a.dense.q.dtype = DType::kOther; }, inv, "q: dtype other is not supported"},
      {"KDtypeMismatch", false, [](A a, B) { a.dense.k.dtype = DType::kFloat16; }, inv,
       "k: dtype float16 does not match q's dtype bfloat16"},
      {"VDtypeMismatch", false, [](A a, B) { a.dense.v.dtype = DType::kFloat16; }, inv,
       "v: dtype float16 does not match q's dtype bfloat16"},
      {"OutDtypeMismatch", false, [](A a, B) { a.dense.out.dtype = DType::kFloat16; }, inv,
       "out: dtype float16 does not match q's dtype bfloat16"},
      {"LseDtypeNotFloat32", false, [](A a, B) { a.dense.lse.dtype = DType::kBFloat16; }, inv,
       "lse: dtype bfloat16 must be float32"},
      // devices
      {"QOnCpu", false, [](A a, B) { a.dense.q.device_type = DeviceType::kCPU; }, inv, "q: tensor is on cpu"},
      {"VOnCpu", false, [](A a, B) { a.dense.v.device_type = DeviceType::kCPU; }, inv, "v: tensor is on cpu"},
      {"OutOnAnotherDevice", false, [](A a, B) { a.dense.out.device_index = 1; }, inv,
       "out: is on cuda:1 but q is on cuda:0"},
      // layout
      {"QLastDimNotContiguous", false, [](A a, B) { a.dense.q.stride[3] = 2; }, inv,
       "q: last dimension has stride 2; it must be contiguous (stride 1)"},
      {"KRank3", false, [](A a, B) { a.dense.k.rank = 3; }, inv, "k: has 3 dims"},
      {"QRowStrideNotMultipleOf8", false, [](A a, B) { a.dense.q.stride[1] = 8 * 64 + 4; }, inv,
       "q: stride[1]=516 is not a multiple of 8 elements"},
      {"QPointerMisaligned", false, [](A a, B) { a.dense.q.data = static_cast<char*>(a.dense.q.data) + 8; }, inv,
       "q: data pointer is not 16-byte aligned"},
      {"QDataNull", false, [](A a, B) { a.dense.q.data = nullptr; }, inv, "q: data pointer is null"},
      {"LseNotContiguous", false, [](A a, B) { a.dense.lse.stride[1] = 128; }, inv, "lse: must be contiguous"},
      // head dims
      {"HeadDimZero", false,
       [](A a, B) {
         a.dense.q.shape[3] = 0;
         a.dense.k.shape[3] = 0;
       },
       inv, "q: head_dim=0 must be positive"},
      {"HeadDim264AboveMax", false,
       [](A a, B) {
         a.dense.q = reshaped(a.dense.q, 2, 64, 8, 264);
         a.dense.k = reshaped(a.dense.k, 2, 96, 2, 264);
       },
       inv, "q: head_dim=264 exceeds the maximum of 256"},
      {"KHeadDimDisagrees", false, [](A a, B) { a.dense.k = reshaped(a.dense.k, 2, 96, 2, 128); }, inv,
       "k: head_dim=128 does not match q's head_dim=64"},
      {"VHeadDimNotMultipleOf8", false, [](A a, B) { a.dense.v.shape[3] = 60; }, inv,
       "v: head_dim_v=60 must be a multiple of 8"},
      // heads, batch, seqlen, out/lse shapes
      {"HeadsKvDoesNotDivideHeadsQ", false,
       [](A a, B) {
         a.dense.k = reshaped(a.dense.k, 2, 96, 3, 64);
         a.dense.v = reshaped(a.dense.v, 2, 96, 3, 64);
       },
       inv, "k: heads_kv=3 does not divide heads_q=8"},
      {"VHeadsDisagree", false, [](A a, B) { a.dense.v = reshaped(a.dense.v, 2, 96, 4, 64); }, inv,
       "v: heads_kv=4 does not match k's heads_kv=2"},
      {"KBatchDisagrees", false, [](A a, B) { a.dense.k = reshaped(a.dense.k, 3, 96, 2, 64); }, inv,
       "k: batch=3 does not match q's batch=2"},
      {"VSeqlenDisagrees", false, [](A a, B) { a.dense.v = reshaped(a.dense.v, 2, 95, 2, 64); }, inv,
       "v: seqlen_k=95 does not match k's seqlen_k=96"},
      {"OutShapeWrong", false, [](A a, B) { a.dense.out = reshaped(a.dense.out, 2, 63, 8, 64); }, inv,
       "out: shape (2, 63, 8, 64) does not match the expected (2, 64, 8, 64)"},
      {"LseShapeWrong", false, [](A a, B b) { a.dense.lse = make_tensor_3d(b.lse.get(), DType::kFloat32, 2, 8, 63); },
       inv, "lse: shape (2, 8, 63) does not match the expected (2, 8, 64)"},
      // options
      {"WindowLeftBelowMinus1", false, [](A a, B) { a.dense.options.window_left = -2; }, inv,
       "window_left=-2 must be >= -1 (-1 = unbounded)"},
      {"WindowRightBelowMinus1", false, [](A a, B) { a.dense.options.window_right = -5; }, inv,
       "window_right=-5 must be >= -1 (-1 = unbounded)"},
      {"CausalWithWindowRight", false,
       [](A a, B) {
         a.dense.options.causal = true;
         a.dense.options.window_right = 4;
       },
       inv, "window_right=4 conflicts with causal=true"},
      {"SoftcapNegative", false, [](A a, B) { a.dense.options.softcap = -1.0f; }, inv,
       "softcap=-1 must be finite and >= 0 (0 = off)"},
      {"SoftcapNaN", false, [](A a, B) { a.dense.options.softcap = std::numeric_limits<float>::quiet_NaN(); }, inv,
       "must be finite and >= 0"},
      {"ScaleInfinite", false, [](A a, B) { a.dense.options.softmax_scale = std::numeric_limits<float>::infinity(); },
       inv, "softmax_scale=inf must be finite"},
      {"ScaleNaN", false, [](A a, B) { a.dense.options.softmax_scale = std::numeric_limits<float>::quiet_NaN(); }, inv,
       "must be finite"},
      {"DropoutNotBuilt", false, [](A a, B) { a.dense.options.dropout_p = 0.1f; }, StatusCode::kNotSupported,
       "dropout_p=0.1: dropout is not built yet; only dropout_p=0 is supported"},
      {"DropoutOutOfRange", false, [](A a, B) { a.dense.options.dropout_p = 1.5f; }, inv,
       "dropout_p=1.5 must be in [0, 1)"},
      {"BackendUnknown", false, [](A a, B) { a.dense.options.backend = static_cast<Backend>(7); }, inv,
       "backend=7 is not a known backend"},
      {"AlibiWrongShape", false,
       [](A a, B b) { a.dense.options.alibi_slopes = make_tensor_1d(b.alibi.get(), DType::kFloat32, 7); }, inv,
       "alibi_slopes: shape (7) must be (heads_q=8) or (batch=2, heads_q=8)"},
      {"AlibiDtype", false,
       [](A a, B b) { a.dense.options.alibi_slopes = make_tensor_1d(b.alibi.get(), DType::kFloat16, 8); }, inv,
       "alibi_slopes: dtype float16 must be float32"},
      // varlen
      {"VarlenCuSeqlensInt64", true,
       [](A a, B b) { a.var.cu_seqlens_q = make_tensor_1d(b.cu_i64.get(), DType::kInt64, 3); }, inv,
       "cu_seqlens_q: dtype int64 must be int32"},
      {"VarlenCuSeqlensLengthsDisagree", true,
       [](A a, B b) { a.var.cu_seqlens_k = make_tensor_1d(b.cu_k.get(), DType::kInt32, 4); }, inv,
       "cu_seqlens_k: length 4 does not match cu_seqlens_q's length 3"},
      {"VarlenCuSeqlensEmpty", true,
       [](A a, B b) { a.var.cu_seqlens_q = make_tensor_1d(b.cu_q.get(), DType::kInt32, 0); }, inv,
       "cu_seqlens_q: length 0"},
      {"VarlenCuSeqlensDecreasing", true,
       [](A a, B) {
         a.cu_q_host = {0, 50, 40};
       },
       inv, "cu_seqlens_q: must be non-decreasing"},
      {"VarlenCuSeqlensNotStartingAtZero", true,
       [](A a, B) {
         a.cu_k_host = {5, 70, 150};
       },
       inv, "cu_seqlens_k[0]=5 must be 0"},
      {"VarlenCuSeqlensBeyondTotal", true,
       [](A a, B) {
         a.cu_q_host = {0, 41, 101};
       },
       inv, "cu_seqlens_q[2]=101 exceeds total_q=100"},
      {"VarlenMaxSeqlenTooSmall", true, [](A a, B) { a.var.max_seqlen_q = 50; }, inv,
       "max_seqlen_q=50 is smaller than sequence 1's length 60"},
      {"VarlenMaxSeqlenNegative", true, [](A a, B) { a.var.max_seqlen_k = -1; }, inv, "max_seqlen_k=-1 must be >= 0"},
      {"VarlenVTotalDisagrees", true, [](A a, B b) { a.var.v = make_tensor_3d(b.v.get(), kBf16, 149, 2, 64); }, inv,
       "v: total_k=149 does not match k's total_k=150"},
      {"VarlenLseShapeWrong", true, [](A a, B b) { a.var.lse = make_tensor_2d(b.lse.get(), DType::kFloat32, 8, 99); },
       inv, "lse: shape (8, 99)"},
      {"VarlenQRank4", true, [](A a, B b) { a.var.q = make_tensor_4d(b.q.get(), kBf16, 1, 100, 8, 64); }, inv,
       "q: has 4 dims"},
  };
  // d = 59 and 111 (TESTING.md): with strides that keep rows aligned (a slice of a padded tensor)
  // the head-dim rule must fire, and for contiguous tensors the message must still name head_dim.
  for (int64_t d : {59, 111}) {
    const int64_t padded = (d + 7) / 8 * 8;
    const std::string rule = "q: head_dim=" + std::to_string(d) + " must be a multiple of 8";
    v.push_back({"HeadDim" + std::to_string(d) + "PaddedStrides", false,
                 [d, padded](A a, B) {
                   for (TensorDesc* t : {&a.dense.q, &a.dense.k, &a.dense.v, &a.dense.out}) {
                     *t = reshaped(*t, t->shape[0], t->shape[1], t->shape[2], padded);
                     t->shape[3] = d;
                   }
                 },
                 inv, rule});
    v.push_back({"HeadDim" + std::to_string(d) + "Contiguous", false,
                 [d](A a, B) {
                   for (TensorDesc* t : {&a.dense.q, &a.dense.k, &a.dense.v, &a.dense.out}) {
                     *t = reshaped(*t, t->shape[0], t->shape[1], t->shape[2], d);
                   }
                 },
                 inv, "head_dim=" + std::to_string(d)});
  }
  return v;
}

void PrintTo(const ErrCase& c, std::ostream* os) {
  *os << c.name;
}

Status call(const ErrArgs& a) {
  return a.varlen ? fwd(a.var) : fwd(a.dense);
}
Status call_check(const ErrArgs& a) {
  return a.varlen ? check(a.var) : check(a.dense);
}
Status call_ws(const ErrArgs& a) {
  size_t bytes = 0;
  return a.varlen ? fwd_workspace_size(a.var, &bytes) : fwd_workspace_size(a.dense, &bytes);
}

// Sets the backend of both argument forms (before a case breaks anything: BackendUnknown overrides it).
void set_backend(ErrArgs& a, Backend b) {
  a.dense.options.backend = b;
  a.var.options.backend = b;
}

// Every case on both paths: validation runs before the path is chosen, so both must reject the same.
class FwdErrors : public OnBackendBase<ErrCase> {};

TEST_P(FwdErrors, RejectedWithMessageAndNothingWritten) {
  FC_REQUIRE_GPU();
  const ErrCase& ec = param();
  ErrBuffers bufs;
  ErrArgs a = valid_args(bufs, ec.varlen);
  set_backend(a, ambient_backend());
  ec.breaker(a, bufs);
  bind_host_cu(a);
  const Status s = call(a);
  const cudaError_t sync = cudaDeviceSynchronize();
  ASSERT_EQ(sync, cudaSuccess) << cudaGetErrorString(sync);
  EXPECT_EQ(s.code(), ec.code) << ec.name << ": got " << to_string(s.code()) << ": " << s.message();
  EXPECT_NE(s.message().find(ec.expected), std::string::npos)
      << ec.name << ": message \"" << s.message() << "\" should contain \"" << ec.expected << "\"";
  const std::string w = bufs.written();
  EXPECT_TRUE(w.empty()) << ec.name << ": fwd() returned an error but " << w;
  // check() and fwd_workspace_size() report the same rule (a validation error is the same
  // everywhere; kNotSupported for dropout comes from the same option check).
  const Status c = call_check(a);
  EXPECT_EQ(c.code(), s.code()) << "check(): " << c.message();
  EXPECT_EQ(c.message(), s.message());
  const Status ws = call_ws(a);
  EXPECT_EQ(ws.code(), s.code()) << "fwd_workspace_size(): " << ws.message();
}

INSTANTIATE_TEST_SUITE_P(BadInput, FwdErrors,
                         ::testing::Combine(::testing::ValuesIn(error_cases()), ::testing::ValuesIn(test_backends())),
                         [](const auto& p) {
                           return std::string(std::get<0>(p.param).name) + "_" + to_string(std::get<1>(p.param));
                         });

// The unbroken arguments are accepted (or the build lacks the kernel: skipped), so the rejections
// above are caused by what each case breaks.
class FwdErrorsBaseline : public OnBackend {};

TEST_P(FwdErrorsBaseline, ValidArgumentsAreAccepted) {
  FC_REQUIRE_GPU();
  for (bool varlen : {false, true}) {
    ErrBuffers bufs;
    ErrArgs a = valid_args(bufs, varlen);
    set_backend(a, ambient_backend());
    bind_host_cu(a);
    EXPECT_TRUE(call_check(a).ok()) << call_check(a).message();
    EXPECT_TRUE(call_ws(a).ok()) << call_ws(a).message();
    const Status s = call(a);
    FC_CUDA_CHECK(cudaDeviceSynchronize());
    if (s.code() == StatusCode::kNotSupported) {
      // d 64 bf16 is not in this build; still nothing may be written.
      EXPECT_TRUE(bufs.written().empty()) << "kNotSupported but " << bufs.written();
      GTEST_SKIP() << skip_outcome(s).message;
    }
    EXPECT_TRUE(s.ok()) << (varlen ? "varlen: " : "dense: ") << to_string(s.code()) << ": " << s.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, FwdErrorsBaseline, ::testing::ValuesIn(test_backends()), backend_param_name);

// A device index that does not exist: an error (not a crash, not kInternal), nothing written.
TEST(FwdErrorsDevice, DeviceIndexOutOfRange) {
  FC_REQUIRE_GPU();
  int count = 0;
  FC_CUDA_CHECK(cudaGetDeviceCount(&count));
  ErrBuffers bufs;
  ErrArgs a = valid_args(bufs, false);
  for (TensorDesc* t : {&a.dense.q, &a.dense.k, &a.dense.v, &a.dense.out, &a.dense.lse}) t->device_index = count + 3;
  const Status s = call(a);
  cudaGetLastError();
  FC_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << to_string(s.code()) << ": " << s.message();
  EXPECT_NE(s.message().find("device index " + std::to_string(count + 3) + " is out of range"), std::string::npos)
      << s.message();
  EXPECT_TRUE(bufs.written().empty()) << bufs.written();
  int current = -1;
  FC_CUDA_CHECK(cudaGetDevice(&current));
  EXPECT_EQ(current, 0) << "fwd() left another device current";
  std::printf("device index %d: %s: %s\n", count + 3, to_string(s.code()), s.message().c_str());
}

// Configurations this build does not compile are kNotSupported with a message that says which
// build option enables them (or that no forward kernel is compiled); compiled ones run.
TEST(FwdErrorsBuild, NotCompiledConfigurationsSayHowToEnableThem) {
  FC_REQUIRE_GPU();
  std::printf("%s\n", build_line().c_str());
  int ran = 0, unsupported = 0;
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    for (int64_t d : {64, 96, 128, 192, 256}) {
      for (Backend be : {Backend::kAuto, Backend::kSm80, Backend::kSm90}) {
        FwdCase c;
        c.dtype = dt;
        c.batch = 1;
        c.seqlen_q = 65;
        c.seqlen_k = 70;
        c.heads_q = 2;
        c.heads_kv = 1;
        c.d = d;
        const FwdInputs in = make_inputs(c);
        FwdDeviceState st;
        prepare_device(c, in, &st);
        st.dense.options.backend = be;
        const Status s = call_fwd(&st, nullptr);
        const GpuResult g = read_result(c, st);
        const std::string what = std::string(dtype_str(dt)) + " d" + std::to_string(d) + " backend=" + to_string(be);
        if (s.ok()) {
          ++ran;
          const FwdOutcome o = check_result(c, in, g, compute_reference(c, in));
          EXPECT_TRUE(o.ok) << what << "\n" << o.message;
          continue;
        }
        ++unsupported;
        EXPECT_EQ(s.code(), StatusCode::kNotSupported) << what << ": " << s.message();
        const std::string& m = s.message();
        const bool says_how = m.find("rebuild with -DFLASHCUTE_") != std::string::npos ||
                              m.find("compiled into this build") != std::string::npos ||
                              m.find("needs a compute capability") != std::string::npos;
        EXPECT_TRUE(says_how) << what << ": kNotSupported message does not say what is missing: " << m;
        EXPECT_TRUE(g.out_untouched && g.outside_written.empty()) << what << ": kNotSupported but out/lse were written";
      }
    }
  }
  std::printf("ran %d configurations, %d not supported by this build/GPU\n", ran, unsupported);
}

}  // namespace
}  // namespace flashcute::testing
