// The backward against the fp64 oracle over the grid of docs/TESTING.md ("The grid"), through the
// public API only (tests/gpu/bwd_harness.h does the work: inputs and dout, the forward's out/lse,
// NaN-filled gradients and workspace, the call, the reference gradients, the tolerance rule with
// R = 3, exact zeros for rows that see no key and keys that no row sees).
//
// Not the cartesian product: each list varies a few axes fully and cycles the others, so every value
// of every axis appears and test names say what a case is:
//   Seqlens         every (seqlen_q, seqlen_k) pair of TESTING.md, both dtypes below 2048, with and
//                   without causal (causal with seqlen_q > seqlen_k leaves rows empty)
//   TileBoundaries  {1, k-1, k, k+1, 2k-1, 2k+1} for the backward's block sizes k in {64, 128}
//                   (block_m 64/128, block_n 64/128): squares (causal) and mixed pairs
//   HeadDims        every bucket and 40, 72, 80, 200 (padded up), both dtypes; dv != d
//   Heads           heads_q 6 and 9 with heads_kv in {heads_q, heads_q/3, 1}; GQA 4 and 8 with 32
//   Masks           causal and windows (incl. (0,0) and rows left empty) at seqlen_q <, =, > seqlen_k
//   Features        softcap 30, custom scales, inputs x3 / x5, batch 9, non-contiguous q/k/v/out/dout
//                   and gradients, a non-blocking stream, ALiBi, the deterministic mode, the GPU
//                   forward's own out/lse (end to end)
//   Varlen          random lengths, zero-length sequences (incl. the last), all length 1, max_seqlen
//                   larger than the true maximum
// A configuration this build does not compile is skipped with the library's message; any other
// failure prints a REPRO line with every field and the seed.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bwd_harness.h"

namespace flashcute::testing {
namespace {

constexpr DType kBf16 = DType::kBFloat16;
constexpr DType kFp16 = DType::kFloat16;
constexpr DType kDtypes[] = {kBf16, kFp16};

struct Heads {
  int64_t q, kv;
};
struct Pair {
  int64_t q, k;
};

const std::vector<int64_t> kHeadDims = {64, 96, 128, 192, 256, 40, 72, 80, 200};
const std::vector<Pair> kSeqPairs = {{1, 1},       {1, 3},       {2, 1},       {3, 513},    {1, 239},   {239, 1},
                                     {3, 799},     {799, 3},     {113, 203},   {128, 217},  {127, 512}, {511, 1},
                                     {1023, 1024}, {1024, 1023}, {2048, 2048}, {4224, 4224}};
const std::vector<int64_t> kTileSizes = {1, 63, 64, 65, 127, 128, 129, 255, 257};
const std::vector<Heads> kHeads = {{6, 6}, {6, 2}, {6, 1}, {9, 9}, {9, 3}, {9, 1}, {32, 8}, {32, 4}};
const std::vector<int64_t> kBatches = {1, 4, 9};

enum class Mask { kNone, kCausal, kWin0_0, kWin16_0, kWin0_16, kWin32_8, kWinInf_8, kWin8_Inf, kWin4_2 };
const std::vector<Mask> kMasks = {Mask::kCausal,  Mask::kWin0_0,   Mask::kWin16_0,  Mask::kWin0_16,
                                  Mask::kWin32_8, Mask::kWinInf_8, Mask::kWin8_Inf, Mask::kWin4_2};

void apply(FwdCase& c, Mask m) {
  c.causal = false;
  c.window_left = c.window_right = -1;
  switch (m) {
    case Mask::kNone: break;
    case Mask::kCausal: c.causal = true; break;
    case Mask::kWin0_0: c.window_left = 0, c.window_right = 0; break;
    case Mask::kWin16_0: c.window_left = 16, c.window_right = 0; break;
    case Mask::kWin0_16: c.window_left = 0, c.window_right = 16; break;
    case Mask::kWin32_8: c.window_left = 32, c.window_right = 8; break;
    case Mask::kWinInf_8: c.window_right = 8; break;
    case Mask::kWin8_Inf: c.window_left = 8; break;
    case Mask::kWin4_2: c.window_left = 4, c.window_right = 2; break;
  }
}

BwdCase mk(DType dt, int64_t batch, Pair s, Heads h, int64_t d, Mask m, uint64_t seed) {
  BwdCase c;
  c.f.dtype = dt;
  c.f.batch = batch;
  c.f.seqlen_q = s.q;
  c.f.seqlen_k = s.k;
  c.f.heads_q = h.q;
  c.f.heads_kv = h.kv;
  c.f.d = d;
  apply(c.f, m);
  c.f.seed = seed;
  return c;
}

// Keeps one case's oracle cheap: shrinks batch, then heads, while the work is above `cap`.
void cap_work(BwdCase& bc, double cap) {
  FwdCase& c = bc.f;
  while (c.work() > cap && c.batch > 1) c.batch = std::max<int64_t>(1, c.batch / 2);
  if (c.work() > cap && c.heads_q > 6) {
    c.heads_q = c.heads_q % 3 == 0 ? 9 : 6;
    c.heads_kv = std::min(c.heads_kv, c.heads_q);
    while (c.heads_q % c.heads_kv != 0) --c.heads_kv;
  }
}

std::vector<BwdCase> seqlens() {
  std::vector<BwdCase> v;
  uint64_t seed = 21000;
  for (size_t i = 0; i < kSeqPairs.size(); ++i) {
    const Pair p = kSeqPairs[i];
    if (p.q >= 2048) continue;
    for (int t = 0; t < 2; ++t) {
      const bool big = p.q * p.k > 50000;
      const Heads h = big ? kHeads[(i + t) % 2 == 0 ? 1 : 4] : kHeads[(i + 3 * t) % kHeads.size()];
      BwdCase c = mk(kDtypes[t], big ? 1 : kBatches[(i + t) % 3], p, h, kHeadDims[(2 * i + t) % kHeadDims.size()],
                     (i + t) % 2 ? Mask::kCausal : Mask::kNone, seed++);
      cap_work(c, 2e9);
      v.push_back(c);
    }
  }
  // The long pairs: one kv head shared by two q heads (the GQA sum over full-length keys).
  v.push_back(mk(kBf16, 1, {2048, 2048}, {2, 1}, 128, Mask::kNone, seed++));
  v.push_back(mk(kFp16, 1, {2048, 2048}, {2, 2}, 64, Mask::kCausal, seed++));
  v.push_back(mk(kBf16, 1, {4224, 4224}, {2, 1}, 128, Mask::kCausal, seed++));
  return v;
}

std::vector<BwdCase> tiles() {
  std::vector<BwdCase> v;
  uint64_t seed = 22000;
  const int64_t ds[] = {128, 64, 96, 256, 192};
  const size_t n = kTileSizes.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = kTileSizes[i];
    // Square and causal: the diagonal crosses query-block and key-block boundaries.
    v.push_back(mk(kDtypes[i % 2], 2, {a, a}, {6, 2}, ds[i % 5], Mask::kCausal, seed++));
    // Neighbouring sizes, unmasked.
    v.push_back(
        mk(kDtypes[(i + 1) % 2], 1, {a, kTileSizes[(i + 1) % n]}, {6, 6}, ds[(i + 1) % 5], Mask::kNone, seed++));
    // Far sizes, causal (bottom-right alignment with seqlen_q != seqlen_k).
    v.push_back(mk(kDtypes[i % 2], 1, {a, kTileSizes[(i + 4) % n]}, {9, 3}, ds[(i + 2) % 5], Mask::kCausal, seed++));
  }
  return v;
}

std::vector<BwdCase> head_dims() {
  std::vector<BwdCase> v;
  uint64_t seed = 23000;
  for (int64_t d : kHeadDims) {
    v.push_back(mk(kBf16, 2, {113, 203}, {6, 2}, d, Mask::kNone, seed++));
    v.push_back(mk(kFp16, 2, {203, 113}, {6, 2}, d, Mask::kCausal, seed++));
  }
  // dv != d (one bucket covers max(d, dv); the narrower side is zero-padded).
  const std::pair<int64_t, int64_t> dd[] = {{192, 128}, {64, 128}, {128, 64}, {256, 128}};
  int n = 0;
  for (auto [d, dv] : dd) {
    BwdCase c = mk(kDtypes[n % 2], 2, {129, 257}, {6, 2}, d, n % 2 ? Mask::kCausal : Mask::kNone, seed++);
    c.f.dv = dv;
    v.push_back(c);
    ++n;
  }
  return v;
}

std::vector<BwdCase> heads() {
  std::vector<BwdCase> v;
  uint64_t seed = 24000;
  int n = 0;
  for (const Heads& h : kHeads) {
    v.push_back(mk(kDtypes[n % 2], kBatches[n % 3], n % 2 ? Pair{129, 65} : Pair{65, 129}, h, n % 2 ? 128 : 64,
                   n % 2 ? Mask::kCausal : Mask::kNone, seed++));
    ++n;
  }
  return v;
}

std::vector<BwdCase> masks() {
  std::vector<BwdCase> v;
  uint64_t seed = 25000;
  const Pair shapes[] = {{113, 203}, {203, 113}, {200, 200}};
  int n = 0;
  for (Mask m : kMasks) {
    for (int t = 0; t < 2; ++t) {
      v.push_back(mk(kDtypes[n % 2], 2, shapes[(n + t) % 3], n % 3 == 0 ? Heads{9, 3} : Heads{6, 2}, n % 2 ? 64 : 128,
                     m, seed++));
      ++n;
    }
  }
  // Rows left empty: a query row far below the last key sees nothing (dq exactly 0).
  v.push_back(mk(kBf16, 1, {239, 1}, {6, 1}, 128, Mask::kWin0_0, seed++));
  v.push_back(mk(kFp16, 2, {799, 3}, {6, 2}, 64, Mask::kWin4_2, seed++));
  v.push_back(mk(kBf16, 1, {511, 1}, {9, 3}, 256, Mask::kCausal, seed++));
  return v;
}

std::vector<BwdCase> features() {
  std::vector<BwdCase> v;
  uint64_t seed = 26000;
  // Softcap 30 (the gradient goes through tanh).
  for (DType dt : kDtypes) {
    for (Mask m : {Mask::kNone, Mask::kCausal}) {
      BwdCase c = mk(dt, 2, {128, 217}, {9, 3}, dt == kBf16 ? 128 : 64, m, seed++);
      c.f.softcap = 30.0f;
      v.push_back(c);
    }
  }
  {
    BwdCase c = mk(kBf16, 1, {257, 255}, {32, 4}, 64, Mask::kWin32_8, seed++);
    c.f.softcap = 30.0f;
    v.push_back(c);
  }
  // Custom scales (one with softcap, where the scale sits inside the tanh).
  {
    BwdCase c = mk(kBf16, 2, {127, 512}, {6, 2}, 128, Mask::kNone, seed++);
    c.f.scale = 0.5f;
    v.push_back(c);
    c = mk(kFp16, 2, {127, 512}, {6, 2}, 64, Mask::kCausal, seed++);
    c.f.scale = 0.05f;
    v.push_back(c);
    c = mk(kBf16, 1, {200, 300}, {6, 1}, 96, Mask::kNone, seed++);
    c.f.scale = 0.3f;
    c.f.softcap = 30.0f;
    v.push_back(c);
  }
  // Inputs x3 and x5 (peakier softmax).
  for (double x : {3.0, 5.0}) {
    for (DType dt : kDtypes) {
      BwdCase c = mk(dt, 2, {129, 257}, {6, 2}, 128, dt == kFp16 ? Mask::kCausal : Mask::kNone, seed++);
      c.f.input_scale = x;
      v.push_back(c);
    }
  }
  // Batch 9.
  v.push_back(mk(kBf16, 9, {127, 512}, {6, 1}, 64, Mask::kNone, seed++));
  v.push_back(mk(kFp16, 9, {113, 203}, {9, 3}, 128, Mask::kCausal, seed++));
  // Non-contiguous (sliced) q, k, v, out, dout and gradients.
  for (DType dt : kDtypes) {
    for (Layout l : {Layout::kPadded, Layout::kHeadMajor}) {
      BwdCase c = mk(dt, 3, {113, 203}, {6, 2}, dt == kBf16 ? 128 : 72, Mask::kCausal, seed++);
      c.set_layouts(l);
      v.push_back(c);
    }
    BwdCase c = mk(dt, 2, {128, 217}, {9, 3}, 64, Mask::kWin16_0, seed++);
    c.f.layout_q = Layout::kPadded;
    c.f.layout_k = Layout::kHeadMajor;
    c.layout_dout = Layout::kHeadMajor;
    c.layout_dq = Layout::kHeadMajor;
    c.layout_dv = Layout::kPadded;
    v.push_back(c);
  }
  // A non-blocking stream.
  for (DType dt : kDtypes) {
    BwdCase c = mk(dt, 2, {200, 129}, {6, 2}, 128, Mask::kCausal, seed++);
    c.f.stream = StreamKind::kNonBlocking;
    v.push_back(c);
  }
  // ALiBi, per head and per (batch, head), with and without softcap and masks.
  for (DType dt : kDtypes) {
    BwdCase c = mk(dt, 3, {113, 203}, {6, 2}, 128, Mask::kNone, seed++);
    c.f.alibi = Alibi::kPerHead;
    v.push_back(c);
    c = mk(dt, 2, {203, 113}, {9, 3}, 64, Mask::kCausal, seed++);
    c.f.alibi = Alibi::kPerBatchHead;
    c.f.softcap = 30.0f;
    v.push_back(c);
  }
  // The deterministic mode meets the same tolerance (ordered dQ, GQA sums).
  {
    BwdCase c = mk(kBf16, 2, {300, 700}, {6, 2}, 128, Mask::kNone, seed++);
    c.deterministic = true;
    v.push_back(c);
    c = mk(kFp16, 2, {700, 300}, {8, 1}, 64, Mask::kCausal, seed++);
    c.deterministic = true;
    v.push_back(c);
    c = mk(kBf16, 1, {257, 513}, {6, 3}, 256, Mask::kWin32_8, seed++);
    c.deterministic = true;
    c.f.softcap = 30.0f;
    v.push_back(c);
  }
  // End to end: flashcute::fwd's own out and lse feed the backward (and the oracle's backward).
  for (DType dt : kDtypes) {
    BwdCase c =
        mk(dt, 2, {200, 333}, {6, 2}, dt == kBf16 ? 128 : 96, dt == kBf16 ? Mask::kCausal : Mask::kNone, seed++);
    c.source = Source::kGpuForward;
    v.push_back(c);
  }
  return v;
}

BwdCase varlen_case(DType dt, std::vector<int32_t> lq, std::vector<int32_t> lk, Heads h, int64_t d, Mask m,
                    uint64_t seed) {
  BwdCase c = mk(dt, 1, {0, 0}, h, d, m, seed);
  c.f.cu_seqlens_q = offsets_from_lengths(lq);
  c.f.cu_seqlens_k = offsets_from_lengths(lk);
  return c;
}

std::vector<BwdCase> varlens() {
  std::vector<BwdCase> v;
  uint64_t seed = 27000;
  v.push_back(varlen_case(kBf16, {17, 128, 1, 300, 65}, {40, 129, 7, 300, 64}, {6, 2}, 128, Mask::kCausal, seed++));
  v.push_back(varlen_case(kFp16, {0, 64, 129, 0}, {5, 0, 200, 0}, {9, 3}, 64, Mask::kNone, seed++));
  v.push_back(varlen_case(kBf16, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, {6, 1}, 96, Mask::kNone, seed++));
  BwdCase c = varlen_case(kFp16, {100, 33, 257}, {120, 31, 255}, {32, 8}, 128, Mask::kWin16_0, seed++);
  c.set_layouts(Layout::kPadded);
  c.f.softcap = 30.0f;
  v.push_back(c);
  c = varlen_case(kBf16, {70, 0, 190}, {300, 129, 64}, {6, 6}, 192, Mask::kNone, seed++);
  c.f.max_seqlen_q = 400;  // larger than the true maximum: same answer
  c.f.max_seqlen_k = 513;
  c.deterministic = true;
  v.push_back(c);
  c = varlen_case(kBf16, {65, 128, 3}, {129, 1, 200}, {6, 2}, 64, Mask::kCausal, seed++);
  c.f.alibi = Alibi::kPerBatchHead;
  c.f.pass_host_cu = false;
  v.push_back(c);
  return v;
}

class BwdGrid : public ::testing::TestWithParam<BwdCase> {};

TEST_P(BwdGrid, MatchesReference) {
  FC_REQUIRE_GPU();
  FC_CHECK_BWD_CASE(GetParam());
}

#define FC_BWD_GRID(group, list) INSTANTIATE_TEST_SUITE_P(group, BwdGrid, ::testing::ValuesIn(list), BwdCaseName(list))

FC_BWD_GRID(Seqlens, seqlens());
FC_BWD_GRID(TileBoundaries, tiles());
FC_BWD_GRID(HeadDims, head_dims());
FC_BWD_GRID(Heads, heads());
FC_BWD_GRID(Masks, masks());
FC_BWD_GRID(Features, features());
FC_BWD_GRID(Varlen, varlens());

}  // namespace
}  // namespace flashcute::testing
