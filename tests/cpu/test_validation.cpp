// One test per validation rule (TESTING.md, "Bad input"): each asserts the status code and the
// message, which names the argument, the value and the rule. Runs on the CPU: validation needs no GPU
// (pointers below are fake, never dereferenced).

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "api/validate.h"
#include "flashcute/api.h"

namespace flashcute {
namespace {

// A fake, 256-byte aligned device address: validation only looks at its value.
void* fake_ptr(uintptr_t slot) { return reinterpret_cast<void*>(0x100000 + slot * 0x1000000); }

FwdArgs valid_fwd(DType dt = DType::kFloat16) {
  FwdArgs a;
  a.q = make_tensor_4d(fake_ptr(1), dt, 2, 128, 8, 64);
  a.k = make_tensor_4d(fake_ptr(2), dt, 2, 256, 2, 64);
  a.v = make_tensor_4d(fake_ptr(3), dt, 2, 256, 2, 64);
  a.out = make_tensor_4d(fake_ptr(4), dt, 2, 128, 8, 64);
  a.lse = make_tensor_3d(fake_ptr(5), DType::kFloat32, 2, 8, 128);
  return a;
}

VarlenFwdArgs valid_varlen() {
  VarlenFwdArgs a;
  a.q = make_tensor_3d(fake_ptr(1), DType::kBFloat16, 300, 8, 128);
  a.k = make_tensor_3d(fake_ptr(2), DType::kBFloat16, 500, 4, 128);
  a.v = make_tensor_3d(fake_ptr(3), DType::kBFloat16, 500, 4, 128);
  a.out = make_tensor_3d(fake_ptr(4), DType::kBFloat16, 300, 8, 128);
  a.lse = make_tensor_2d(fake_ptr(5), DType::kFloat32, 8, 300);
  a.cu_seqlens_q = make_tensor_1d(fake_ptr(6), DType::kInt32, 4);
  a.cu_seqlens_k = make_tensor_1d(fake_ptr(7), DType::kInt32, 4);
  a.max_seqlen_q = 200;
  a.max_seqlen_k = 300;
  return a;
}

BwdArgs valid_bwd() {
  const FwdArgs f = valid_fwd();
  BwdArgs a;
  a.q = f.q;
  a.k = f.k;
  a.v = f.v;
  a.out = f.out;
  a.lse = f.lse;
  a.dout = make_tensor_4d(fake_ptr(6), DType::kFloat16, 2, 128, 8, 64);
  a.dq = make_tensor_4d(fake_ptr(7), DType::kFloat16, 2, 128, 8, 64);
  a.dk = make_tensor_4d(fake_ptr(8), DType::kFloat16, 2, 256, 2, 64);
  a.dv = make_tensor_4d(fake_ptr(9), DType::kFloat16, 2, 256, 2, 64);
  return a;
}

template <class Args>
Status run(const Args& a) {
  ProblemDesc p;
  return validate(a, &p);
}

// Asserts the code and that the message contains `expected` (the whole rule text).
#define EXPECT_REJECTED(status, code_, expected)                                        \
  do {                                                                                  \
    const Status s_ = (status);                                                         \
    EXPECT_EQ(s_.code(), code_) << s_.message();                                        \
    EXPECT_NE(s_.message().find(expected), std::string::npos)                           \
        << "message: \"" << s_.message() << "\"\nexpected to contain: \"" << expected << "\""; \
  } while (0)

TEST(Validation, ValidDenseForwardPasses) {
  ProblemDesc p;
  const Status s = validate(valid_fwd(), &p);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.seqlen_q, 128);
  EXPECT_EQ(p.seqlen_k, 256);
  EXPECT_EQ(p.heads_q, 8);
  EXPECT_EQ(p.heads_kv, 2);
  EXPECT_EQ(p.head_dim, 64);
  EXPECT_FLOAT_EQ(p.softmax_scale, 0.125f);  // default 1/sqrt(64)
  EXPECT_TRUE(p.has_lse);
  EXPECT_EQ(p.window.left, -1);
  EXPECT_EQ(p.window.right, -1);
}

TEST(Validation, CausalFoldsIntoWindow) {
  FwdArgs a = valid_fwd();
  a.options.causal = true;
  a.options.window_left = 16;
  ProblemDesc p;
  ASSERT_TRUE(validate(a, &p).ok());
  EXPECT_EQ(p.window.left, 16);
  EXPECT_EQ(p.window.right, 0);
}

TEST(Validation, ValidVarlenAndBackwardPass) {
  const Status v = run(valid_varlen());
  EXPECT_TRUE(v.ok()) << v.message();
  const Status b = run(valid_bwd());
  EXPECT_TRUE(b.ok()) << b.message();
}

TEST(Validation, EmptyShapesAreValid) {
  for (int which = 0; which < 3; ++which) {
    FwdArgs a = valid_fwd();
    if (which == 0) {  // batch 0
      for (TensorDesc* t : {&a.q, &a.k, &a.v, &a.out}) *t = make_tensor_4d(nullptr, DType::kFloat16, 0, t->shape[1], t->shape[2], t->shape[3]);
      a.lse = make_tensor_3d(nullptr, DType::kFloat32, 0, 8, 128);
    } else if (which == 1) {  // seqlen_q 0
      a.q = make_tensor_4d(nullptr, DType::kFloat16, 2, 0, 8, 64);
      a.out = make_tensor_4d(nullptr, DType::kFloat16, 2, 0, 8, 64);
      a.lse = make_tensor_3d(nullptr, DType::kFloat32, 2, 8, 0);
    } else {  // seqlen_k 0
      a.k = make_tensor_4d(nullptr, DType::kFloat16, 2, 0, 2, 64);
      a.v = make_tensor_4d(nullptr, DType::kFloat16, 2, 0, 2, 64);
    }
    const Status s = run(a);
    EXPECT_TRUE(s.ok()) << "case " << which << ": " << s.message();
  }
}

// --- dtype ----------------------------------------------------------------------------------------
TEST(Validation, QDtypeNotHalf) {
  FwdArgs a = valid_fwd();
  a.q.dtype = DType::kFloat32;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "q: dtype float32 is not supported; expected float16 or bfloat16");
}

TEST(Validation, DtypeMismatch) {
  FwdArgs a = valid_fwd();
  a.k.dtype = DType::kBFloat16;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: dtype bfloat16 does not match q's dtype float16");
  a = valid_fwd();
  a.v.dtype = DType::kBFloat16;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: dtype bfloat16 does not match q's dtype float16");
  a = valid_fwd();
  a.out.dtype = DType::kFloat32;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "out: dtype float32 does not match q's dtype float16");
  BwdArgs b = valid_bwd();
  b.dout.dtype = DType::kBFloat16;
  EXPECT_REJECTED(run(b), StatusCode::kInvalidArgument, "dout: dtype bfloat16 does not match q's dtype float16");
}

// --- device -----------------------------------------------------------------------------------------
TEST(Validation, TensorNotOnGpu) {
  FwdArgs a = valid_fwd();
  a.v.device_type = DeviceType::kCPU;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: tensor is on cpu; expected a CUDA device tensor");
}

TEST(Validation, TensorsOnDifferentGpus) {
  FwdArgs a = valid_fwd();
  a.k.device_index = 1;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: is on cuda:1 but q is on cuda:0");
}

// --- layout -------------------------------------------------------------------------------------------
TEST(Validation, LastDimNotContiguous) {
  FwdArgs a = valid_fwd();
  a.k.stride[3] = 2;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: last dimension has stride 2; it must be contiguous (stride 1)");
}

TEST(Validation, WrongRank) {
  FwdArgs a = valid_fwd();
  a.q = make_tensor_3d(fake_ptr(1), DType::kFloat16, 128, 8, 64);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument,
                  "q: has 3 dims (128, 8, 64); expected 4 dims (batch, seqlen_q, heads_q, head_dim)");
}

TEST(Validation, NegativeShape) {
  FwdArgs a = valid_fwd();
  a.q.shape[1] = -1;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "q: shape[1]=-1 is negative");
}

TEST(Validation, NullData) {
  FwdArgs a = valid_fwd();
  a.v.data = nullptr;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: data pointer is null but the tensor has 65536 elements");
}

TEST(Validation, MissingTensor) {
  FwdArgs a = valid_fwd();
  a.out = TensorDesc{};
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "out: tensor is required but was not given");
}

TEST(Validation, RowStrideNotSixteenByteAligned) {
  FwdArgs a = valid_fwd();
  a.q.stride[1] = 8 * 64 + 4;  // padded rows of 516 elements: not a multiple of 8
  a.q.stride[0] = 128 * a.q.stride[1];
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument,
                  "q: stride[1]=516 is not a multiple of 8 elements; rows must start on 16-byte boundaries");
  a = valid_fwd();
  a.k.stride[2] = 68;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: stride[2]=68 is not a multiple of 8 elements");
}

TEST(Validation, DataPointerNotAligned) {
  FwdArgs a = valid_fwd();
  a.out.data = static_cast<char*>(a.out.data) + 2;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "out: data pointer is not 16-byte aligned");
}

TEST(Validation, NonContiguousStridesAreAccepted) {
  FwdArgs a = valid_fwd();
  a.q.stride[2] = 128;  // heads 128 apart (e.g. a slice of a packed qkv tensor)
  a.q.stride[1] = 8 * 128 * 3;
  a.q.stride[0] = 128 * a.q.stride[1];
  EXPECT_TRUE(run(a).ok());
}

// --- head dim -------------------------------------------------------------------------------------------
TEST(Validation, HeadDimZero) {
  FwdArgs a = valid_fwd();
  a.q.shape[3] = a.k.shape[3] = 0;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "q: head_dim=0 must be positive");
}

TEST(Validation, HeadDimAboveMax) {
  FwdArgs a = valid_fwd();
  a.q.shape[3] = a.k.shape[3] = 264;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "q: head_dim=264 exceeds the maximum of 256");
}

TEST(Validation, HeadDimNotMultipleOf8) {
  for (int64_t d : {59, 111}) {
    FwdArgs a = valid_fwd();
    a.q.shape[3] = a.k.shape[3] = d;
    EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "q: head_dim=" + std::to_string(d) + " must be a multiple of 8");
  }
}

TEST(Validation, HeadDimOfKDisagrees) {
  FwdArgs a = valid_fwd();
  a.k.shape[3] = 128;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: head_dim=128 does not match q's head_dim=64");
}

TEST(Validation, HeadDimOfVInvalid) {
  FwdArgs a = valid_fwd();
  a.v.shape[3] = 60;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: head_dim_v=60 must be a multiple of 8");
}

// --- heads, batch, seqlen agreement ---------------------------------------------------------------------
TEST(Validation, HeadsKvDoesNotDivideHeadsQ) {
  FwdArgs a = valid_fwd();
  a.k.shape[2] = a.v.shape[2] = 3;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: heads_kv=3 does not divide heads_q=8");
}

TEST(Validation, HeadsZero) {
  FwdArgs a = valid_fwd();
  a.k.shape[2] = a.v.shape[2] = 0;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: heads_kv=0 must be positive");
}

TEST(Validation, HeadsOfVDisagree) {
  FwdArgs a = valid_fwd();
  a.v.shape[2] = 4;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: heads_kv=4 does not match k's heads_kv=2");
}

TEST(Validation, BatchDisagrees) {
  FwdArgs a = valid_fwd();
  a.k.shape[0] = 3;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: batch=3 does not match q's batch=2");
  a = valid_fwd();
  a.v.shape[0] = 1;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: batch=1 does not match q's batch=2");
}

TEST(Validation, SeqlenOfVDisagrees) {
  FwdArgs a = valid_fwd();
  a.v.shape[1] = 255;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: seqlen_k=255 does not match k's seqlen_k=256");
}

TEST(Validation, SeqlenAboveMax) {
  FwdArgs a = valid_fwd();
  const int64_t big = (int64_t(1) << 29) + 1;
  a.k = make_tensor_4d(fake_ptr(2), DType::kFloat16, 2, big, 2, 64);
  a.v = make_tensor_4d(fake_ptr(3), DType::kFloat16, 2, big, 2, 64);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "k: seqlen_k=536870913 exceeds the maximum of 536870912 (2^29)");
  VarlenFwdArgs v = valid_varlen();
  v.max_seqlen_q = big;
  EXPECT_REJECTED(run(v), StatusCode::kInvalidArgument, "max_seqlen_q=536870913 exceeds the maximum of 536870912 (2^29)");
}

TEST(Validation, OutShapeDisagrees) {
  FwdArgs a = valid_fwd();
  a.out.shape[1] = 64;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument,
                  "out: shape (2, 64, 8, 64) does not match the expected (2, 128, 8, 64)");
}

TEST(Validation, GradientShapesDisagree) {
  BwdArgs a = valid_bwd();
  a.dout.shape[2] = 4;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "dout: shape (2, 128, 4, 64) does not match the expected (2, 128, 8, 64)");
  a = valid_bwd();
  a.dk.shape[1] = 128;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "dk: shape (2, 128, 2, 64) does not match the expected (2, 256, 2, 64)");
}

// --- lse -------------------------------------------------------------------------------------------------
TEST(Validation, LseDtype) {
  FwdArgs a = valid_fwd();
  a.lse.dtype = DType::kFloat16;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "lse: dtype float16 must be float32");
}

TEST(Validation, LseShape) {
  FwdArgs a = valid_fwd();
  a.lse = make_tensor_3d(fake_ptr(5), DType::kFloat32, 2, 128, 8);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "lse: shape (2, 128, 8) does not match the expected (2, 8, 128)");
}

TEST(Validation, LseNotContiguous) {
  FwdArgs a = valid_fwd();
  a.lse.stride[1] = 256;
  a.lse.stride[0] = 8 * 256;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "lse: must be contiguous (batch, heads_q, seqlen_q); stride[1]=256 should be 128");
}

TEST(Validation, LseRequiredForBackward) {
  BwdArgs a = valid_bwd();
  a.lse = TensorDesc{};
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "lse: tensor is required but was not given");
}

// --- varlen ------------------------------------------------------------------------------------------------
TEST(Validation, CuSeqlensNotInt32) {
  VarlenFwdArgs a = valid_varlen();
  a.cu_seqlens_q.dtype = DType::kInt64;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "cu_seqlens_q: dtype int64 must be int32");
}

TEST(Validation, CuSeqlensWrongLength) {
  VarlenFwdArgs a = valid_varlen();
  a.cu_seqlens_k = make_tensor_1d(fake_ptr(7), DType::kInt32, 5);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument,
                  "cu_seqlens_k: length 5 does not match cu_seqlens_q's length 4 (both are batch + 1)");
  a = valid_varlen();
  a.cu_seqlens_q = make_tensor_1d(fake_ptr(6), DType::kInt32, 0);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "cu_seqlens_q: length 0; it must hold batch + 1 >= 1 offsets");
  a = valid_varlen();
  a.cu_seqlens_q = make_tensor_2d(fake_ptr(6), DType::kInt32, 2, 2);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "cu_seqlens_q: has 2 dims (2, 2); expected 1 dims (batch + 1)");
}

TEST(Validation, CuSeqlensDecreasing) {
  VarlenFwdArgs a = valid_varlen();
  const int32_t cu_q[4] = {0, 100, 90, 300};
  const int32_t cu_k[4] = {0, 100, 200, 500};
  a.cu_seqlens_q_host = cu_q;
  a.cu_seqlens_k_host = cu_k;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument,
                  "cu_seqlens_q: must be non-decreasing, but cu_seqlens_q[2]=90 < cu_seqlens_q[1]=100");
}

TEST(Validation, CuSeqlensHostChecks) {
  VarlenFwdArgs a = valid_varlen();
  const int32_t good_q[4] = {0, 100, 100, 300};  // a zero-length sequence is fine
  const int32_t bad_start[4] = {4, 100, 200, 300};
  const int32_t too_long[4] = {0, 100, 200, 301};
  const int32_t cu_k[4] = {0, 100, 200, 500};
  a.cu_seqlens_k_host = cu_k;
  a.cu_seqlens_q_host = good_q;
  EXPECT_TRUE(run(a).ok());
  a.cu_seqlens_q_host = bad_start;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "cu_seqlens_q: cu_seqlens_q[0]=4 must be 0");
  a.cu_seqlens_q_host = too_long;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "cu_seqlens_q: cu_seqlens_q[3]=301 exceeds total_q=300");
  a.cu_seqlens_q_host = good_q;
  a.max_seqlen_q = 150;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "max_seqlen_q=150 is smaller than sequence 2's length 200");
}

TEST(Validation, VarlenTotalsDisagree) {
  VarlenFwdArgs a = valid_varlen();
  a.v.shape[0] = 499;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "v: total_k=499 does not match k's total_k=500");
  a = valid_varlen();
  a.lse = make_tensor_2d(fake_ptr(5), DType::kFloat32, 300, 8);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "lse: shape (300, 8) does not match the expected (8, 300)");
}

TEST(Validation, MaxSeqlenNegative) {
  VarlenFwdArgs a = valid_varlen();
  a.max_seqlen_k = -5;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "max_seqlen_k=-5 must be >= 0");
}

// --- options ---------------------------------------------------------------------------------------------------
TEST(Validation, WindowBelowMinusOne) {
  FwdArgs a = valid_fwd();
  a.options.window_left = -2;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "window_left=-2 must be >= -1 (-1 = unbounded)");
  a = valid_fwd();
  a.options.window_right = -7;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "window_right=-7 must be >= -1 (-1 = unbounded)");
}

TEST(Validation, CausalWithRightWindow) {
  FwdArgs a = valid_fwd();
  a.options.causal = true;
  a.options.window_right = 4;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "window_right=4 conflicts with causal=true (causal means window_right=0)");
}

TEST(Validation, SoftcapNegative) {
  FwdArgs a = valid_fwd();
  a.options.softcap = -1.0f;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "softcap=-1 must be finite and >= 0 (0 = off)");
  a.options.softcap = std::numeric_limits<float>::infinity();
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "softcap=inf must be finite and >= 0 (0 = off)");
}

TEST(Validation, ScaleNotFiniteOrNotPositive) {
  FwdArgs a = valid_fwd();
  a.options.softmax_scale = std::numeric_limits<float>::infinity();
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "softmax_scale=inf must be finite");
  a.options.softmax_scale = std::nanf("");
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "softmax_scale=nan must be finite");
  a.options.softmax_scale = 0.0f;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "softmax_scale=0 must be > 0");
  a.options.softmax_scale = -0.125f;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "softmax_scale=-0.125 must be > 0");
}

TEST(Validation, CustomScaleIsKept) {
  FwdArgs a = valid_fwd();
  a.options.softmax_scale = 0.5f;
  ProblemDesc p;
  ASSERT_TRUE(validate(a, &p).ok());
  EXPECT_EQ(p.softmax_scale, 0.5f);
}

TEST(Validation, DropoutNotBuilt) {
  FwdArgs a = valid_fwd();
  a.options.dropout_p = 0.1f;
  EXPECT_REJECTED(run(a), StatusCode::kNotSupported, "dropout_p=0.1: dropout is not built yet; only dropout_p=0 is supported");
  a.options.dropout_p = 1.5f;
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "dropout_p=1.5 must be in [0, 1)");
}

TEST(Validation, AlibiSlopes) {
  FwdArgs a = valid_fwd();
  a.options.alibi_slopes = make_tensor_1d(fake_ptr(10), DType::kFloat32, 8);
  ProblemDesc p;
  ASSERT_TRUE(validate(a, &p).ok());
  EXPECT_TRUE(p.has_alibi);
  EXPECT_FALSE(p.alibi_per_batch);
  a.options.alibi_slopes = make_tensor_2d(fake_ptr(10), DType::kFloat32, 2, 8);
  ASSERT_TRUE(validate(a, &p).ok());
  EXPECT_TRUE(p.alibi_per_batch);
  a.options.alibi_slopes = make_tensor_1d(fake_ptr(10), DType::kFloat32, 4);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "alibi_slopes: shape (4) must be (heads_q=8) or (batch=2, heads_q=8)");
  a.options.alibi_slopes = make_tensor_1d(fake_ptr(10), DType::kFloat16, 8);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "alibi_slopes: dtype float16 must be float32");
}

TEST(Validation, UnknownBackend) {
  FwdArgs a = valid_fwd();
  a.options.backend = static_cast<Backend>(7);
  EXPECT_REJECTED(run(a), StatusCode::kInvalidArgument, "backend=7 is not a known backend (auto, sm80, sm90)");
}

// --- workspace ----------------------------------------------------------------------------------------------------
TEST(Validation, WorkspaceTooSmall) {
  EXPECT_REJECTED(check_workspace(Workspace{fake_ptr(11), 100}, 4096, "bwd_workspace_size"), StatusCode::kInvalidArgument,
                  "workspace: 100 bytes given, 4096 needed (see bwd_workspace_size)");
  EXPECT_REJECTED(check_workspace(Workspace{nullptr, 8192}, 4096, "bwd_workspace_size"), StatusCode::kInvalidArgument,
                  "workspace: data pointer is null but 4096 bytes are needed");
  EXPECT_TRUE(check_workspace(Workspace{}, 0, "fwd_workspace_size").ok());
}

TEST(Validation, PublicCheckRejectsBeforeAnyGpuWork) {
  BwdArgs a = valid_bwd();
  size_t bytes = 0;
  ASSERT_TRUE(bwd_workspace_size(a, &bytes).ok());
  EXPECT_GT(bytes, 0u);
  a.workspace = Workspace{fake_ptr(12), bytes - 1};
  EXPECT_REJECTED(check(a), StatusCode::kInvalidArgument, "workspace: " + std::to_string(bytes - 1) + " bytes given");
  FwdArgs f = valid_fwd();
  f.q.shape[3] = f.k.shape[3] = 59;
  EXPECT_REJECTED(fwd(f), StatusCode::kInvalidArgument, "q: head_dim=59 must be a multiple of 8");
}

// --- GPU and build support (select_kernel gets the device and the build as arguments) -----------------------------
DeviceInfo device(int major, int minor, const char* name) {
  DeviceInfo d;
  d.cc_major = major;
  d.cc_minor = minor;
  d.name = name;
  return d;
}

BuildInfo build_with(std::vector<KernelKey> fwd) {
  BuildInfo b;
  b.fwd = std::move(fwd);
  b.sass = {80, 90};
  b.ptx = {80};
  return b;
}

ProblemDesc problem(const FwdArgs& a) {
  ProblemDesc p;
  EXPECT_TRUE(validate(a, &p).ok());
  return p;
}

const KernelKey kSm80Bf16_128{Arch::kSm80, DType::kBFloat16, 128, Variant::kDefault};
const KernelKey kSm80Bf16_64{Arch::kSm80, DType::kBFloat16, 64, Variant::kDefault};
const KernelKey kSm90Bf16_128{Arch::kSm90, DType::kBFloat16, 128, Variant::kDefault};

TEST(Validation, UnsupportedGpu) {
  const BuildInfo b = build_with({kSm80Bf16_128});
  KernelKey k;
  EXPECT_REJECTED(select_kernel(problem(valid_fwd(DType::kBFloat16)), b.fwd, "forward", b, device(7, 5, "Tesla T4"), &k),
                  StatusCode::kNotSupported, "device 0 (Tesla T4) has compute capability 7.5; flashcute needs 8.0 or newer");
}

TEST(Validation, NoCodeForThisGpu) {
  BuildInfo b = build_with({kSm80Bf16_128});
  b.sass = {90};
  b.ptx = {};
  KernelKey k;
  EXPECT_REJECTED(select_kernel(problem(valid_fwd(DType::kBFloat16)), b.fwd, "forward", b, device(8, 6, "RTX 3090"), &k),
                  StatusCode::kNotSupported,
                  "this build has no code for compute capability 8.6 (device 0, RTX 3090); rebuild with -DFLASHCUTE_ARCHS including 86");
}

TEST(Validation, DtypeNotCompiled) {
  const BuildInfo b = build_with({kSm80Bf16_128});
  KernelKey k;
  EXPECT_REJECTED(select_kernel(problem(valid_fwd(DType::kFloat16)), b.fwd, "forward", b, device(8, 0, "A100"), &k),
                  StatusCode::kNotSupported,
                  "q: dtype float16 is not compiled into this build; rebuild with -DFLASHCUTE_DTYPES including fp16");
}

TEST(Validation, HeadDimBucketNotCompiled) {
  const BuildInfo b = build_with({kSm80Bf16_64});
  FwdArgs a = valid_fwd(DType::kBFloat16);
  for (TensorDesc* t : {&a.q, &a.k, &a.v, &a.out}) t->shape[3] = 72;
  KernelKey k;
  EXPECT_REJECTED(select_kernel(problem(a), b.fwd, "forward", b, device(8, 0, "A100"), &k), StatusCode::kNotSupported,
                  "q: head_dim=72 needs head-dim bucket 96, which is not compiled into this build for sm80/bfloat16 "
                  "(compiled: 64); rebuild with -DFLASHCUTE_HEAD_DIMS including 96");
}

TEST(Validation, NoKernelsAtAll) {
  const BuildInfo b = build_with({});
  KernelKey k;
  EXPECT_REJECTED(select_kernel(problem(valid_fwd()), b.fwd, "forward", b, device(9, 0, "H100"), &k),
                  StatusCode::kNotSupported, "no attention forward kernel is compiled into this build");
}

TEST(Validation, Sm90BackendNotCompiled) {
  const BuildInfo b = build_with({kSm80Bf16_128});
  FwdArgs a = valid_fwd(DType::kBFloat16);
  a.options.backend = Backend::kSm90;
  KernelKey k;
  EXPECT_REJECTED(select_kernel(problem(a), b.fwd, "forward", b, device(9, 0, "H100"), &k), StatusCode::kNotSupported,
                  "backend=sm90: the SM90 forward path is not compiled into this build; rebuild with -DFLASHCUTE_ARCHS including 90a");
}

TEST(Validation, Sm90BackendOnAmpere) {
  const BuildInfo b = build_with({kSm80Bf16_128, kSm90Bf16_128});
  FwdArgs a = valid_fwd(DType::kBFloat16);
  a.options.backend = Backend::kSm90;
  KernelKey k;
  EXPECT_REJECTED(select_kernel(problem(a), b.fwd, "forward", b, device(8, 0, "A100"), &k), StatusCode::kNotSupported,
                  "backend=sm90 needs a compute capability 9.0 GPU; device 0 (A100) is 8.0");
}

TEST(Validation, SelectsPathAndBucket) {
  const BuildInfo b = build_with({kSm80Bf16_64, kSm80Bf16_128, kSm90Bf16_128});
  FwdArgs a = valid_fwd(DType::kBFloat16);  // d = 64
  KernelKey k;
  ASSERT_TRUE(select_kernel(problem(a), b.fwd, "forward", b, device(9, 0, "H100"), &k).ok());
  EXPECT_EQ(k, kSm80Bf16_64);  // SM90 has no 64 bucket here: auto falls back to SM80
  for (TensorDesc* t : {&a.q, &a.k, &a.v, &a.out}) t->shape[3] = 72;  // pads up to 128
  ASSERT_TRUE(select_kernel(problem(a), b.fwd, "forward", b, device(9, 0, "H100"), &k).ok());
  EXPECT_EQ(k, kSm90Bf16_128);
  ASSERT_TRUE(select_kernel(problem(a), b.fwd, "forward", b, device(8, 0, "A100"), &k).ok());
  EXPECT_EQ(k, kSm80Bf16_128);
  a.options.backend = Backend::kSm80;  // forcing the SM80 path on Hopper
  ASSERT_TRUE(select_kernel(problem(a), b.fwd, "forward", b, device(9, 0, "H100"), &k).ok());
  EXPECT_EQ(k, kSm80Bf16_128);
}

}  // namespace
}  // namespace flashcute
