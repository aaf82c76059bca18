// The named backward edge cases of docs/TESTING.md ("Edge cases", "Reliability tools"), through the
// public API only.
//
//   BwdEmpty          seqlen_q 0 (dk, dv exactly 0), seqlen_k 0 (dq exactly 0), batch 0, varlen totals 0
//   BwdMasked         rows that see no key (with a non-zero dout): dq exactly 0, no NaN anywhere
//   BwdDeterministic  deterministic=true: 100 runs at batch 60 give bitwise identical dq, dk, dv
//   BwdMetamorphic    GQA == MHA with repeated K/V summed over each group; varlen == dense per
//                     sequence (bitwise); a sample alone == inside a batch of 32 (bitwise)
//   BwdOffsets64      q/out/dout/dq, then k/v/dk/dv, over 2^31 elements
//   BwdSplit          the main grid's last wave split into pieces (src/sm80/bwd_grid.h) next to
//                     whole units: MHA, GQA, a partial last key block; a small problem run entirely
//                     as pieces
//
// Bitwise assertions and why they hold (deterministic mode): each gradient element is the sum of the
// same fp32 products in the same order whatever the batch, the packing or the kv-head sharing: dK and
// dV of a key block are accumulated inside one CTA in query-block order, dQ of a query block is added
// by the key blocks in ascending order (turn counters), GQA shares are summed in q-head order, and
// query/key blocks start at each sequence's first row in the dense and varlen forms alike.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "bwd_harness.h"
#include "sm80/bwd_grid.h"
#include "sm80/bwd_tile_config.h"

namespace flashcute::testing {
namespace {

constexpr DType kBf16 = DType::kBFloat16;
constexpr DType kFp16 = DType::kFloat16;

BwdCase dense(DType dt, int64_t b, int64_t sq, int64_t sk, int64_t hq, int64_t hkv, int64_t d, uint64_t seed) {
  BwdCase c;
  c.f.dtype = dt;
  c.f.batch = b;
  c.f.seqlen_q = sq;
  c.f.seqlen_k = sk;
  c.f.heads_q = hq;
  c.f.heads_kv = hkv;
  c.f.d = d;
  c.f.seed = seed;
  return c;
}

BwdCase varlen(DType dt, const std::vector<int32_t>& lq, const std::vector<int32_t>& lk, int64_t hq, int64_t hkv,
               int64_t d, uint64_t seed) {
  BwdCase c = dense(dt, 1, 0, 0, hq, hkv, d, seed);
  c.f.cu_seqlens_q = offsets_from_lengths(lq);
  c.f.cu_seqlens_k = offsets_from_lengths(lk);
  return c;
}

std::string dtype_name(const ::testing::TestParamInfo<DType>& info) {
  return dtype_str(info.param);
}

// The kernel's gradients of a case, after produce_forward; fails the test on a non-OK status other
// than kNotSupported (which skips).
#define FC_RUN_BWD(result, case_expr, inputs)                 \
  const BwdGpuResult result = run_bwd_gpu(case_expr, inputs); \
  FC_ASSERT_BWD_STATUS(result.status)

// ================================================================================================
// Empty shapes.

// A problem with no gradient element at all: OK, nothing written anywhere.
void expect_ok_and_nothing_written(const BwdCase& c) {
  BwdInputs in = make_bwd_inputs(c);
  produce_forward(c, in);
  const BwdGpuResult g = run_bwd_gpu(c, in);
  ASSERT_TRUE(g.status.ok()) << "REPRO: " << c.str() << "\n  bwd() returned " << to_string(g.status.code()) << ": "
                             << g.status.message();
  EXPECT_TRUE(g.outside_written.empty()) << "REPRO: " << c.str() << "\n  " << g.outside_written;
}

TEST(BwdEmpty, BatchZero) {
  FC_REQUIRE_GPU();
  expect_ok_and_nothing_written(dense(kBf16, 0, 16, 16, 6, 2, 128, 1));
}

TEST(BwdEmpty, VarlenTotalQAndKZero) {
  FC_REQUIRE_GPU();
  expect_ok_and_nothing_written(varlen(kBf16, {0, 0}, {0, 0}, 4, 4, 128, 2));
}

// No query rows but keys: dk and dv must be exactly 0 (the harness checks keys no row sees).
TEST(BwdEmpty, SeqlenQZero) {
  FC_REQUIRE_GPU();
  FC_CHECK_BWD_CASE(dense(kBf16, 2, 0, 37, 6, 2, 128, 3));
}

TEST(BwdEmpty, SeqlenQZeroMha) {
  FC_REQUIRE_GPU();
  FC_CHECK_BWD_CASE(dense(kBf16, 2, 0, 300, 4, 4, 128, 4));
}

// No keys: every row sees nothing, dq exactly 0.
TEST(BwdEmpty, SeqlenKZero) {
  FC_REQUIRE_GPU();
  FC_CHECK_BWD_CASE(dense(kBf16, 2, 7, 0, 6, 2, 128, 5));
}

TEST(BwdEmpty, SeqlenKZeroCausal) {
  FC_REQUIRE_GPU();
  BwdCase c = dense(kBf16, 3, 130, 0, 4, 1, 128, 6);
  c.f.causal = true;
  FC_CHECK_BWD_CASE(c);
}

TEST(BwdEmpty, VarlenTotalQZero) {
  FC_REQUIRE_GPU();
  FC_CHECK_BWD_CASE(varlen(kBf16, {0, 0, 0}, {5, 0, 9}, 6, 2, 128, 7));
}

TEST(BwdEmpty, VarlenTotalKZero) {
  FC_REQUIRE_GPU();
  FC_CHECK_BWD_CASE(varlen(kBf16, {3, 0, 70}, {0, 0, 0}, 6, 2, 128, 8));
}

// Zero-length sequences in the middle and at the end, deterministic mode too.
TEST(BwdEmpty, VarlenZeroLengthSequencesDeterministic) {
  FC_REQUIRE_GPU();
  BwdCase c = varlen(kBf16, {0, 100, 0, 65, 0}, {30, 0, 0, 300, 0}, 6, 2, 64, 9);
  c.deterministic = true;
  FC_CHECK_BWD_CASE(c);
}

// ================================================================================================
// Fully masked rows: dq exactly 0 and nothing NaN, although dout is non-zero on those rows.

TEST(BwdMasked, CausalSeqlenQGreaterThanSeqlenK) {
  FC_REQUIRE_GPU();
  BwdCase c = dense(kBf16, 2, 257, 64, 6, 2, 128, 10);  // rows 0..192 see nothing
  c.f.causal = true;
  FC_CHECK_BWD_CASE(c);
}

TEST(BwdMasked, WindowLeavesLeadingRowsEmpty) {
  FC_REQUIRE_GPU();
  BwdCase c = dense(kFp16, 2, 300, 100, 6, 2, 64, 11);  // diag = i - 200: rows < 200 see nothing
  c.f.window_left = 8;
  c.f.window_right = 0;
  FC_CHECK_BWD_CASE(c);
}

TEST(BwdMasked, Window00WithOneKey) {
  FC_REQUIRE_GPU();
  BwdCase c = dense(kBf16, 1, 239, 1, 4, 4, 128, 12);  // only the last row sees the single key
  c.f.window_left = 0;
  c.f.window_right = 0;
  FC_CHECK_BWD_CASE(c);
}

TEST(BwdMasked, VarlenSequencesFullyMasked) {
  FC_REQUIRE_GPU();
  BwdCase c = varlen(kBf16, {200, 5, 129, 64}, {10, 5, 0, 200}, 6, 2, 128, 13);
  c.f.causal = true;
  FC_CHECK_BWD_CASE(c);
}

TEST(BwdMasked, SoftcapAndAlibiOnEmptyRowsDeterministic) {
  FC_REQUIRE_GPU();
  BwdCase c = dense(kBf16, 2, 200, 70, 4, 2, 128, 14);
  c.f.causal = true;
  c.f.softcap = 30.0f;
  c.f.alibi = Alibi::kPerHead;
  c.deterministic = true;
  FC_CHECK_BWD_CASE(c);
}

// ================================================================================================
// Determinism: 100 runs at batch 60 on the same buffers (the workspace reused), bitwise identical.

class BwdDeterministic : public ::testing::TestWithParam<DType> {};

void expect_bitwise_repeatable(const BwdCase& c, int runs) {
  BwdInputs in = make_bwd_inputs(c);
  produce_forward(c, in);
  BwdDeviceState st;
  prepare_bwd_device(c, in, &st);
  TestStream stream(false);
  const Status s = call_bwd(&st, stream.api());
  FC_ASSERT_BWD_STATUS(s);
  const BwdGpuResult first = read_bwd_result(c, st);
  const BwdOutcome o = check_bwd_result(c, in, first, compute_bwd_reference(c, in));
  ASSERT_TRUE(o.ok) << o.message;
  for (int r = 1; r < runs; ++r) {
    const Status sr = call_bwd(&st, stream.api());
    ASSERT_TRUE(sr.ok()) << "REPRO: " << c.str() << "\n  run " << r << ": " << sr.message();
    const BwdGpuResult g = read_bwd_result(c, st);
    const int64_t q = first_bit_difference(first.dq, g.dq), k = first_bit_difference(first.dk, g.dk),
                  v = first_bit_difference(first.dv, g.dv);
    ASSERT_EQ(q, -1) << "REPRO: " << c.str() << "\n  run " << r << ": dq differs from run 0 at element " << q;
    ASSERT_EQ(k, -1) << "REPRO: " << c.str() << "\n  run " << r << ": dk differs from run 0 at element " << k;
    ASSERT_EQ(v, -1) << "REPRO: " << c.str() << "\n  run " << r << ": dv differs from run 0 at element " << v;
  }
  std::printf("[ bwd ok ] %d runs bitwise identical: %s\n", runs, o.message.c_str());
}

// GQA (dK/dV group sums) without a mask: every query block is added to by every key block.
TEST_P(BwdDeterministic, HundredRunsBatch60Gqa) {
  FC_REQUIRE_GPU();
  BwdCase c = dense(GetParam(), 60, 200, 520, 4, 2, 64, 100);
  c.deterministic = true;
  expect_bitwise_repeatable(c, 100);
}

// MHA, causal, d 128: the staggered start of the key blocks.
TEST_P(BwdDeterministic, HundredRunsBatch60CausalMha) {
  FC_REQUIRE_GPU();
  BwdCase c = dense(GetParam(), 60, 320, 320, 2, 2, 128, 101);
  c.f.causal = true;
  c.deterministic = true;
  expect_bitwise_repeatable(c, 100);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BwdDeterministic, ::testing::Values(kBf16, kFp16), dtype_name);

// ================================================================================================
// Metamorphic relations (deterministic mode, so that dQ is bitwise comparable).

class BwdMetamorphic : public ::testing::TestWithParam<DType> {};

// GQA (8 q heads on 2 kv heads) == MHA with each kv head repeated for its 4 q heads: dq bitwise, and
// dk/dv of a kv head == the sum of the MHA dk/dv of its q heads (each MHA value is its fp32 share
// rounded once, the GQA value the fp32 sum rounded once: they agree to half an ulp per term).
TEST_P(BwdMetamorphic, GqaEqualsMhaWithRepeatedKV) {
  FC_REQUIRE_GPU();
  BwdCase gqa = dense(GetParam(), 2, 150, 270, 8, 2, 128, 110);
  gqa.f.causal = true;
  gqa.f.softcap = 30.0f;
  gqa.deterministic = true;
  BwdInputs in = make_bwd_inputs(gqa);
  produce_forward(gqa, in);
  BwdCase mha = gqa;
  mha.f.heads_kv = gqa.f.heads_q;
  BwdInputs in_mha = in;
  const int64_t group = gqa.f.heads_q / gqa.f.heads_kv;
  for (HostTensor* t : {&in_mha.fwd.k, &in_mha.fwd.v}) {
    const HostTensor& s = t == &in_mha.fwd.k ? in.fwd.k : in.fwd.v;
    t->resize(s.rows, mha.f.heads_kv, s.dim);
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t h = 0; h < mha.f.heads_kv; ++h) {
        std::copy_n(s.bits.begin() + s.index(r, h / group), s.dim, t->bits.begin() + t->index(r, h));
        std::copy_n(s.vals.begin() + s.index(r, h / group), s.dim, t->vals.begin() + t->index(r, h));
      }
    }
  }
  FC_RUN_BWD(g, gqa, in);
  FC_RUN_BWD(gm, mha, in_mha);
  const BwdOutcome o = check_bwd_result(gqa, in, g, compute_bwd_reference(gqa, in));
  ASSERT_TRUE(o.ok) << o.message;
  const int64_t qd = first_bit_difference(g.dq, gm.dq);
  EXPECT_EQ(qd, -1) << "REPRO: " << gqa.str() << "\n  dq differs from MHA with repeated K/V at element " << qd;
  const DType dt = gqa.f.dtype;
  for (const char* which : {"dk", "dv"}) {
    const std::vector<uint16_t>& a = which[1] == 'k' ? g.dk : g.dv;
    const std::vector<uint16_t>& m = which[1] == 'k' ? gm.dk : gm.dv;
    const int64_t rows = gqa.f.rows_k(), dim = gqa.f.d;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t hk = 0; hk < gqa.f.heads_kv; ++hk) {
        for (int64_t col = 0; col < dim; ++col) {
          double sum = 0, slack = 0;
          for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
            const double x = numeric::from_bits(dt, m[(r * mha.f.heads_kv + h) * dim + col]);
            sum += x;
            slack += 0.5 * ulp(dt, x);
          }
          const double y = numeric::from_bits(dt, a[(r * gqa.f.heads_kv + hk) * dim + col]);
          slack += 0.5 * ulp(dt, y) + 1e-6 * std::fabs(sum);
          ASSERT_LE(std::fabs(y - sum), slack)
              << "REPRO: " << gqa.str() << "\n  " << which << "[row " << r << ", kv head " << hk << ", col " << col
              << "] = " << y << " but the sum of the MHA q heads' values is " << sum;
        }
      }
    }
  }
}

// A varlen batch == each of its sequences run densely on its own (batch 1), bitwise.
TEST_P(BwdMetamorphic, VarlenEqualsDensePerSequence) {
  FC_REQUIRE_GPU();
  BwdCase vc = varlen(GetParam(), {37, 128, 1, 200, 0, 65}, {50, 128, 64, 199, 10, 300}, 6, 2, 128, 120);
  vc.f.causal = true;
  vc.deterministic = true;
  BwdInputs in = make_bwd_inputs(vc);
  produce_forward(vc, in);
  FC_RUN_BWD(g, vc, in);
  const BwdOutcome o = check_bwd_result(vc, in, g, compute_bwd_reference(vc, in));
  ASSERT_TRUE(o.ok) << o.message;
  const FwdCase& f = vc.f;
  for (int64_t b = 0; b < f.nbatch(); ++b) {
    BwdCase dc = dense(f.dtype, 1, f.len_q(b), f.len_k(b), f.heads_q, f.heads_kv, f.d, f.seed);
    dc.f.causal = true;
    dc.deterministic = true;
    BwdInputs din;
    const auto slice = [](const HostTensor& s, int64_t row0, int64_t rows, HostTensor* t) {
      t->resize(rows, s.heads, s.dim);
      std::copy_n(s.bits.begin() + s.index(row0, 0), rows * s.heads * s.dim, t->bits.begin());
      std::copy_n(s.vals.begin() + s.index(row0, 0), rows * s.heads * s.dim, t->vals.begin());
    };
    slice(in.fwd.q, f.row0_q(b), f.len_q(b), &din.fwd.q);
    slice(in.fwd.k, f.row0_k(b), f.len_k(b), &din.fwd.k);
    slice(in.fwd.v, f.row0_k(b), f.len_k(b), &din.fwd.v);
    slice(in.dout, f.row0_q(b), f.len_q(b), &din.dout);
    slice(in.out, f.row0_q(b), f.len_q(b), &din.out);
    for (int64_t h = 0; h < f.heads_q; ++h) {
      for (int64_t i = 0; i < f.len_q(b); ++i) din.lse.push_back(in.lse[lse_pos(f, b, h, i)]);
    }
    FC_RUN_BWD(gd, dc, din);
    const auto part = [](const std::vector<uint16_t>& v, int64_t row0, int64_t rows, int64_t per_row) {
      return std::vector<uint16_t>(v.begin() + row0 * per_row, v.begin() + (row0 + rows) * per_row);
    };
    const int64_t qd = first_bit_difference(part(g.dq, f.row0_q(b), f.len_q(b), f.heads_q * f.d), gd.dq);
    const int64_t kd = first_bit_difference(part(g.dk, f.row0_k(b), f.len_k(b), f.heads_kv * f.d), gd.dk);
    const int64_t vd = first_bit_difference(part(g.dv, f.row0_k(b), f.len_k(b), f.heads_kv * f.d), gd.dv);
    EXPECT_EQ(qd, -1) << "REPRO: " << vc.str() << "\n  sequence " << b << ": dq differs from " << dc.str()
                      << " at element " << qd;
    EXPECT_EQ(kd, -1) << "REPRO: " << vc.str() << "\n  sequence " << b << ": dk differs at element " << kd;
    EXPECT_EQ(vd, -1) << "REPRO: " << vc.str() << "\n  sequence " << b << ": dv differs at element " << vd;
  }
}

// A sample alone == the same sample inside a batch of 32, bitwise.
TEST_P(BwdMetamorphic, SampleAloneEqualsSampleInBatchOf32) {
  FC_REQUIRE_GPU();
  BwdCase bc = dense(GetParam(), 32, 77, 300, 6, 2, 64, 130);
  bc.f.causal = true;
  bc.deterministic = true;
  BwdInputs in = make_bwd_inputs(bc);
  produce_forward(bc, in);
  FC_RUN_BWD(g, bc, in);
  const BwdOutcome o = check_bwd_result(bc, in, g, compute_bwd_reference(bc, in));
  ASSERT_TRUE(o.ok) << o.message;
  const FwdCase& f = bc.f;
  for (int64_t b : {int64_t{0}, int64_t{13}, int64_t{31}}) {
    BwdCase sc = bc;
    sc.f.batch = 1;
    BwdInputs sin;
    const auto slice = [b](const HostTensor& s, int64_t rows, HostTensor* t) {
      t->resize(rows, s.heads, s.dim);
      std::copy_n(s.bits.begin() + s.index(b * rows, 0), rows * s.heads * s.dim, t->bits.begin());
      std::copy_n(s.vals.begin() + s.index(b * rows, 0), rows * s.heads * s.dim, t->vals.begin());
    };
    slice(in.fwd.q, f.seqlen_q, &sin.fwd.q);
    slice(in.fwd.k, f.seqlen_k, &sin.fwd.k);
    slice(in.fwd.v, f.seqlen_k, &sin.fwd.v);
    slice(in.dout, f.seqlen_q, &sin.dout);
    slice(in.out, f.seqlen_q, &sin.out);
    const int64_t nl = f.heads_q * f.seqlen_q;
    sin.lse.assign(in.lse.begin() + b * nl, in.lse.begin() + (b + 1) * nl);
    FC_RUN_BWD(gs, sc, sin);
    const auto part = [b](const std::vector<uint16_t>& v, int64_t n) {
      return std::vector<uint16_t>(v.begin() + b * n, v.begin() + (b + 1) * n);
    };
    const int64_t qd = first_bit_difference(part(g.dq, f.seqlen_q * f.heads_q * f.d), gs.dq);
    const int64_t kd = first_bit_difference(part(g.dk, f.seqlen_k * f.heads_kv * f.d), gs.dk);
    const int64_t vd = first_bit_difference(part(g.dv, f.seqlen_k * f.heads_kv * f.d), gs.dv);
    EXPECT_EQ(qd, -1) << "REPRO: " << bc.str() << "\n  sample " << b << " alone differs in dq at element " << qd;
    EXPECT_EQ(kd, -1) << "REPRO: " << bc.str() << "\n  sample " << b << " alone differs in dk at element " << kd;
    EXPECT_EQ(vd, -1) << "REPRO: " << bc.str() << "\n  sample " << b << " alone differs in dv at element " << vd;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, BwdMetamorphic, ::testing::Values(kBf16, kFp16), dtype_name);

// ================================================================================================
// The split of the main grid's last wave (non-causal, not deterministic, dense: bwd_grid.h). Each case
// has a few more key-block units than the GPU has SMs (one backward CTA per SM), so the grid is one
// wave of whole units and a tail of pieces; the test first checks that the plan splits the case
// (with the launcher's inputs: the SM count, one CTA per SM), so it cannot pass without the pieces.

BwdCase split_case(DType dt, int64_t d, int64_t seqlen, int64_t heads_kv, uint64_t seed) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    sms = 132;
  const sm80::BwdTileConfig c = sm80::bwd_tile_config(int(d));
  const int64_t n_blocks = (seqlen + c.block_n - 1) / c.block_n;
  const int64_t heads_q = (sms + n_blocks - 1) / n_blocks / heads_kv * heads_kv + heads_kv;  // units just past the SMs
  return dense(dt, 1, seqlen, seqlen, heads_q, heads_kv, d, seed);
}

void expect_split(const BwdCase& c, int64_t d, bool whole_units = true) {
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const sm80::BwdTileConfig t = sm80::bwd_tile_config(int(d));
  const int64_t units = c.f.heads_q * c.f.batch * ((c.f.seqlen_k + t.block_n - 1) / t.block_n);
  const sm80::BwdSplit s = sm80::bwd_split_plan(units, (c.f.seqlen_q + t.block_m - 1) / t.block_m, sms,
                                                std::min<int64_t>(units, sm80::kBwdMaxSplitUnits));
  ASSERT_GT(s.pieces, 1) << "REPRO: " << c.str() << "\n  the plan does not split this case (" << units << " units, "
                         << sms << " SMs): the test would not cover the pieces";
  if (whole_units)
    ASSERT_LT(s.tail, units) << "REPRO: " << c.str() << "\n  every unit is split: the test would not cover whole units";
}

TEST(BwdSplit, MhaWholeUnitsAndPieces) {
  FC_REQUIRE_GPU();
  const BwdCase c = split_case(kBf16, 64, 512, 1, 140);
  expect_split(c, 64);
  FC_CHECK_BWD_CASE(c);
}

TEST(BwdSplit, Gqa) {
  FC_REQUIRE_GPU();
  const BwdCase c = split_case(kFp16, 128, 512, 2, 141);
  expect_split(c, 128);
  FC_CHECK_BWD_CASE(c);
}

TEST(BwdSplit, PartialLastKeyBlock) {
  FC_REQUIRE_GPU();
  const BwdCase c = split_case(kBf16, 64, 500, 1, 142);  // 500 keys: the last block holds 116
  expect_split(c, 64);
  FC_CHECK_BWD_CASE(c);
}

// A small problem (fewer units than SMs): every unit runs as pieces, here with a partial last query
// block and key block, unequal seqlens and d 96's tile (the sanitizer's case in scripts/gpu-check).
TEST(BwdSplit, SmallProblemAllPieces) {
  FC_REQUIRE_GPU();
  const BwdCase c = dense(kBf16, 2, 300, 260, 3, 3, 96, 143);
  expect_split(c, 96, false);
  FC_CHECK_BWD_CASE(c);
}

// ================================================================================================
// 64-bit offsets. Contiguous tensors with one side over 2^31 elements; every batch but three is all
// zeros (q = k = v = dout = out = 0, lse = log(seqlen_k): every gradient is exactly 0), the first, the
// one just below element 2^31 and the one at it hold randn data and are checked against the oracle,
// run as batch-1 problems (batches are independent). Every gradient element is read back.

struct BigShape {
  const char* name;
  int64_t batch, seqlen_q, seqlen_k, heads, d;
};

void run_bwd_offsets64(const BigShape& s) {
  const DType dt = kBf16;
  const int64_t q_elems = s.batch * s.seqlen_q * s.heads * s.d;
  const int64_t k_elems = s.batch * s.seqlen_k * s.heads * s.d;
  ASSERT_GT(std::max(q_elems, k_elems), int64_t{1} << 31) << "the shape must exceed 2^31 elements";
  const int64_t q_slab = s.seqlen_q * s.heads * s.d, k_slab = s.seqlen_k * s.heads * s.d;
  const int64_t big_slab = q_elems > k_elems ? q_slab : k_slab;
  const int64_t cross = (int64_t{1} << 31) / big_slab;  // the batch holding element 2^31 of the big side
  const std::vector<int64_t> sampled = {0, cross - 1, std::min(cross, s.batch - 1)};

  // Per sampled batch: a batch-1 case with its own inputs and forward (the oracle's).
  std::vector<BwdCase> cases;
  std::vector<BwdInputs> inputs;
  for (size_t x = 0; x < sampled.size(); ++x) {
    BwdCase c = dense(dt, 1, s.seqlen_q, s.seqlen_k, s.heads, s.heads, s.d, 160 + x);
    BwdInputs in = make_bwd_inputs(c);
    produce_forward(c, in);
    cases.push_back(c);
    inputs.push_back(std::move(in));
  }

  DeviceBuffer q(q_elems * 2), k(k_elems * 2), v(k_elems * 2), out(q_elems * 2), dout(q_elems * 2);
  DeviceBuffer dq(q_elems * 2), dk(k_elems * 2), dv(k_elems * 2), lse(s.batch * s.heads * s.seqlen_q * 4);
  for (DeviceBuffer* b : {&q, &k, &v, &out, &dout}) FC_CUDA_CHECK(cudaMemset(b->get(), 0, b->bytes()));
  for (DeviceBuffer* b : {&dq, &dk, &dv}) FC_CUDA_CHECK(cudaMemset(b->get(), 0xFF, b->bytes()));
  std::vector<float> lse_host(static_cast<size_t>(s.batch * s.heads * s.seqlen_q),
                              std::log(static_cast<float>(s.seqlen_k)));
  for (size_t x = 0; x < sampled.size(); ++x) {
    const int64_t b = sampled[x];
    const BwdInputs& in = inputs[x];
    const auto put = [](const DeviceBuffer& d, int64_t offset, const HostTensor& t) {
      FC_HARNESS_CUDA(cudaMemcpy(d.as<uint16_t>() + offset, t.bits.data(), t.bits.size() * 2, cudaMemcpyHostToDevice));
    };
    put(q, b * q_slab, in.fwd.q);
    put(k, b * k_slab, in.fwd.k);
    put(v, b * k_slab, in.fwd.v);
    put(out, b * q_slab, in.out);
    put(dout, b * q_slab, in.dout);
    std::copy(in.lse.begin(), in.lse.end(), lse_host.begin() + b * s.heads * s.seqlen_q);
  }
  FC_CUDA_CHECK(cudaMemcpy(lse.get(), lse_host.data(), lse_host.size() * 4, cudaMemcpyHostToDevice));

  BwdArgs a;
  a.q = make_tensor_4d(q.get(), dt, s.batch, s.seqlen_q, s.heads, s.d);
  a.k = make_tensor_4d(k.get(), dt, s.batch, s.seqlen_k, s.heads, s.d);
  a.v = make_tensor_4d(v.get(), dt, s.batch, s.seqlen_k, s.heads, s.d);
  a.out = make_tensor_4d(out.get(), dt, s.batch, s.seqlen_q, s.heads, s.d);
  a.dout = make_tensor_4d(dout.get(), dt, s.batch, s.seqlen_q, s.heads, s.d);
  a.dq = make_tensor_4d(dq.get(), dt, s.batch, s.seqlen_q, s.heads, s.d);
  a.dk = make_tensor_4d(dk.get(), dt, s.batch, s.seqlen_k, s.heads, s.d);
  a.dv = make_tensor_4d(dv.get(), dt, s.batch, s.seqlen_k, s.heads, s.d);
  a.lse = make_tensor_3d(lse.get(), DType::kFloat32, s.batch, s.heads, s.seqlen_q);
  size_t ws = 0;
  ASSERT_TRUE(bwd_workspace_size(a, &ws).ok());
  DeviceBuffer work(ws);
  FC_CUDA_CHECK(cudaMemset(work.get(), 0xFF, ws));
  a.workspace = {work.get(), ws};
  const Status st = bwd(a);
  FC_CUDA_CHECK(cudaDeviceSynchronize());
  FC_CUDA_CHECK(cudaGetLastError());
  FC_ASSERT_BWD_STATUS(st);

  std::ostringstream repro;
  repro << "REPRO: bwd offsets64 " << s.name << " dtype=bf16 batch=" << s.batch << " seqlen_q=" << s.seqlen_q
        << " seqlen_k=" << s.seqlen_k << " heads=" << s.heads << " d=" << s.d << " randn batches " << sampled[0] << ","
        << sampled[1] << "," << sampled[2] << " (seeds 160..162), zeros elsewhere";

  // Every element: exactly 0 outside the sampled batches, the sampled batches kept for the oracle.
  std::vector<std::vector<uint16_t>> kept(sampled.size() * 3);
  const auto scan = [&](const char* name, const DeviceBuffer& d, int64_t elems, int64_t slab, int which) {
    const int64_t chunk = slab * std::max<int64_t>(1, (int64_t{1} << 26) / slab);
    std::vector<uint16_t> host(static_cast<size_t>(chunk));
    for (int64_t o = 0; o < elems; o += chunk) {
      const int64_t n = std::min(chunk, elems - o);
      FC_CUDA_CHECK(cudaMemcpy(host.data(), d.as<uint16_t>() + o, n * 2, cudaMemcpyDeviceToHost));
      for (int64_t b = o / slab; b < (o + n) / slab; ++b) {
        const uint16_t* p = host.data() + (b * slab - o);
        const auto it = std::find(sampled.begin(), sampled.end(), b);
        if (it != sampled.end()) {
          kept[(it - sampled.begin()) * 3 + which].assign(p, p + slab);
          continue;
        }
        const uint16_t* bad = std::find_if(p, p + slab, [](uint16_t x) { return (x & 0x7FFF) != 0; });
        ASSERT_EQ(bad, p + slab) << repro.str() << "\n  " << name << ": batch " << b << " (all-zero inputs) has 0x"
                                 << std::hex << *bad << std::dec << " at flat index " << (bad - p) + b * slab;
      }
    }
  };
  scan("dq", dq, q_elems, q_slab, 0);
  scan("dk", dk, k_elems, k_slab, 1);
  scan("dv", dv, k_elems, k_slab, 2);
  for (size_t x = 0; x < sampled.size(); ++x) {
    BwdGpuResult g;
    g.dq = kept[x * 3 + 0];
    g.dk = kept[x * 3 + 1];
    g.dv = kept[x * 3 + 2];
    const BwdOutcome o = check_bwd_result(cases[x], inputs[x], g, compute_bwd_reference(cases[x], inputs[x]));
    ASSERT_TRUE(o.ok) << repro.str() << "\n  batch " << sampled[x] << ":\n" << o.message;
    std::printf("[ bwd ok ] offsets64 %s batch %lld: %s\n", s.name, static_cast<long long>(sampled[x]),
                o.message.c_str());
  }
}

// q, out, dout, dq: 1025 x 1024 x 16 x 128 = 2.15e9 elements (batch 1024 starts at element 2^31);
// the dQ accumulator is indexed past 2^31 too.
TEST(BwdOffsets64, QuerySideOver2To31Elements) {
  FC_REQUIRE_GPU();
  run_bwd_offsets64({"q_side_big", 1025, 1024, 64, 16, 128});
}

// k, v, dk, dv: 1025 x 1024 x 16 x 128 elements; short queries.
TEST(BwdOffsets64, KeySideOver2To31Elements) {
  FC_REQUIRE_GPU();
  run_bwd_offsets64({"k_side_big", 1025, 64, 1024, 16, 128});
}

}  // namespace
}  // namespace flashcute::testing
