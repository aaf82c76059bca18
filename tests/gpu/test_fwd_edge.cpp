// The named forward edge cases of docs/TESTING.md ("Edge cases"), through the public API only.
//
//   FwdEmpty        seqlen_q 0, seqlen_k 0 (out exactly 0, lse -inf), batch 0, varlen totals 0
//   FwdMasked       rows that see no key: out exactly 0, lse -inf, no NaN
//   FwdLargeLogits  bf16 q=k=v=133120 (d 16..128, padded up) and randn x5 at short seqlens; huge
//                   logits in the last key block processed (the fused exponent's switch mid-tile)
//   FwdNaN          a NaN in one query row stays in that row
//   FwdMetamorphic  key/value permutation, GQA == MHA with repeated K/V (bitwise), varlen == dense per
//                   sequence (bitwise), a sample alone == inside a batch of 32 (bitwise)
//   FwdStream       the launch goes to args.stream and fwd() does not synchronize
//   FwdRepeat       repeated calls on the same buffers give identical bits
//   FwdVarlen       random lengths, zero-length sequences (incl. the last), all length 1, max_seqlen
//                   larger than the true maximum (same bits)
//   FwdAlibi        slopes per head and per batch x head
//   FwdOffsets64    tensors over 2^31 elements (q/out, then k/v), sampled rows incl. the last ones
//
// Every test runs once per path (SM80 and SM90; names and REPRO lines say which); the SM90 instances
// skip with a message on a GPU that is not compute capability 9.x.
//
// Bitwise assertions and why they hold: every output row of the forward is computed from its own q
// row and the keys it sees, by the same instructions in the same order whatever the batch, the number
// of heads sharing a kv head, or where the sequence sits in a varlen batch (q blocks start at each
// sequence's first row in both forms). TESTING.md requires batch invariance ("a sample alone == the
// same sample inside a batch of 32 (bitwise)"); a kernel that changed its reduction order with the
// batch size or packing (e.g. a split-KV heuristic keyed on the grid size) would break that promise
// too, so the same bar is applied to GQA/MHA and varlen/dense.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fwd_harness.h"

namespace flashcute::testing {
namespace {

constexpr DType kBf16 = DType::kBFloat16;
constexpr DType kFp16 = DType::kFloat16;

FwdCase dense(DType dt, int64_t b, int64_t sq, int64_t sk, int64_t hq, int64_t hkv, int64_t d, uint64_t seed) {
  FwdCase c;
  c.dtype = dt;
  c.batch = b;
  c.seqlen_q = sq;
  c.seqlen_k = sk;
  c.heads_q = hq;
  c.heads_kv = hkv;
  c.d = d;
  c.seed = seed;
  return c;
}

FwdCase varlen(DType dt, const std::vector<int32_t>& lq, const std::vector<int32_t>& lk, int64_t hq, int64_t hkv,
               int64_t d, uint64_t seed) {
  FwdCase c = dense(dt, 1, 0, 0, hq, hkv, d, seed);
  c.cu_seqlens_q = offsets_from_lengths(lq);
  c.cu_seqlens_k = offsets_from_lengths(lk);
  return c;
}

std::string dtype_backend_name(const ::testing::TestParamInfo<std::tuple<DType, Backend>>& info) {
  return std::string(dtype_str(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param));
}

struct CaseName {
  std::vector<std::string> names;
  explicit CaseName(const std::vector<FwdCase>& cases) : names(unique_names(cases)) {}
  std::string operator()(const ::testing::TestParamInfo<FwdCase>& info) const { return names[info.index]; }
};

// A problem with no output element returns OK without launching anything, and writes nothing
// (not even outside the empty tensors).
void expect_no_output_call(const FwdCase& c) {
  const FwdInputs in = make_inputs(c);
  const GpuResult g = run_gpu(c, in);
  ASSERT_TRUE(g.status.ok()) << "REPRO: " << c.str() << "\n  fwd() on an empty problem returned "
                             << to_string(g.status.code()) << ": " << g.status.message();
  EXPECT_TRUE(g.outside_written.empty()) << "REPRO: " << c.str() << "\n  " << g.outside_written;
  EXPECT_TRUE(g.out_untouched) << "REPRO: " << c.str();
}

// ================================================================================================
// Empty shapes.

class FwdEmpty : public OnBackend {};

TEST_P(FwdEmpty, SeqlenQZero) {
  FC_REQUIRE_GPU();
  expect_no_output_call(dense(kBf16, 2, 0, 37, 6, 2, 128, 1));
}

TEST_P(FwdEmpty, BatchZero) {
  FC_REQUIRE_GPU();
  expect_no_output_call(dense(kBf16, 0, 16, 16, 6, 2, 128, 2));
}

TEST_P(FwdEmpty, VarlenTotalQZero) {
  FC_REQUIRE_GPU();
  expect_no_output_call(varlen(kBf16, {0, 0, 0}, {5, 0, 9}, 6, 2, 128, 3));
}

TEST_P(FwdEmpty, VarlenTotalQAndKZero) {
  FC_REQUIRE_GPU();
  expect_no_output_call(varlen(kBf16, {0, 0}, {0, 0}, 4, 4, 128, 4));
}

// Every row sees no key: out exactly 0 and lse -inf everywhere (the kernel must still run).
TEST_P(FwdEmpty, SeqlenKZero) {
  FC_REQUIRE_GPU();
  FC_CHECK_FWD_CASE(dense(kBf16, 2, 7, 0, 6, 2, 128, 5));
}

TEST_P(FwdEmpty, SeqlenKZeroCausal) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 3, 130, 0, 4, 1, 128, 6);
  c.causal = true;
  FC_CHECK_FWD_CASE(c);
}

TEST_P(FwdEmpty, VarlenTotalKZero) {
  FC_REQUIRE_GPU();
  FC_CHECK_FWD_CASE(varlen(kBf16, {3, 0, 70}, {0, 0, 0}, 6, 2, 128, 7));
}

// ================================================================================================
// Fully masked rows (out exactly 0, lse -inf, never NaN; the harness checks every such row).

class FwdMasked : public OnBackend {};

TEST_P(FwdMasked, CausalSeqlenQGreaterThanSeqlenK) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 2, 257, 64, 6, 2, 128, 10);  // rows 0..192 see nothing
  c.causal = true;
  FC_CHECK_FWD_CASE(c);
}

TEST_P(FwdMasked, WindowLeavesLeadingRowsEmpty) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 2, 300, 100, 6, 2, 128, 11);  // diag = i - 200: rows < 200 see nothing
  c.window_left = 8;
  c.window_right = 0;
  FC_CHECK_FWD_CASE(c);
}

TEST_P(FwdMasked, Window00WithOneKey) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 1, 239, 1, 4, 4, 128, 12);  // only the last row sees the single key
  c.window_left = 0;
  c.window_right = 0;
  FC_CHECK_FWD_CASE(c);
}

TEST_P(FwdMasked, VarlenSequencesFullyMasked) {
  FC_REQUIRE_GPU();
  FwdCase c = varlen(kBf16, {200, 5, 129, 64}, {10, 5, 0, 200}, 6, 2, 128, 13);
  c.causal = true;
  FC_CHECK_FWD_CASE(c);
}

TEST_P(FwdMasked, SoftcapAndAlibiOnEmptyRows) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 2, 200, 70, 4, 2, 128, 14);
  c.causal = true;
  c.softcap = 30.0f;
  c.alibi = Alibi::kPerHead;
  FC_CHECK_FWD_CASE(c);
}

// ================================================================================================
// Large logits.

// q = k = v = 133120 in bf16: every logit is 133120^2 * d * scale (about 2e11 at d 128), all equal,
// so out is exactly 133120 and lse = logit + log(seqlen_k). A kernel that does not subtract the row
// max before exp overflows.
class FwdLargeLogitsConst : public OnBackendBase<int64_t> {};

TEST_P(FwdLargeLogitsConst, Bf16QKV133120) {
  FC_REQUIRE_GPU();
  const int64_t d = param();
  FwdCase c = dense(kBf16, 2, 130, 200, 4, 2, d, 20);
  FwdInputs in = make_inputs(c);
  for (HostTensor* t : {&in.q, &in.k, &in.v}) {
    for (size_t i = 0; i < t->bits.size(); ++i) t->set(c.dtype, static_cast<int64_t>(i), 133120.0);
  }
  ASSERT_EQ(in.q.vals[0], 133120.0) << "133120 must be exact in bf16";
  FC_EXPECT_FWD_OUTCOME(check_fwd_case(c, in));
  // Causal too: rows see different numbers of identical keys, the answer is still 133120.
  c.causal = true;
  FC_EXPECT_FWD_OUTCOME(check_fwd_case(c, in));
}

INSTANTIATE_TEST_SUITE_P(HeadDims, FwdLargeLogitsConst,
                         ::testing::Combine(::testing::Values<int64_t>(16, 32, 64, 128), ::testing::ValuesIn(test_backends())),
                         [](const auto& p) {
                           return "d" + std::to_string(std::get<0>(p.param)) + "_" + to_string(std::get<1>(p.param));
                         });

// Large logits arriving late in a tile. The fused-exponent softmax (SM90, d 64) switches to the
// score-domain form for the rest of a tile once a row's scaled max reaches 2^20, and rescales what it
// has summed so far from the fused reference (common/softmax.cuh). Key blocks run from the last to
// the first, so ordinary logits come first (q x 128 against randn k: scaled maxima of a few hundred)
// and the first 128 keys, k x 8192 (still finite in fp16), arrive last and lift every row's max to
// about 2^21 or more. Both dtypes, with and without a causal mask (every row sees the first keys).
class FwdLargeLogitsLate : public OnBackend {};

TEST_P(FwdLargeLogitsLate, FusedThenScoreDomain) {
  FC_REQUIRE_GPU();
  uint64_t seed = 60;
  for (DType dt : {kBf16, kFp16}) {
    for (bool causal : {false, true}) {
      FwdCase c = dense(dt, 2, 200, 640, 4, 2, 64, seed++);
      c.causal = causal;
      FwdInputs in = make_inputs(c);
      for (size_t i = 0; i < in.q.vals.size(); ++i) in.q.set(dt, static_cast<int64_t>(i), in.q.vals[i] * 128.0);
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < 128; ++j)
          for (int64_t h = 0; h < c.heads_kv; ++h)
            for (int64_t col = 0; col < c.d; ++col) {
              const int64_t i = in.k.index(b * c.seqlen_k + j, h, col);
              in.k.set(dt, i, in.k.vals[i] * 8192.0);
            }
      FC_EXPECT_FWD_OUTCOME(check_fwd_case(c, in));
    }
  }
}

// The same switch with every row's scaled max just below 2^20 in the blocks processed first and just
// above it in the last one (2^20 - 5.06 -> 2^20 + 5.0 in fp32: past the lazy-rescale threshold of
// 8, so the reference moves), so the 512 earlier keys keep a weight of about 2^-10 each against the
// last 128: a wrong fused -> score-domain factor (1, or the wrong sign) would move out far past
// tolerance. q is constant (every row alike); k rows are 62 x y, z1 and z2, with z2 setting the
// fine logit (default scale 1/8: scaled max = (62 y + z1 + z2) q * log2(e) / 8). Exact in both
// dtypes.
TEST_P(FwdLargeLogitsLate, FusedThenScoreDomainNearTheSwitch) {
  FC_REQUIRE_GPU();
  uint64_t seed = 70;
  for (DType dt : {kBf16, kFp16}) {
    // fp16 tops out at 65504: q = 2 and k halved give the same logits.
    const double qv = dt == kBf16 ? 1.0 : 2.0;
    const double y = 92160.0 / qv, z1 = 100352.0 / qv, z2_first = 240.0 / qv, z2_last = 296.0 / qv;
    for (bool causal : {false, true}) {
      FwdCase c = dense(dt, 2, 200, 640, 4, 2, 64, seed++);
      c.causal = causal;
      FwdInputs in = make_inputs(c);
      for (size_t i = 0; i < in.q.vals.size(); ++i) in.q.set(dt, static_cast<int64_t>(i), qv);
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t j = 0; j < c.seqlen_k; ++j)
          for (int64_t h = 0; h < c.heads_kv; ++h)
            for (int64_t col = 0; col < c.d; ++col) {
              const double x = col < 62 ? y : col == 62 ? z1 : (j < 128 ? z2_last : z2_first);
              in.k.set(dt, in.k.index(b * c.seqlen_k + j, h, col), x);
            }
      ASSERT_EQ(in.k.vals[in.k.index(0, 0, 63)], z2_last) << "inputs must be exact in the dtype";
      ASSERT_EQ(in.k.vals[in.k.index(200, 0, 63)], z2_first);
      ASSERT_EQ(in.k.vals[in.k.index(0, 0, 0)], y);
      ASSERT_EQ(in.k.vals[in.k.index(0, 0, 62)], z1);
      FC_EXPECT_FWD_OUTCOME(check_fwd_case(c, in));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(D64, FwdLargeLogitsLate, ::testing::ValuesIn(test_backends()), backend_param_name);

// randn x5 at short seqlens: the softmax is nearly one-hot; finite and within tolerance.
std::vector<FwdCase> randn_x5_cases() {
  std::vector<FwdCase> v;
  uint64_t seed = 30;
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {1, 5}, {3, 17}, {17, 3}, {64, 65}};
  for (DType dt : {kBf16, kFp16}) {
    for (auto [sq, sk] : shapes) {
      FwdCase c = dense(dt, 2, sq, sk, 4, 2, dt == kBf16 ? 128 : 64, seed++);
      c.input_scale = 5.0;
      c.causal = sq > sk;
      v.push_back(c);
    }
  }
  return v;
}

// Large logits from randn inputs: randn_x5_cases() and large_scale_cases() below.
class FwdLargeLogits : public ::testing::TestWithParam<FwdCase> {};

TEST_P(FwdLargeLogits, MatchesReference) {
  FC_REQUIRE_GPU();
  FC_REQUIRE_BACKEND(GetParam().backend);
  FC_CHECK_FWD_CASE(GetParam());
}

INSTANTIATE_TEST_SUITE_P(RandnTimes5Short, FwdLargeLogits, ::testing::ValuesIn(on_each_backend(randn_x5_cases())),
                         CaseName(on_each_backend(randn_x5_cases())));

// Softmax scales far above 1/sqrt(d) on randn inputs, d 128: a key block processed after a tile's
// first one lifts rows' maxima past their references by more than the lazy-rescale threshold (scale
// 2: tens of log2 units, which SM90's speculative exps correct in place) or by more than 126 (scale
// 30: S recomputed from smem; common/softmax.cuh, update_speculative), with windows that give rows
// their first keys after a tile's first block, GQA, a ragged key count, and 4608 keys (the SM90 kernel
// with one CTA per tile; shorter ones run persistent). Both dtypes.
std::vector<FwdCase> large_scale_cases() {
  std::vector<FwdCase> v;
  uint64_t seed = 80;
  for (DType dt : {kBf16, kFp16}) {
    for (float scale : {2.0f, 30.0f}) {
      auto add = [&](FwdCase c, bool causal, int64_t wl, int64_t wr) {
        c.scale = scale;
        c.causal = causal;
        c.window_left = wl;
        c.window_right = wr;
        v.push_back(c);
      };
      add(dense(dt, 1, 1024, 1024, 4, 4, 128, seed++), false, -1, -1);
      add(dense(dt, 1, 1024, 1024, 4, 4, 128, seed++), true, -1, -1);
      add(dense(dt, 1, 1024, 1024, 4, 4, 128, seed++), false, 200, 0);
      add(dense(dt, 1, 900, 900, 4, 4, 128, seed++), false, 50, 300);
      add(dense(dt, 2, 300, 1100, 4, 1, 128, seed++), false, -1, -1);
      add(dense(dt, 1, 256, 4608, 2, 2, 128, seed++), false, -1, -1);
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(ScalesD128, FwdLargeLogits, ::testing::ValuesIn(on_each_backend(large_scale_cases())),
                         CaseName(on_each_backend(large_scale_cases())));

// ================================================================================================
// NaN in one q row: that row's out and lse are NaN, every other row is untouched by it.

class FwdNaN : public OnBackendBase<DType> {};

TEST_P(FwdNaN, NaNInOneQueryRowStaysInThatRow) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(param(), 2, 130, 200, 6, 2, 128, 40);
  c.causal = true;
  FwdInputs in = make_inputs(c);
  const int64_t b = 1, i = 70, h = 3;
  in.q.set(c.dtype, in.q.index(b * c.seqlen_q + i, h, 5), kNaN);
  ASSERT_TRUE(std::isnan(in.q.vals[in.q.index(b * c.seqlen_q + i, h, 5)]));
  const GpuResult g = run_gpu(c, in);
  FC_ASSERT_FWD_STATUS(g.status);
  // The oracle's row (b, i, h) is NaN and no other: the tolerance rule's NaN parity does the rest.
  const RefResult r = compute_reference(c, in);
  int64_t nan_rows = 0;
  for (double x : r.lse_golden) nan_rows += std::isnan(x) ? 1 : 0;
  ASSERT_EQ(nan_rows, 1) << "oracle: expected exactly one NaN row";
  const FwdOutcome o = check_result(c, in, g, r);
  ASSERT_TRUE(o.ok) << o.message;
  for (int64_t col = 0; col < c.head_dim_v(); ++col) {
    EXPECT_TRUE(std::isnan(out_value(c, g, b * c.seqlen_q + i, h, col))) << "col " << col;
  }
  EXPECT_TRUE(std::isnan(g.lse[lse_pos(c, b, h, i)]));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FwdNaN, ::testing::Combine(::testing::Values(kBf16, kFp16), ::testing::ValuesIn(test_backends())),
                         dtype_backend_name);

// ================================================================================================
// Metamorphic relations.

class FwdMetamorphic : public OnBackend {};

// Permuting the keys and values of each sequence jointly (no mask, no ALiBi: the set of keys each row
// sees is the same) changes nothing: the permuted run meets the tolerance rule against the oracle of
// the original order.
TEST_P(FwdMetamorphic, PermutingKeysAndValuesJointlyChangesNothing) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 2, 100, 300, 6, 2, 128, 50);
  c.softcap = 30.0f;
  const FwdInputs in = make_inputs(c);
  FwdInputs perm = in;
  std::mt19937_64 rng(51);
  for (int64_t b = 0; b < c.batch; ++b) {
    std::vector<int64_t> p(static_cast<size_t>(c.seqlen_k));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    for (int64_t j = 0; j < c.seqlen_k; ++j) {
      for (int64_t h = 0; h < c.heads_kv; ++h) {
        const int64_t dst = b * c.seqlen_k + j, src = b * c.seqlen_k + p[j];
        for (HostTensor* t : {&perm.k, &perm.v}) {
          const HostTensor& s = t == &perm.k ? in.k : in.v;
          for (int64_t col = 0; col < t->dim; ++col) t->bits[t->index(dst, h, col)] = s.bits[s.index(src, h, col)];
          std::copy_n(s.vals.begin() + s.index(src, h), t->dim, t->vals.begin() + t->index(dst, h));
        }
      }
    }
  }
  const GpuResult g = run_gpu(c, in);
  FC_ASSERT_FWD_STATUS(g.status);
  const GpuResult gp = run_gpu(c, perm);
  FC_ASSERT_FWD_STATUS(gp.status);
  const RefResult r = compute_reference(c, in);
  const FwdOutcome o = check_result(c, in, g, r);
  ASSERT_TRUE(o.ok) << o.message;
  // The permuted run against the original order's oracle.
  const FwdOutcome op = check_result(c, in, gp, r);
  ASSERT_TRUE(op.ok) << "after permuting keys and values:\n" << op.message;
}

// GQA (8 q heads on 2 kv heads) == MHA with each kv head repeated for its 4 q heads, bitwise.
class FwdMetamorphicDtype : public OnBackendBase<DType> {};

TEST_P(FwdMetamorphicDtype, GqaEqualsMhaWithRepeatedKV) {
  FC_REQUIRE_GPU();
  FwdCase gqa = dense(param(), 2, 150, 270, 8, 2, 128, 60);
  gqa.causal = true;
  gqa.softcap = 30.0f;
  const FwdInputs in = make_inputs(gqa);
  FwdCase mha = gqa;
  mha.heads_kv = gqa.heads_q;
  FwdInputs in_mha = in;
  const int64_t group = gqa.heads_q / gqa.heads_kv;
  for (HostTensor* t : {&in_mha.k, &in_mha.v}) {
    const HostTensor& s = t == &in_mha.k ? in.k : in.v;
    t->resize(s.rows, mha.heads_kv, s.dim);
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t h = 0; h < mha.heads_kv; ++h) {
        std::copy_n(s.bits.begin() + s.index(r, h / group), s.dim, t->bits.begin() + t->index(r, h));
        std::copy_n(s.vals.begin() + s.index(r, h / group), s.dim, t->vals.begin() + t->index(r, h));
      }
    }
  }
  const GpuResult g = run_gpu(gqa, in);
  FC_ASSERT_FWD_STATUS(g.status);
  const GpuResult gm = run_gpu(mha, in_mha);
  FC_ASSERT_FWD_STATUS(gm.status);
  const FwdOutcome o = check_result(gqa, in, g, compute_reference(gqa, in));
  ASSERT_TRUE(o.ok) << o.message;
  const int64_t od = first_bit_difference(g.out, gm.out), ld = first_bit_difference(g.lse, gm.lse);
  EXPECT_EQ(od, -1) << "REPRO: " << gqa.str() << "\n  out differs from MHA with repeated K/V at element " << od;
  EXPECT_EQ(ld, -1) << "REPRO: " << gqa.str() << "\n  lse differs from MHA with repeated K/V at element " << ld;
}

// A varlen batch == each of its sequences run densely on its own (batch 1), bitwise, out and lse.
TEST_P(FwdMetamorphicDtype, VarlenEqualsDensePerSequence) {
  FC_REQUIRE_GPU();
  FwdCase vc = varlen(param(), {37, 128, 1, 200, 0, 65}, {50, 128, 64, 199, 10, 300}, 6, 2, 128, 70);
  vc.causal = true;
  const FwdInputs in = make_inputs(vc);
  const GpuResult g = run_gpu(vc, in);
  FC_ASSERT_FWD_STATUS(g.status);
  const FwdOutcome o = check_result(vc, in, g, compute_reference(vc, in));
  ASSERT_TRUE(o.ok) << o.message;
  for (int64_t b = 0; b < vc.nbatch(); ++b) {
    FwdCase dc = dense(vc.dtype, 1, vc.len_q(b), vc.len_k(b), vc.heads_q, vc.heads_kv, vc.d, vc.seed);
    dc.causal = vc.causal;
    FwdInputs din;
    const auto slice = [&](const HostTensor& s, int64_t row0, int64_t rows, HostTensor* t) {
      t->resize(rows, s.heads, s.dim);
      std::copy_n(s.bits.begin() + s.index(row0, 0), rows * s.heads * s.dim, t->bits.begin());
      std::copy_n(s.vals.begin() + s.index(row0, 0), rows * s.heads * s.dim, t->vals.begin());
    };
    slice(in.q, vc.row0_q(b), vc.len_q(b), &din.q);
    slice(in.k, vc.row0_k(b), vc.len_k(b), &din.k);
    slice(in.v, vc.row0_k(b), vc.len_k(b), &din.v);
    const GpuResult gd = run_gpu(dc, din);
    FC_ASSERT_FWD_STATUS(gd.status);
    const int64_t n = vc.len_q(b) * vc.heads_q * vc.head_dim_v();
    const std::vector<uint16_t> vo(g.out.begin() + vc.row0_q(b) * vc.heads_q * vc.head_dim_v(),
                                   g.out.begin() + vc.row0_q(b) * vc.heads_q * vc.head_dim_v() + n);
    std::vector<float> vl;
    for (int64_t h = 0; h < vc.heads_q; ++h) {
      for (int64_t i = 0; i < vc.len_q(b); ++i) vl.push_back(g.lse[lse_pos(vc, b, h, i)]);
    }
    const int64_t od = first_bit_difference(vo, gd.out), ld = first_bit_difference(vl, gd.lse);
    EXPECT_EQ(od, -1) << "REPRO: " << vc.str() << "\n  sequence " << b << ": out differs from " << dc.str()
                      << " at element " << od;
    EXPECT_EQ(ld, -1) << "REPRO: " << vc.str() << "\n  sequence " << b << ": lse differs from " << dc.str()
                      << " at element " << ld;
  }
}

// A sample alone == the same sample inside a batch of 32, bitwise (TESTING.md).
TEST_P(FwdMetamorphicDtype, SampleAloneEqualsSampleInBatchOf32) {
  FC_REQUIRE_GPU();
  FwdCase bc = dense(param(), 32, 77, 300, 6, 2, 128, 80);
  bc.causal = true;
  const FwdInputs in = make_inputs(bc);
  const GpuResult g = run_gpu(bc, in);
  FC_ASSERT_FWD_STATUS(g.status);
  const FwdOutcome o = check_result(bc, in, g, compute_reference(bc, in));
  ASSERT_TRUE(o.ok) << o.message;
  for (int64_t b : {int64_t{0}, int64_t{13}, int64_t{31}}) {
    FwdCase sc = bc;
    sc.batch = 1;
    FwdInputs sin;
    const auto slice = [&](const HostTensor& s, int64_t rows, HostTensor* t) {
      t->resize(rows, s.heads, s.dim);
      std::copy_n(s.bits.begin() + s.index(b * rows, 0), rows * s.heads * s.dim, t->bits.begin());
      std::copy_n(s.vals.begin() + s.index(b * rows, 0), rows * s.heads * s.dim, t->vals.begin());
    };
    slice(in.q, bc.seqlen_q, &sin.q);
    slice(in.k, bc.seqlen_k, &sin.k);
    slice(in.v, bc.seqlen_k, &sin.v);
    const GpuResult gs = run_gpu(sc, sin);
    FC_ASSERT_FWD_STATUS(gs.status);
    const int64_t n = bc.seqlen_q * bc.heads_q * bc.head_dim_v();
    const std::vector<uint16_t> bo(g.out.begin() + b * n, g.out.begin() + (b + 1) * n);
    const int64_t nl = bc.heads_q * bc.seqlen_q;
    const std::vector<float> bl(g.lse.begin() + b * nl, g.lse.begin() + (b + 1) * nl);
    const int64_t od = first_bit_difference(bo, gs.out), ld = first_bit_difference(bl, gs.lse);
    EXPECT_EQ(od, -1) << "REPRO: " << bc.str() << "\n  sample " << b << " alone differs in out at element " << od;
    EXPECT_EQ(ld, -1) << "REPRO: " << bc.str() << "\n  sample " << b << " alone differs in lse at element " << ld;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FwdMetamorphicDtype, ::testing::Combine(::testing::Values(kBf16, kFp16), ::testing::ValuesIn(test_backends())),
                         dtype_backend_name);

// ================================================================================================
// Streams.

// A host callback that holds the stream until the gate opens (or a timeout passes).
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> timed_out{false};
};

void CUDART_CB hold_stream(void* p) {
  auto* gate = static_cast<Gate*>(p);
  const auto t0 = std::chrono::steady_clock::now();
  while (!gate->open.load()) {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20)) {
      gate->timed_out = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

class FwdStream : public OnBackend {};

// While a non-blocking stream is held by a host callback, fwd() must return at once (it does not
// synchronize) and nothing may have been written yet (the kernel went to args.stream, not to the
// legacy or per-thread default stream). Once released, the result matches the oracle.
TEST_P(FwdStream, LaunchesOnArgsStreamAndDoesNotSynchronize) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 2, 200, 300, 6, 2, 128, 90);
  c.causal = true;
  c.stream = StreamKind::kNonBlocking;
  const FwdInputs in = make_inputs(c);
  FwdDeviceState st;
  prepare_device(c, in, &st);
  TestStream stream(true);
  TestStream probe(true);
  const size_t out_bytes = st.out.buf.bytes();
  void* pinned = nullptr;
  FC_CUDA_CHECK(cudaMallocHost(&pinned, out_bytes));
  std::vector<uint8_t> early(out_bytes);

  // Warm-up on the same stream first: the first launch of a kernel in a process loads its module
  // (CUDA lazy loading), and loading waits for work in flight. That one-time cost is documented in
  // include/flashcute/api.h; the promise tested here is about every call after it.
  st.dense.stream = stream.api();
  FC_ASSERT_FWD_STATUS(fwd(st.dense));
  FC_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  FC_CUDA_CHECK(cudaMemset(st.out.buf.get(), 0xFF, out_bytes));

  Gate gate;
  FC_CUDA_CHECK(cudaLaunchHostFunc(stream.get(), hold_stream, &gate));
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = fwd(st.dense);
  const double call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Whatever went to the default streams has finished after these; our stream is still held.
  const cudaError_t e1 = cudaStreamSynchronize(cudaStreamLegacy);
  const cudaError_t e2 = cudaStreamSynchronize(cudaStreamPerThread);
  const cudaError_t e3 = cudaMemcpyAsync(pinned, st.out.buf.get(), out_bytes, cudaMemcpyDeviceToHost, probe.get());
  const cudaError_t e4 = cudaStreamSynchronize(probe.get());
  std::memcpy(early.data(), pinned, out_bytes);
  const bool was_held = !gate.timed_out.load();
  gate.open = true;
  const cudaError_t e5 = cudaStreamSynchronize(stream.get());
  cudaFreeHost(pinned);
  for (cudaError_t e : {e1, e2, e3, e4, e5}) ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
  FC_ASSERT_FWD_STATUS(s);

  ASSERT_TRUE(was_held && call_s < 15.0)
      << "REPRO: " << c.str() << "\n  fwd() took " << call_s
      << " s while its stream was held: it synchronizes (the API promises that no call does)";
  const bool untouched = std::all_of(early.begin(), early.end(), [](uint8_t x) { return x == 0xFF; });
  EXPECT_TRUE(untouched)
      << "REPRO: " << c.str()
      << "\n  out was written while args.stream was still held: the kernel did not run on args.stream";
  const GpuResult g = read_result(c, st);
  const FwdOutcome o = check_result(c, in, g, compute_reference(c, in));
  ASSERT_TRUE(o.ok) << o.message;
}

TEST_P(FwdStream, NonBlockingStreamVarlen) {
  FC_REQUIRE_GPU();
  FwdCase c = varlen(kBf16, {33, 0, 190}, {70, 12, 190}, 6, 3, 128, 91);
  c.stream = StreamKind::kNonBlocking;
  c.window_left = 20;
  c.window_right = 5;
  FC_CHECK_FWD_CASE(c);
}

// ================================================================================================
// Repeated calls on the same buffers: identical bits, with and without re-filling the outputs, on
// the legacy stream and then on a non-blocking one.

class FwdRepeat : public OnBackend {};

TEST_P(FwdRepeat, RepeatedCallsOnSameBuffersAreIdentical) {
  FC_REQUIRE_GPU();
  FwdCase c = dense(kBf16, 3, 190, 333, 6, 2, 128, 100);
  c.causal = true;
  c.softcap = 30.0f;
  const FwdInputs in = make_inputs(c);
  FwdDeviceState st;
  prepare_device(c, in, &st);
  TestStream nb(true);
  FC_ASSERT_FWD_STATUS(call_fwd(&st, nullptr));
  const GpuResult first = read_result(c, st);
  const FwdOutcome o = check_result(c, in, first, compute_reference(c, in));
  ASSERT_TRUE(o.ok) << o.message;
  for (int rep = 0; rep < 4; ++rep) {
    if (rep % 2 == 1) {  // re-fill with NaN between some calls
      FC_CUDA_CHECK(cudaMemset(st.out.buf.get(), 0xFF, st.out.buf.bytes()));
      FC_CUDA_CHECK(cudaMemset(st.lse.buf.get(), 0xFF, st.lse.buf.bytes()));
      FC_CUDA_CHECK(cudaDeviceSynchronize());
    }
    FC_ASSERT_FWD_STATUS(call_fwd(&st, rep >= 2 ? nb.api() : nullptr));
    const GpuResult again = read_result(c, st);
    EXPECT_EQ(first_bit_difference(first.out, again.out), -1) << "REPRO: " << c.str() << "\n  call " << rep + 2;
    EXPECT_EQ(first_bit_difference(first.lse, again.lse), -1) << "REPRO: " << c.str() << "\n  call " << rep + 2;
    EXPECT_TRUE(again.outside_written.empty()) << again.outside_written;
  }
}

// ================================================================================================
// The forward's workspace is optional (api.h): on SM90 the persistent kernel takes its tiles from a
// counter there (zeroed by the launch, so the 0xFF / 0x7F garbage filled in here must not matter),
// and without one it runs the static deal or one CTA per tile. Given as Workspace::zeroed (zero, and
// no reset by the launch), the kernel must leave it zero for the next call. Each tile's arithmetic
// is the same whichever CTA runs it, so every variant gives the same bits; the first call is also
// checked against the reference. Sizes: many tiles per SM at seqlen_k above and below 1024, and d 64 causal
// past 2048 keys and unmasked from 4096 (the masked kernel: dynamic, or one CTA per tile).

class FwdWorkspace : public OnBackend {};

TEST_P(FwdWorkspace, OptionalAndGivesTheSameBitsWithOrWithout) {
  FC_REQUIRE_GPU();
  std::vector<FwdCase> cases;
  {
    FwdCase c = dense(kBf16, 4, 2048, 2048, 16, 4, 64, 170);
    c.causal = true;
    cases.push_back(c);
    cases.push_back(dense(kFp16, 3, 1500, 1700, 16, 16, 128, 171));
    c = dense(kBf16, 8, 700, 1000, 16, 8, 128, 172);
    c.causal = true;
    cases.push_back(c);
    // d 64 causal past the persistent limits: the masked kernel, dynamic with a workspace and one CTA
    // per tile without.
    c = dense(kBf16, 1, 3000, 3000, 8, 8, 64, 176);
    c.causal = true;
    cases.push_back(c);
    c = dense(kBf16, 2, 1100, 1100, 8, 2, 256, 173);
    c.causal = true;
    cases.push_back(c);
    c = dense(kFp16, 4, 900, 3000, 12, 4, 64, 174);
    c.window_left = 200;
    c.window_right = 40;
    c.softcap = 30.0f;
    cases.push_back(c);
    std::vector<int32_t> lq, lk;
    for (int i = 0; i < 24; ++i) {
      lq.push_back(i % 5 == 0 ? 0 : (i * 397) % 2500 + 1);
      lk.push_back((i * 211) % 2500 + 1);
    }
    c = varlen(kBf16, lq, lk, 16, 4, 128, 175);
    c.causal = true;
    cases.push_back(c);
    // d 64 varlen causal past 2048 keys (the masked kernel; without a workspace one CTA per tile,
    // among them tiles past their sequence's end, which run nothing).
    c = varlen(kFp16, {2900, 0, 130, 3300, 1, 2049}, {3100, 40, 130, 2800, 700, 2600}, 8, 2, 64, 177);
    c.causal = true;
    cases.push_back(c);
    // d 64 unmasked from 4096 keys: the masked kernel too (masked_full_min_seqlen_k), dynamic with a
    // workspace and one CTA per tile without.
    cases.push_back(dense(kBf16, 1, 2000, 4500, 8, 2, 64, 178));
  }
  int ran = 0;
  std::string not_built;
  for (const FwdCase& c : cases) {
    SCOPED_TRACE(c.str());
    const FwdInputs in = make_inputs(c);
    FwdDeviceState st;
    prepare_device(c, in, &st);  // with a workspace of fwd_workspace_size bytes, 0xFF-filled
    ASSERT_GT(st.workspace.bytes(), 0u);
    const Status s = call_fwd(&st, nullptr);
    if (s.code() == StatusCode::kNotSupported) {  // this case's kernel is not in the build: the next one
      not_built += "\n  " + c.str() + ": " + s.message();
      continue;
    }
    ASSERT_TRUE(s.ok()) << "REPRO: " << c.str() << "\n  " << to_string(s.code()) << ": " << s.message();
    ++ran;
    const GpuResult first = read_result(c, st);
    const FwdOutcome o = check_result(c, in, first, compute_reference(c, in));
    ASSERT_TRUE(o.ok) << o.message;
    const Workspace given = st.dense.workspace;
    for (int variant = 0; variant < 6; ++variant) {
      FC_CUDA_CHECK(cudaMemset(st.out.buf.get(), 0xFF, st.out.buf.bytes()));
      FC_CUDA_CHECK(cudaMemset(st.lse.buf.get(), 0xFF, st.lse.buf.bytes()));
      // 0: no workspace; 1: the workspace refilled with 0x7F bytes (a large positive count); 2: given
      // again without a refill (the previous launch's final count); 3: zeroed here and given as
      // Workspace::zeroed; 4, 5: given as zeroed again, as the previous launches left it.
      Workspace w = variant == 0 ? Workspace{} : given;
      w.zeroed = variant >= 3;
      if (variant == 1) FC_CUDA_CHECK(cudaMemset(given.data, 0x7F, given.bytes));
      if (variant == 3) FC_CUDA_CHECK(cudaMemset(given.data, 0, given.bytes));
      FC_CUDA_CHECK(cudaDeviceSynchronize());
      st.dense.workspace = w;
      st.var.workspace = w;
      FC_ASSERT_FWD_STATUS(call_fwd(&st, nullptr));
      const GpuResult again = read_result(c, st);
      EXPECT_EQ(first_bit_difference(first.out, again.out), -1) << "REPRO: " << c.str() << "\n  variant " << variant;
      EXPECT_EQ(first_bit_difference(first.lse, again.lse), -1) << "REPRO: " << c.str() << "\n  variant " << variant;
      EXPECT_TRUE(again.outside_written.empty()) << again.outside_written;
      if (w.zeroed) {  // zero when given, so zero after: the launch must not leave a count behind
        std::vector<unsigned char> bytes(given.bytes);
        FC_CUDA_CHECK(cudaMemcpy(bytes.data(), given.data, bytes.size(), cudaMemcpyDeviceToHost));
        const bool zero = std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == 0; });
        EXPECT_TRUE(zero) << "REPRO: " << c.str() << "\n  variant " << variant
                          << ": the workspace is not zero after the launch";
      }
    }
  }
  if (ran == 0) GTEST_SKIP() << "no case's kernel is in this build:" << not_built;
  if (!not_built.empty())
    std::printf("[ note ] FwdWorkspace: %d cases ran; not in this build:%s\n", ran, not_built.c_str());
}

// ================================================================================================
// Varlen.

std::vector<int32_t> random_lengths(std::mt19937_64& rng, int n, int lo, int hi) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(lo + static_cast<int32_t>(rng() % (hi - lo + 1)));
  return v;
}

std::vector<FwdCase> varlen_cases() {
  std::vector<FwdCase> v;
  std::mt19937_64 rng(110);
  uint64_t seed = 110;
  // Random lengths (including 0) for q and k independently, no mask, causal, window, both dtypes.
  for (DType dt : {kBf16, kFp16}) {
    FwdCase c = varlen(dt, random_lengths(rng, 12, 0, 300), random_lengths(rng, 12, 0, 300), 8, 2, 128, seed++);
    v.push_back(c);
    c = varlen(dt, random_lengths(rng, 9, 1, 400), random_lengths(rng, 9, 1, 400), 6, 1, 64, seed++);
    c.causal = true;
    v.push_back(c);
    c = varlen(dt, random_lengths(rng, 7, 0, 260), random_lengths(rng, 7, 0, 260), 9, 3, 96, seed++);
    c.window_left = 32;
    c.window_right = 8;
    c.softcap = 30.0f;
    v.push_back(c);
  }
  // Zero-length sequences, first, middle and last (q, k or both).
  v.push_back(varlen(kBf16, {0, 50, 0, 129, 0}, {0, 70, 33, 129, 0}, 6, 2, 128, seed++));
  {
    FwdCase c = varlen(kBf16, {64, 0, 65, 7, 0}, {64, 20, 0, 7, 0}, 6, 2, 128, seed++);
    c.causal = true;
    v.push_back(c);
  }
  // All length 1, and length-1 queries over long keys (decode-like).
  v.push_back(varlen(kBf16, std::vector<int32_t>(17, 1), std::vector<int32_t>(17, 1), 6, 2, 128, seed++));
  {
    FwdCase c = varlen(kFp16, std::vector<int32_t>(17, 1), std::vector<int32_t>(17, 1), 6, 6, 64, seed++);
    c.causal = true;
    v.push_back(c);
  }
  {
    FwdCase c = varlen(kBf16, std::vector<int32_t>(9, 1), random_lengths(rng, 9, 1, 700), 32, 4, 128, seed++);
    c.causal = true;
    v.push_back(c);
  }
  // Non-contiguous varlen layouts; no host copies of cu_seqlens.
  {
    FwdCase c = varlen(kBf16, random_lengths(rng, 6, 0, 200), random_lengths(rng, 6, 0, 200), 6, 2, 128, seed++);
    c.set_layouts(Layout::kPadded);
    c.pass_host_cu = false;
    v.push_back(c);
    c = varlen(kBf16, random_lengths(rng, 6, 1, 200), random_lengths(rng, 6, 1, 200), 6, 3, 128, seed++);
    c.set_layouts(Layout::kHeadMajor);
    c.causal = true;
    v.push_back(c);
  }
  return v;
}

class FwdVarlen : public ::testing::TestWithParam<FwdCase> {};

TEST_P(FwdVarlen, MatchesReference) {
  FC_REQUIRE_GPU();
  FC_REQUIRE_BACKEND(GetParam().backend);
  FC_CHECK_FWD_CASE(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, FwdVarlen, ::testing::ValuesIn(on_each_backend(varlen_cases())),
                         CaseName(on_each_backend(varlen_cases())));

class FwdVarlenMaxSeqlen : public OnBackend {};

// max_seqlen_q / max_seqlen_k larger than the true maxima: the same bits.
TEST_P(FwdVarlenMaxSeqlen, LargerThanTrueMaxGivesTheSameBits) {
  FC_REQUIRE_GPU();
  FwdCase c = varlen(kBf16, {17, 130, 0, 64}, {40, 129, 5, 200}, 6, 2, 128, 130);
  c.causal = true;
  const FwdInputs in = make_inputs(c);
  const GpuResult exact = run_gpu(c, in);
  FC_ASSERT_FWD_STATUS(exact.status);
  const FwdOutcome o = check_result(c, in, exact, compute_reference(c, in));
  ASSERT_TRUE(o.ok) << o.message;
  for (auto [mq, mk] : {std::pair<int64_t, int64_t>{131, 201}, {1000, 1000}, {130, 4096}}) {
    FwdCase big = c;
    big.max_seqlen_q = mq;
    big.max_seqlen_k = mk;
    const GpuResult g = run_gpu(big, in);
    FC_ASSERT_FWD_STATUS(g.status);
    EXPECT_TRUE(g.outside_written.empty()) << "REPRO: " << big.str() << "\n  " << g.outside_written;
    EXPECT_EQ(first_bit_difference(exact.out, g.out), -1) << "REPRO: " << big.str() << "\n  out differs";
    EXPECT_EQ(first_bit_difference(exact.lse, g.lse), -1) << "REPRO: " << big.str() << "\n  lse differs";
  }
}

// ================================================================================================
// ALiBi (bias -slope * |i + seqlen_k - seqlen_q - j|, bottom-right aligned).

std::vector<FwdCase> alibi_cases() {
  std::vector<FwdCase> v;
  uint64_t seed = 140;
  for (Alibi a : {Alibi::kPerHead, Alibi::kPerBatchHead}) {
    for (DType dt : {kBf16, kFp16}) {
      FwdCase c = dense(dt, 3, 113, 203, 6, 2, 128, seed++);  // seqlen_q < seqlen_k, no mask
      c.alibi = a;
      v.push_back(c);
    }
    FwdCase c = dense(kBf16, 2, 203, 113, 6, 3, 128, seed++);  // seqlen_q > seqlen_k, causal
    c.alibi = a;
    c.causal = true;
    v.push_back(c);
    c = dense(kBf16, 2, 256, 256, 8, 8, 64, seed++);  // window, softcap
    c.alibi = a;
    c.window_left = 40;
    c.window_right = 40;
    c.softcap = 30.0f;
    v.push_back(c);
    c = varlen(kBf16, {50, 0, 129, 200}, {70, 10, 64, 200}, 6, 2, 128, seed++);
    c.alibi = a;
    v.push_back(c);
  }
  return v;
}

class FwdAlibi : public ::testing::TestWithParam<FwdCase> {};

TEST_P(FwdAlibi, MatchesReference) {
  FC_REQUIRE_GPU();
  FC_REQUIRE_BACKEND(GetParam().backend);
  FC_CHECK_FWD_CASE(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Slopes, FwdAlibi, ::testing::ValuesIn(on_each_backend(alibi_cases())),
                         CaseName(on_each_backend(alibi_cases())));

// ================================================================================================
// 64-bit offsets: tensors over 2^31 elements.
//
// Generating 2^31 random numbers on the host takes too long, so each big tensor is filled from a
// pool of random values larger than one batch's slab, each batch starting at a different pool offset
// (so no two batches, and no two rows of a batch, hold the same data). Rows checked: the first and
// last (batch, head, row), the rows around elements 2^30 (byte 2^31), 2^31 (byte 2^32) and 2^32 of
// the big tensor, and random ones; every element of out must have been written (no 0xFFFF left)
// and every lse must be finite.

struct PooledTensor {
  int64_t B = 0, S = 0, H = 0, D = 0;
  int64_t pool = 0, shift = 0;
  std::vector<uint16_t> bits;  // `pool` values
  DType dtype = kBf16;
  mutable std::vector<double> scratch;

  int64_t slab() const { return S * H * D; }
  int64_t numel() const { return B * slab(); }
  int64_t start(int64_t b) const { return (b * shift) % pool; }
  const double* row(int64_t b, int64_t s, int64_t h) const {
    const int64_t at = (start(b) + (s * H + h) * D) % pool;  // rows never wrap: pool % D == 0
    scratch.resize(static_cast<size_t>(D));
    for (int64_t c = 0; c < D; ++c) scratch[c] = numeric::from_bits(dtype, bits[at + c]);
    return scratch.data();
  }
};

PooledTensor make_pooled(DType dt, int64_t B, int64_t S, int64_t H, int64_t D, uint64_t seed) {
  PooledTensor t;
  t.dtype = dt;
  t.B = B;
  t.S = S;
  t.H = H;
  t.D = D;
  const int64_t slab = t.slab();
  if (t.numel() <= (int64_t{40} << 20)) {
    t.pool = std::max<int64_t>(t.numel(), D);  // small: plain random data
    t.shift = slab;
  } else {
    t.pool = (slab + slab / 4 + 12345) / D * D;  // a bit larger than a slab
    t.shift = 7919 * D;
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  t.bits.resize(static_cast<size_t>(t.pool));
  for (auto& b : t.bits) b = numeric::to_bits(dt, normal(rng));
  return t;
}

void upload_pooled(const PooledTensor& t, void* dev) {
  auto* d = static_cast<uint16_t*>(dev);
  for (int64_t b = 0; b < t.B; ++b) {
    int64_t pos = t.start(b), o = 0;
    while (o < t.slab()) {
      const int64_t n = std::min(t.slab() - o, t.pool - pos);
      FC_HARNESS_CUDA(
          cudaMemcpy(d + b * t.slab() + o, t.bits.data() + pos, n * sizeof(uint16_t), cudaMemcpyHostToDevice));
      o += n;
      pos = (pos + n) % t.pool;
    }
  }
}

struct BigShape {
  const char* name;
  int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, d;
};

void run_offsets64(const BigShape& s) {
  const DType dt = kBf16;
  const int64_t q_elems = s.batch * s.seqlen_q * s.heads_q * s.d;
  const int64_t k_elems = s.batch * s.seqlen_k * s.heads_kv * s.d;
  const int64_t lse_elems = s.batch * s.heads_q * s.seqlen_q;
  const size_t need = static_cast<size_t>(2 * q_elems + 2 * k_elems) * 2 + lse_elems * 4;
  size_t free_b = 0, total_b = 0;
  FC_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < need + (size_t{1} << 30)) {
    GTEST_SKIP() << s.name << " needs " << (need >> 20) << " MiB of GPU memory (+1 GiB margin); " << (free_b >> 20)
                 << " MiB free of " << (total_b >> 20);
  }
  ASSERT_GT(std::max(q_elems, k_elems), int64_t{1} << 31) << "the shape must exceed 2^31 elements";

  const PooledTensor q = make_pooled(dt, s.batch, s.seqlen_q, s.heads_q, s.d, 150);
  const PooledTensor k = make_pooled(dt, s.batch, s.seqlen_k, s.heads_kv, s.d, 151);
  const PooledTensor v = make_pooled(dt, s.batch, s.seqlen_k, s.heads_kv, s.d, 152);
  DeviceBuffer dq(q_elems * 2), dk(k_elems * 2), dv(k_elems * 2), dout(q_elems * 2), dlse(lse_elems * 4);
  upload_pooled(q, dq.get());
  upload_pooled(k, dk.get());
  upload_pooled(v, dv.get());
  FC_CUDA_CHECK(cudaMemset(dout.get(), 0xFF, dout.bytes()));
  FC_CUDA_CHECK(cudaMemset(dlse.get(), 0xFF, dlse.bytes()));
  FC_CUDA_CHECK(cudaDeviceSynchronize());

  FwdArgs a;
  a.q = make_tensor_4d(dq.get(), dt, s.batch, s.seqlen_q, s.heads_q, s.d);
  a.k = make_tensor_4d(dk.get(), dt, s.batch, s.seqlen_k, s.heads_kv, s.d);
  a.v = make_tensor_4d(dv.get(), dt, s.batch, s.seqlen_k, s.heads_kv, s.d);
  a.out = make_tensor_4d(dout.get(), dt, s.batch, s.seqlen_q, s.heads_q, s.d);
  a.lse = make_tensor_3d(dlse.get(), DType::kFloat32, s.batch, s.heads_q, s.seqlen_q);
  a.options.backend = ambient_backend();
  size_t ws = 0;
  ASSERT_TRUE(fwd_workspace_size(a, &ws).ok());
  DeviceBuffer work(ws);
  a.workspace = {work.get(), ws};
  const Status st = fwd(a);
  FC_CUDA_CHECK(cudaDeviceSynchronize());
  FC_CUDA_CHECK(cudaGetLastError());
  FC_ASSERT_FWD_STATUS(st);

  std::ostringstream repro;
  repro << "REPRO: offsets64 " << s.name << " dtype=bf16 batch=" << s.batch << " seqlen_q=" << s.seqlen_q
        << " seqlen_k=" << s.seqlen_k << " heads_q=" << s.heads_q << " heads_kv=" << s.heads_kv << " d=" << s.d
        << " pooled inputs, seeds 150/151/152";

  // Every element of out written (no 0xFFFF left: outputs of finite inputs are finite), in chunks.
  {
    const int64_t chunk = int64_t{1} << 26;
    std::vector<uint16_t> host(static_cast<size_t>(chunk));
    int64_t unwritten = 0, first = -1;
    for (int64_t o = 0; o < q_elems; o += chunk) {
      const int64_t n = std::min(chunk, q_elems - o);
      FC_CUDA_CHECK(cudaMemcpy(host.data(), dout.as<uint16_t>() + o, n * 2, cudaMemcpyDeviceToHost));
      for (int64_t x = 0; x < n; ++x) {
        if (host[x] == kNaNBits16) {
          if (first < 0) first = o + x;
          ++unwritten;
        }
      }
    }
    ASSERT_EQ(unwritten, 0) << repro.str() << "\n  " << unwritten << " out elements still NaN; first at flat index "
                            << first;
  }
  std::vector<float> lse(static_cast<size_t>(lse_elems));
  FC_CUDA_CHECK(cudaMemcpy(lse.data(), dlse.get(), lse_elems * 4, cudaMemcpyDeviceToHost));
  const auto bad_lse = std::find_if(lse.begin(), lse.end(), [](float x) { return !std::isfinite(x); });
  ASSERT_EQ(bad_lse, lse.end()) << repro.str() << "\n  lse not finite at flat index " << (bad_lse - lse.begin());

  // Sampled rows against the oracle.
  std::vector<RowSample> samples;
  const auto add = [&](int64_t b, int64_t i, int64_t h) {
    if (b >= 0 && b < s.batch && i >= 0 && i < s.seqlen_q && h >= 0 && h < s.heads_q) samples.push_back({b, h, i});
  };
  const auto add_element = [&](int64_t e) {  // the q/out row holding flat element e, and its neighbours
    if (e < 0 || e >= q_elems) return;
    const int64_t r = e / s.d, h = r % s.heads_q, bs = r / s.heads_q;
    add(bs / s.seqlen_q, bs % s.seqlen_q, h);
    const int64_t rp = r - 1, rn = r + 1;
    if (rp >= 0) add(rp / s.heads_q / s.seqlen_q, (rp / s.heads_q) % s.seqlen_q, rp % s.heads_q);
    if (rn * s.d < q_elems) add(rn / s.heads_q / s.seqlen_q, (rn / s.heads_q) % s.seqlen_q, rn % s.heads_q);
  };
  add(0, 0, 0);
  add(s.batch - 1, s.seqlen_q - 1, s.heads_q - 1);
  add(s.batch - 1, s.seqlen_q - 1, 0);
  add(s.batch - 1, 0, s.heads_q - 1);
  for (int64_t e : {int64_t{1} << 30, int64_t{1} << 31, (int64_t{1} << 31) + s.d, int64_t{1} << 32}) add_element(e);
  // Where k/v cross 2^31 elements: the q rows of the batch holding that key (all heads on that kv head).
  {
    const int64_t kb = (int64_t{1} << 31) / (s.seqlen_k * s.heads_kv * s.d);
    if (kb < s.batch) {
      add(kb, s.seqlen_q - 1, s.heads_q - 1);
      add(kb, 0, 0);
      add(kb - 1, s.seqlen_q - 1, s.heads_q - 1);
    }
  }
  std::mt19937_64 rng(153);
  for (int t = 0; t < 24; ++t) {
    add(static_cast<int64_t>(rng() % s.batch), static_cast<int64_t>(rng() % s.seqlen_q),
        static_cast<int64_t>(rng() % s.heads_q));
  }

  ref::Problem p;
  p.batch = s.batch;
  p.seqlen_q = s.seqlen_q;
  p.seqlen_k = s.seqlen_k;
  p.heads_q = s.heads_q;
  p.heads_kv = s.heads_kv;
  p.head_dim = s.d;
  RefResult r;
  reference_rows(
      p, dt, samples, [&](int64_t b, int64_t i, int64_t h) { return q.row(b, i, h); },
      [&](int64_t b, int64_t j, int64_t hk) { return k.row(b, j, hk); },
      [&](int64_t b, int64_t j, int64_t hk) { return v.row(b, j, hk); }, &r);
  std::vector<double> kout, klse;
  std::vector<uint16_t> rowbits(static_cast<size_t>(s.d));
  for (const RowSample& x : samples) {
    const int64_t off = ((x.b * s.seqlen_q + x.i) * s.heads_q + x.h) * s.d;
    FC_CUDA_CHECK(cudaMemcpy(rowbits.data(), dout.as<uint16_t>() + off, s.d * 2, cudaMemcpyDeviceToHost));
    for (uint16_t bits : rowbits) kout.push_back(numeric::from_bits(dt, bits));
    klse.push_back(lse[(x.b * s.heads_q + x.h) * s.seqlen_q + x.i]);
  }
  const ToleranceResult to = check_tolerance("out (sampled rows)", kout, r.out_golden, r.out_lp, dt, Pass::kForward);
  EXPECT_TRUE(to.ok) << repro.str() << "\n  " << to.message;
  const ToleranceResult tl = check_lse("lse (sampled rows)", klse, r.lse_golden);
  EXPECT_TRUE(tl.ok) << repro.str() << "\n  " << tl.message;
  std::printf("[ fwd ok ] offsets64 %s: %zu sampled rows: %s | %s\n", s.name, samples.size(), to.message.c_str(),
              tl.message.c_str());
}

class FwdOffsets64 : public OnBackend {};

// q and out: 66 x 2048 x 128 x 128 = 2.21e9 elements (element 2^31 is the first of batch 64).
TEST_P(FwdOffsets64, QueryAndOutputOver2To31Elements) {
  FC_REQUIRE_GPU();
  run_offsets64({"q_out_big", 66, 2048, 256, 128, 8, 128});
}

// k and v: 66 x 2048 x 128 x 128 = 2.21e9 elements each; short queries.
TEST_P(FwdOffsets64, KeyAndValueOver2To31Elements) {
  FC_REQUIRE_GPU();
  run_offsets64({"k_v_big", 66, 64, 2048, 128, 128, 128});
}

// The plain (unparameterized) suites, once per path.
INSTANTIATE_TEST_SUITE_P(Backends, FwdEmpty, ::testing::ValuesIn(test_backends()), backend_param_name);
INSTANTIATE_TEST_SUITE_P(Backends, FwdMasked, ::testing::ValuesIn(test_backends()), backend_param_name);
INSTANTIATE_TEST_SUITE_P(Backends, FwdMetamorphic, ::testing::ValuesIn(test_backends()), backend_param_name);
INSTANTIATE_TEST_SUITE_P(Backends, FwdStream, ::testing::ValuesIn(test_backends()), backend_param_name);
INSTANTIATE_TEST_SUITE_P(Backends, FwdRepeat, ::testing::ValuesIn(test_backends()), backend_param_name);
INSTANTIATE_TEST_SUITE_P(Backends, FwdWorkspace, ::testing::ValuesIn(test_backends()), backend_param_name);
INSTANTIATE_TEST_SUITE_P(Backends, FwdVarlenMaxSeqlen, ::testing::ValuesIn(test_backends()), backend_param_name);
INSTANTIATE_TEST_SUITE_P(Backends, FwdOffsets64, ::testing::ValuesIn(test_backends()), backend_param_name);

}  // namespace
}  // namespace flashcute::testing
