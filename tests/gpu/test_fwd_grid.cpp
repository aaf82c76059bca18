// The forward against the fp64 oracle over the grid of docs/TESTING.md ("The grid"), through the
// public API only (tests/gpu/fwd_harness.h does the work: inputs, NaN-filled outputs, the call, the
// reference, the tolerance rule, exact 0 / -inf for rows that see no key).
//
// Not the cartesian product: each list below varies a few axes fully and cycles the others, so every
// value of every axis appears, most pairs of values appear, and test names say what a case is:
//   Grid (smoke tier, about a minute on one H100):
//     Seqlens         every (seqlen_q, seqlen_k) pair of TESTING.md below 2048, both dtypes, with and
//                     without causal (causal with seqlen_q > seqlen_k leaves rows empty)
//     TileBoundaries  {1, k-1, k, k+1, 2k-1, 2k+1} for k in {64, 128}: squares (causal) and mixed
//     HeadDims        every compiled bucket and 40, 72, 80, 200 (padded up), both dtypes
//     Heads           heads_q 6 and 9 with heads_kv in {heads_q, heads_q/3, 1}; GQA 4 and 8 with 32
//     Masks           causal and windows (incl. (0,0) and rows left empty) at seqlen_q <, =, > seqlen_k
//     Features        softcap 30, custom scales, inputs x3 / x5, batch 9, non-contiguous layouts,
//                     a non-blocking stream, lse not requested
//     Varlen          a few varlen shapes (edge cases of varlen are in test_fwd_edge.cpp)
//   FullGrid (still run by default; filter with --gtest_filter=-*FullGrid*):
//     Seqlens (1023/1024, 2048, 4224 with masks; 4224 checks sampled rows), all tile-boundary pairs,
//     every head dim with softcap / windows / layouts, batch x heads, dv != d, ALiBi, and a seeded
//     pairwise sweep over every axis at once, and {k-1, k, k+1, 2k-1, 2k+1} for every block size the
//     two paths' tile tables compile (CompiledTiles).
// Every case runs once per path (test_backends(): SM80 and SM90, names ending in _sm80 / _sm90); the
// SM90 instances skip with a message on a GPU that is not compute capability 9.x.
// A configuration this build does not compile (e.g. the CI preset's bf16/d128 only) is skipped with
// the library's message; any other failure prints a REPRO line with every field and the seed.

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fwd_harness.h"
#include "sm80/tile_config.h"
#include "sm90/tile_config.h"

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

// TESTING.md's axes.
const std::vector<int64_t> kHeadDims = {64, 96, 128, 192, 256, 40, 72, 80, 200};
const std::vector<Pair> kSeqPairs = {{1, 1},       {1, 3},       {2, 1},       {3, 513},    {1, 239},   {239, 1},
                                     {3, 799},     {799, 3},     {113, 203},   {128, 217},  {127, 512}, {511, 1},
                                     {1023, 1024}, {1024, 1023}, {2048, 2048}, {4224, 4224}};
// Tile-boundary sizes for the kernels' block sizes 64 and 128: {1, k-1, k, k+1, 2k-1, 2k+1}.
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

FwdCase mk(DType dt, int64_t batch, Pair s, Heads h, int64_t d, Mask m, uint64_t seed) {
  FwdCase c;
  c.dtype = dt;
  c.batch = batch;
  c.seqlen_q = s.q;
  c.seqlen_k = s.k;
  c.heads_q = h.q;
  c.heads_kv = h.kv;
  c.d = d;
  apply(c, m);
  c.seed = seed;
  return c;
}

// Keeps one case's oracle cheap: shrinks batch, then heads, while the work is above `cap`.
void cap_work(FwdCase& c, double cap) {
  while (c.work() > cap && c.batch > 1) c.batch = std::max<int64_t>(1, c.batch / 2);
  if (c.work() > cap && c.heads_q > 6) {
    c.heads_q = c.heads_q % 3 == 0 ? 9 : 6;
    c.heads_kv = std::min(c.heads_kv, c.heads_q);
    while (c.heads_q % c.heads_kv != 0) --c.heads_kv;
  }
}

// ------------------------------------------------------------------------------------------------
// Smoke tier.

std::vector<FwdCase> smoke_seqlens() {
  std::vector<FwdCase> v;
  uint64_t seed = 1000;
  for (size_t i = 0; i < kSeqPairs.size(); ++i) {
    const Pair p = kSeqPairs[i];
    if (p.q >= 2048) continue;  // FullGrid
    for (int t = 0; t < 2; ++t) {
      const bool big = p.q * p.k > 50000;
      const Heads h = big ? kHeads[(i + t) % 2 == 0 ? 1 : 4] : kHeads[(i + 3 * t) % kHeads.size()];
      const int64_t b = big ? 1 : kBatches[(i + t) % 3];
      FwdCase c = mk(kDtypes[t], b, p, h, kHeadDims[(2 * i + t) % kHeadDims.size()],
                     (i + t) % 2 ? Mask::kCausal : Mask::kNone, seed++);
      cap_work(c, 2e9);
      v.push_back(c);
    }
  }
  return v;
}

std::vector<FwdCase> smoke_tiles() {
  std::vector<FwdCase> v;
  uint64_t seed = 2000;
  const int64_t ds[] = {128, 64, 96, 256, 192};
  const size_t n = kTileSizes.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = kTileSizes[i];
    // Square and causal: the diagonal crosses the block boundaries.
    v.push_back(mk(kDtypes[i % 2], 2, {a, a}, {6, 2}, ds[i % 5], Mask::kCausal, seed++));
    // Neighbouring sizes, unmasked.
    v.push_back(
        mk(kDtypes[(i + 1) % 2], 1, {a, kTileSizes[(i + 1) % n]}, {6, 6}, ds[(i + 1) % 5], Mask::kNone, seed++));
    // Far sizes, causal (bottom-right alignment with seqlen_q != seqlen_k).
    v.push_back(mk(kDtypes[i % 2], 1, {a, kTileSizes[(i + 4) % n]}, {9, 3}, ds[(i + 2) % 5], Mask::kCausal, seed++));
  }
  return v;
}

std::vector<FwdCase> smoke_head_dims() {
  std::vector<FwdCase> v;
  uint64_t seed = 3000;
  for (int64_t d : kHeadDims) {
    v.push_back(mk(kBf16, 2, {113, 203}, {6, 2}, d, Mask::kNone, seed++));
    v.push_back(mk(kFp16, 2, {203, 113}, {6, 2}, d, Mask::kCausal, seed++));
  }
  return v;
}

std::vector<FwdCase> smoke_heads() {
  std::vector<FwdCase> v;
  uint64_t seed = 4000;
  for (const Heads& h : kHeads) {
    v.push_back(mk(kBf16, 2, {65, 129}, h, 64, Mask::kNone, seed++));
    v.push_back(mk(kFp16, 1, {129, 65}, h, 128, Mask::kCausal, seed++));
  }
  return v;
}

std::vector<FwdCase> smoke_masks() {
  std::vector<FwdCase> v;
  uint64_t seed = 5000;
  const Pair shapes[] = {{113, 203}, {203, 113}, {128, 128}};
  int n = 0;
  for (Mask m : kMasks) {
    for (const Pair& s : shapes) {
      v.push_back(mk(kDtypes[n % 2], 2, s, n % 3 == 0 ? Heads{9, 3} : Heads{6, 2}, n % 2 ? 64 : 128, m, seed++));
      ++n;
    }
  }
  // Rows left empty: a query row far below the last key sees nothing.
  v.push_back(mk(kBf16, 1, {239, 1}, {6, 1}, 128, Mask::kWin0_0, seed++));
  v.push_back(mk(kFp16, 2, {799, 3}, {6, 2}, 64, Mask::kWin4_2, seed++));
  v.push_back(mk(kBf16, 1, {511, 1}, {9, 3}, 256, Mask::kCausal, seed++));
  return v;
}

std::vector<FwdCase> smoke_features() {
  std::vector<FwdCase> v;
  uint64_t seed = 6000;
  // Softcap 30.
  for (DType dt : kDtypes) {
    for (Mask m : {Mask::kNone, Mask::kCausal}) {
      FwdCase c = mk(dt, 2, {128, 217}, {9, 3}, 128, m, seed++);
      c.softcap = 30.0f;
      v.push_back(c);
    }
  }
  {
    FwdCase c = mk(kBf16, 1, {257, 255}, {32, 4}, 64, Mask::kWin32_8, seed++);
    c.softcap = 30.0f;
    v.push_back(c);
  }
  // Custom scales (one with softcap, where the scale sits inside the tanh).
  {
    FwdCase c = mk(kBf16, 2, {127, 512}, {6, 2}, 128, Mask::kNone, seed++);
    c.scale = 0.5f;
    v.push_back(c);
    c = mk(kFp16, 2, {127, 512}, {6, 2}, 64, Mask::kCausal, seed++);
    c.scale = 0.05f;
    v.push_back(c);
    c = mk(kBf16, 1, {200, 300}, {6, 1}, 96, Mask::kNone, seed++);
    c.scale = 0.3f;
    c.softcap = 30.0f;
    v.push_back(c);
  }
  // Inputs x3 and x5 (peakier softmax).
  for (double x : {3.0, 5.0}) {
    for (DType dt : kDtypes) {
      FwdCase c = mk(dt, 2, {129, 257}, {6, 2}, 128, dt == kFp16 ? Mask::kCausal : Mask::kNone, seed++);
      c.input_scale = x;
      v.push_back(c);
    }
  }
  {
    FwdCase c = mk(kBf16, 2, {65, 300}, {6, 6}, 64, Mask::kNone, seed++);
    c.input_scale = 5.0;
    c.softcap = 30.0f;
    v.push_back(c);
  }
  // Batch 9.
  v.push_back(mk(kBf16, 9, {127, 512}, {6, 1}, 64, Mask::kNone, seed++));
  v.push_back(mk(kFp16, 9, {113, 203}, {9, 3}, 128, Mask::kCausal, seed++));
  // Non-contiguous layouts (strides larger than dense, multiples of 8 elements).
  const Layout L[] = {Layout::kPadded, Layout::kHeadMajor};
  for (DType dt : kDtypes) {
    for (Layout l : L) {
      FwdCase c = mk(dt, 3, {113, 203}, {6, 2}, dt == kBf16 ? 128 : 72, Mask::kCausal, seed++);
      c.set_layouts(l);
      v.push_back(c);
    }
    FwdCase c = mk(dt, 2, {128, 217}, {9, 3}, 64, Mask::kWin16_0, seed++);
    c.layout_q = Layout::kPadded;
    c.layout_k = Layout::kHeadMajor;
    c.layout_v = Layout::kContiguous;
    c.layout_out = Layout::kPadded;
    v.push_back(c);
    c = mk(dt, 2, {65, 127}, {6, 6}, 128, Mask::kNone, seed++);
    c.layout_out = Layout::kHeadMajor;
    v.push_back(c);
  }
  // A non-blocking stream; lse not requested.
  for (DType dt : kDtypes) {
    FwdCase c = mk(dt, 2, {200, 129}, {6, 2}, 128, Mask::kCausal, seed++);
    c.stream = StreamKind::kNonBlocking;
    v.push_back(c);
    c = mk(dt, 2, {129, 200}, {6, 2}, 128, Mask::kNone, seed++);
    c.with_lse = false;
    v.push_back(c);
  }
  return v;
}

FwdCase varlen_case(DType dt, std::vector<int32_t> lq, std::vector<int32_t> lk, Heads h, int64_t d, Mask m,
                    uint64_t seed) {
  FwdCase c = mk(dt, 1, {0, 0}, h, d, m, seed);
  c.cu_seqlens_q = offsets_from_lengths(lq);
  c.cu_seqlens_k = offsets_from_lengths(lk);
  return c;
}

std::vector<FwdCase> smoke_varlen() {
  std::vector<FwdCase> v;
  uint64_t seed = 7000;
  v.push_back(varlen_case(kBf16, {17, 128, 1, 300, 65}, {40, 129, 7, 300, 64}, {6, 2}, 128, Mask::kCausal, seed++));
  v.push_back(varlen_case(kFp16, {0, 64, 129, 0}, {5, 0, 200, 0}, {9, 3}, 64, Mask::kNone, seed++));
  v.push_back(varlen_case(kBf16, {1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}, {6, 1}, 96, Mask::kNone, seed++));
  FwdCase c = varlen_case(kFp16, {100, 33, 257}, {120, 31, 255}, {32, 8}, 128, Mask::kWin16_0, seed++);
  c.set_layouts(Layout::kPadded);
  c.softcap = 30.0f;
  v.push_back(c);
  return v;
}

// ------------------------------------------------------------------------------------------------
// Full tier.

std::vector<FwdCase> full_seqlens() {
  std::vector<FwdCase> v;
  uint64_t seed = 11000;
  for (DType dt : kDtypes) {
    for (Mask m : {Mask::kNone, Mask::kCausal}) {
      v.push_back(mk(dt, 1, {2048, 2048}, {2, 2}, dt == kBf16 ? 128 : 64, m, seed++));
      v.push_back(mk(dt, 1, {4224, 4224}, {6, 2}, dt == kBf16 ? 128 : 256, m, seed++));
    }
    v.push_back(mk(dt, 1, {1023, 1024}, {6, 2}, 128, Mask::kWin32_8, seed++));
    v.push_back(mk(dt, 1, {1024, 1023}, {6, 2}, 64, Mask::kWin16_0, seed++));
  }
  {
    FwdCase c = mk(kBf16, 2, {4224, 4224}, {8, 1}, 128, Mask::kWin32_8, seed++);
    c.softcap = 30.0f;
    v.push_back(c);
    c = mk(kFp16, 1, {2048, 4224}, {4, 4}, 96, Mask::kCausal, seed++);
    c.set_layouts(Layout::kPadded);
    v.push_back(c);
    c = mk(kBf16, 1, {4224, 2048}, {4, 2}, 192, Mask::kCausal, seed++);  // rows left empty, sampled
    v.push_back(c);
  }
  return v;
}

std::vector<FwdCase> full_tiles() {
  std::vector<FwdCase> v;
  uint64_t seed = 12000;
  const int64_t ds[] = {64, 128, 96, 192, 256};
  const size_t n = kTileSizes.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      // Skip the pairs the smoke tier already has.
      if (j == i || j == (i + 1) % n || j == (i + 4) % n) continue;
      v.push_back(mk(kDtypes[(i + j) % 2], 1, {kTileSizes[i], kTileSizes[j]}, (i + j) % 3 ? Heads{6, 2} : Heads{9, 9},
                     ds[(i + 2 * j) % 5], (i * n + j) % 2 ? Mask::kCausal : Mask::kNone, seed++));
    }
  }
  return v;
}

std::vector<FwdCase> full_head_dims() {
  std::vector<FwdCase> v;
  uint64_t seed = 13000;
  for (int64_t d : kHeadDims) {
    for (DType dt : kDtypes) {
      FwdCase c = mk(dt, 2, {257, 511}, {9, 3}, d, Mask::kCausal, seed++);
      c.softcap = 30.0f;
      v.push_back(c);
      c = mk(dt, 1, {511, 257}, {6, 1}, d, Mask::kWin32_8, seed++);
      c.set_layouts(dt == kBf16 ? Layout::kPadded : Layout::kHeadMajor);
      c.input_scale = 3.0;
      v.push_back(c);
    }
  }
  return v;
}

std::vector<FwdCase> full_batch_heads() {
  std::vector<FwdCase> v;
  uint64_t seed = 14000;
  int n = 0;
  for (int64_t b : kBatches) {
    for (const Heads& h : kHeads) {
      FwdCase c =
          mk(kDtypes[n % 2], b, {127, 512}, h, n % 3 == 0 ? 128 : 64, n % 2 ? Mask::kCausal : Mask::kNone, seed++);
      if (n % 4 == 3) c.scale = 0.125f;
      v.push_back(c);
      ++n;
    }
  }
  return v;
}

std::vector<FwdCase> full_head_dim_v() {
  std::vector<FwdCase> v;
  uint64_t seed = 15000;
  const std::pair<int64_t, int64_t> dd[] = {{192, 128}, {64, 128}, {128, 64}, {256, 128}};
  int n = 0;
  for (auto [d, dv] : dd) {
    FwdCase c = mk(kDtypes[n % 2], 2, {129, 257}, {6, 2}, d, n % 2 ? Mask::kCausal : Mask::kNone, seed++);
    c.dv = dv;
    v.push_back(c);
    ++n;
  }
  return v;
}

std::vector<FwdCase> full_alibi() {
  std::vector<FwdCase> v;
  uint64_t seed = 16000;
  for (DType dt : kDtypes) {
    for (Alibi a : {Alibi::kPerHead, Alibi::kPerBatchHead}) {
      FwdCase c = mk(dt, 3, {113, 203}, {6, 2}, 128, Mask::kNone, seed++);
      c.alibi = a;
      v.push_back(c);
      c = mk(dt, 2, {203, 113}, {9, 3}, 64, Mask::kCausal, seed++);
      c.alibi = a;
      c.softcap = 30.0f;
      v.push_back(c);
    }
  }
  {
    // Big and causal: the sampled reference handles ALiBi when the last visible key is the diagonal.
    FwdCase c = mk(kBf16, 1, {4224, 4224}, {4, 2}, 128, Mask::kCausal, seed++);
    c.alibi = Alibi::kPerHead;
    v.push_back(c);
    c = mk(kFp16, 2, {300, 700}, {6, 6}, 96, Mask::kWin32_8, seed++);
    c.alibi = Alibi::kPerBatchHead;
    v.push_back(c);
  }
  return v;
}

// A seeded sweep that picks every axis at once (each value appears; pairs mostly do).
std::vector<FwdCase> full_pairwise() {
  std::vector<FwdCase> v;
  std::mt19937_64 rng(17017);
  std::vector<Pair> pairs(kSeqPairs.begin(), kSeqPairs.end() - 2);  // no 2048 / 4224 here
  for (int64_t a : kTileSizes) pairs.push_back({a, kTileSizes[rng() % kTileSizes.size()]});
  const std::vector<Mask> masks = {Mask::kNone,    Mask::kNone,    Mask::kCausal,   Mask::kCausal,   Mask::kWin0_0,
                                   Mask::kWin16_0, Mask::kWin32_8, Mask::kWinInf_8, Mask::kWin8_Inf, Mask::kWin4_2};
  const Layout layouts[] = {Layout::kContiguous, Layout::kContiguous, Layout::kPadded, Layout::kHeadMajor};
  const double xs[] = {1.0, 1.0, 3.0, 5.0};
  constexpr int kCases = 64;
  for (int n = 0; n < kCases; ++n) {
    // Stride through each axis with a different step so that the values recombine.
    FwdCase c =
        mk(kDtypes[n % 2], kBatches[(n / 2) % 3], pairs[(n * 7) % pairs.size()], kHeads[(n * 5 + 1) % kHeads.size()],
           kHeadDims[(n * 4 + n / 9) % kHeadDims.size()], masks[(n * 3 + n / 10) % masks.size()], 17000 + n);
    c.softcap = (n / 3) % 2 ? 30.0f : 0.0f;
    if (n % 5 == 2) c.scale = 0.25f;
    c.layout_q = layouts[n % 4];
    c.layout_k = layouts[(n / 4) % 4];
    c.layout_v = layouts[(n + 1) % 4];
    c.layout_out = layouts[(n / 2) % 4];
    c.input_scale = xs[(n / 7) % 4];
    if (n % 11 == 4) c.stream = StreamKind::kNonBlocking;
    if (n % 13 == 6) c.alibi = (n % 2) ? Alibi::kPerBatchHead : Alibi::kPerHead;
    cap_work(c, 2e9);
    c.sampling = Sampling::kFull;
    v.push_back(c);
  }
  return v;
}

// ------------------------------------------------------------------------------------------------

class Grid : public ::testing::TestWithParam<FwdCase> {};
class FullGrid : public ::testing::TestWithParam<FwdCase> {};

TEST_P(Grid, MatchesReference) {
  FC_REQUIRE_GPU();
  FC_REQUIRE_BACKEND(GetParam().backend);
  FC_CHECK_FWD_CASE(GetParam());
}

TEST_P(FullGrid, MatchesReference) {
  FC_REQUIRE_GPU();
  FC_REQUIRE_BACKEND(GetParam().backend);
  FC_CHECK_FWD_CASE(GetParam());
}

// Many tiles per CTA: the SM90 path runs its persistent kernel where src/sm90/tile_config.h's rows
// say (statically dealt up to persistent_max_seqlen_k, with the dynamic scheduler up to
// dynamic_max_seqlen_k, and for plain problems up to dynamic_plain_max_seqlen_k), and only a grid of
// several times the SM count makes every CTA loop over tiles (O staging, Q reloads and the K/V
// pipeline continued across tiles). Checked in sampled mode:
// the first and last (batch, head) run in a CTA's first and last rounds.
std::vector<FwdCase> full_persistent() {
  std::vector<FwdCase> v;
  uint64_t seed = 15000;
  v.push_back(mk(kBf16, 8, {1000, 1000}, {16, 4}, 64, Mask::kCausal, seed++));   // 512 tiles of 256 rows
  v.push_back(mk(kFp16, 8, {1024, 960}, {16, 16}, 128, Mask::kNone, seed++));   // 1024 tiles of 128 rows
  v.push_back(mk(kBf16, 6, {777, 1024}, {24, 8}, 128, Mask::kWin32_8, seed++));  // 1008 tiles
  FwdCase c = mk(kFp16, 8, {900, 700}, {16, 8}, 64, Mask::kCausal, seed++);       // rows left empty
  c.softcap = 30.0f;
  v.push_back(c);
  std::vector<int32_t> lq, lk;
  for (int i = 0; i < 40; ++i) {
    lq.push_back(i % 7 == 0 ? 0 : (i * 211) % 1000 + 1);  // every 7th sequence empty
    lk.push_back((i * 137) % 1024 + 1);
  }
  v.push_back(varlen_case(kBf16, lq, lk, {16, 2}, 64, Mask::kCausal, seed++));
  v.push_back(varlen_case(kFp16, lq, lk, {16, 4}, 128, Mask::kNone, seed++));
  // Longer keys: the persistent kernel with the dynamic tile scheduler where the rows use it there
  // (the harness passes a workspace), one CTA per tile where they do not.
  v.push_back(mk(kBf16, 4, {2048, 2048}, {16, 4}, 64, Mask::kCausal, seed++));  // 704 tiles
  v.push_back(mk(kFp16, 4, {1800, 2500}, {16, 8}, 128, Mask::kNone, seed++));  // 960 tiles
  v.push_back(mk(kBf16, 2, {2100, 2100}, {16, 16}, 256, Mask::kCausal, seed++));  // 544 tiles
  std::vector<int32_t> lq2, lk2;
  for (int i = 0; i < 20; ++i) {
    lq2.push_back(i % 6 == 0 ? 0 : (i * 733) % 3000 + 1);
    lk2.push_back((i * 389) % 3000 + 1);
  }
  v.push_back(varlen_case(kBf16, lq2, lk2, {16, 4}, 128, Mask::kCausal, seed++));
  // d 128 past dynamic_max_seqlen_k: plain problems on the dynamic scheduler up to
  // dynamic_plain_max_seqlen_k (8192 keys), one CTA per tile on the TileOrder grid past it, whose
  // groups of batch x head indices (masked_tile_group) apply to causal and windowed problems only
  // (tile_config.h); d 64's window runs the masked kernel.
  v.push_back(mk(kBf16, 2, {4500, 4500}, {8, 2}, 128, Mask::kCausal, seed++));   // 36 x 16 tiles
  v.push_back(mk(kFp16, 3, {2600, 4200}, {6, 3}, 64, Mask::kWin32_8, seed++));   // 14 x 18 tiles
  v.push_back(mk(kBf16, 3, {4300, 4200}, {5, 5}, 128, Mask::kNone, seed++));     // 34 x 15 tiles
  v.push_back(mk(kFp16, 1, {8300, 8300}, {2, 1}, 128, Mask::kCausal, seed++));   // 65 x 2 tiles, one per CTA
  v.push_back(mk(kBf16, 1, {300, 8400}, {3, 3}, 128, Mask::kNone, seed++));      // 3 x 3 tiles, one per CTA
  // d 64's plain problems on the dynamic scheduler up to 16384 keys, one CTA per tile past it; from
  // masked_full_min_seqlen_k (4096) keys unmasked ones run the masked kernel (its 192-key plain loop):
  // on either side of that limit, a ragged last key block, GQA and MQA, and varlen whose longest
  // sequence picks it (with short and empty sequences beside it). The harness passes a workspace
  // (test_fwd_edge.cpp's FwdWorkspace runs such a problem without one).
  v.push_back(mk(kBf16, 2, {3000, 5000}, {8, 4}, 64, Mask::kNone, seed++));      // 16 x 16 tiles
  v.push_back(mk(kFp16, 1, {200, 16500}, {4, 2}, 64, Mask::kNone, seed++));      // 2 x 4 tiles, one per CTA
  v.push_back(mk(kFp16, 2, {4100, 4095}, {6, 2}, 64, Mask::kNone, seed++));      // overlapped loop
  v.push_back(mk(kFp16, 2, {4100, 4096}, {6, 2}, 64, Mask::kNone, seed++));      // masked kernel, 22 x 12 tiles
  v.push_back(mk(kBf16, 1, {1000, 6001}, {8, 1}, 64, Mask::kNone, seed++));      // MQA, last key block 49 wide
  v.push_back(mk(kBf16, 1, {2500, 8200}, {4, 4}, 64, Mask::kNone, seed++));      // 14 x 4 tiles
  std::vector<int32_t> lq4, lk4;
  for (int i = 0; i < 6; ++i) {
    lq4.push_back(i == 2 ? 0 : (i * 1931) % 4500 + 1);
    lk4.push_back(i == 4 ? 4700 : (i * 977) % 3000 + 1);
  }
  v.push_back(varlen_case(kFp16, lq4, lk4, {4, 2}, 64, Mask::kNone, seed++));
  std::vector<int32_t> lq3, lk3;
  for (int i = 0; i < 7; ++i) {
    lq3.push_back(i == 3 ? 0 : (i * 1733) % 5000 + 1);
    lk3.push_back((i * 2389) % 5000 + 4100);
  }
  v.push_back(varlen_case(kFp16, lq3, lk3, {6, 2}, 128, Mask::kCausal, seed++));
  // d 256 from cluster_min_seqlen_k keys: clusters of two CTAs (GQA; MQA with a partial second query
  // block), and an odd number of query blocks, which runs without clusters.
  v.push_back(mk(kBf16, 2, {1024, 4096}, {8, 2}, 256, Mask::kNone, seed++));  // 8 x 16 tiles
  v.push_back(mk(kBf16, 3, {200, 5000}, {6, 1}, 256, Mask::kNone, seed++));   // 2 x 18 tiles
  v.push_back(mk(kFp16, 1, {384, 4200}, {4, 4}, 256, Mask::kNone, seed++));   // 3 x 4 tiles
  // d 64's masked short tiles over several tiles per CTA: a window, and causal with more keys than
  // queries (built with FLASHCUTE_SM90_FWD_WG_Q=2, the odd ring slots' reversed rows; tile_config.h).
  v.push_back(mk(kFp16, 8, {1000, 1000}, {16, 4}, 64, Mask::kWin32_8, seed++));  // 512 tiles of 256 rows
  v.push_back(mk(kBf16, 8, {700, 1024}, {16, 16}, 64, Mask::kCausal, seed++));  // 384 tiles
  // d 64's short_wgs instantiation (unmasked plain problems whose query rows pad less to its tiles):
  // 512 tiles of 256 rows, GQA; varlen whose longest sequence (1000 rows) picks it.
  v.push_back(mk(kFp16, 8, {1000, 1000}, {16, 4}, 64, Mask::kNone, seed++));
  v.push_back(varlen_case(kBf16, lq, lk, {16, 2}, 64, Mask::kNone, seed++));
  return v;
}

// {k-1, k, k+1, 2k-1, 2k+1} for every block size each compiled tile configuration uses (TESTING.md:
// "for every tile size actually compiled"), read from the two paths' tables so that a new row or a
// changed size is covered without editing this list: query sizes around block_m, key sizes around
// block_n (and the SM90 rows' block_n_full, which runs unmasked plain problems only, block_n_masked,
// which runs masked plain ones only, and short_wgs's tiles), at the row's head dim; softcap on the
// SM80 transform rows. block_n_full's kernel is the non-persistent one, which runs only past the row's
// persistent and dynamic limits: its key sizes are those plus a whole number of steps beyond both.
// Each case runs on both paths, like every list here.
std::vector<FwdCase> full_compiled_tiles() {
  struct Sizes {
    int64_t d, block_m, block_n;
    bool transform;
    std::optional<Mask> only;  // the key step runs problems with this mask only (else: alternate)
    int64_t keys_from = 0;     // key sizes start here (a multiple of block_n)
    int64_t queries = 70;      // query rows of the key-size cases
  };
  std::vector<Sizes> rows;
  for (const sm80::FwdTileConfig& c : sm80::kFwdTileConfigs)
    rows.push_back({c.head_dim, c.block_m, c.block_n, c.transform, std::nullopt});
  for (const sm90::FwdTileConfig& c : sm90::kFwdTileConfigs) {
    rows.push_back({c.head_dim, c.block_m, c.block_n, false, std::nullopt});
    if (c.block_n_full > 0) {
      const int64_t limit = std::max(c.persistent_max_seqlen_k, c.dynamic_max_seqlen_k);
      rows.push_back({c.head_dim, 0, c.block_n_full, false, Mask::kNone,
                      (limit + c.block_n_full - 1) / c.block_n_full * c.block_n_full});
    }
    if (c.block_n_masked > 0) rows.push_back({c.head_dim, 0, c.block_n_masked, false, Mask::kCausal});
    // short_wgs: unmasked plain problems whose query rows pad less to 64 * short_wgs rows (the query
    // sizes below it and one short of twice it; the key sizes at 6 rows short of one such tile), and
    // causal ones up to short_masked_max_seqlen_k keys (every size here). d 256's masked short tiles
    // (short_wgs its own consumer_wgs) run causal ones and unmasked ones up to short_full_max_seqlen_k.
    if (c.short_wgs > 0)
      rows.push_back({c.head_dim, 64 * c.short_wgs, c.short_block_n, false,
                      c.short_masked_max_seqlen_k > 0 ? std::nullopt : std::optional<Mask>(Mask::kNone), 0,
                      64 * c.short_wgs - 6});
    // Clusters of two CTAs: unmasked plain problems from cluster_min_seqlen_k keys whose query blocks
    // pair up (two blocks here, the second 6 rows short).
    if (c.cluster_min_seqlen_k > 0)
      rows.push_back({c.head_dim, 0, c.block_n, false, Mask::kNone,
                      (c.cluster_min_seqlen_k + c.block_n - 1) / c.block_n * c.block_n, 2 * c.block_m - 6});
  }
  std::vector<FwdCase> v;
  std::vector<std::string> seen;
  uint64_t seed = 16000;
  int i = 0;
  auto add = [&](const Sizes& r, Pair s, Mask m) {
    FwdCase c = mk(kDtypes[i % 2], 1, s, i % 3 ? Heads{6, 2} : Heads{9, 9}, r.d, m, seed++);
    if (r.transform) c.softcap = 30.0f;
    ++i;
    const std::string key = c.name();
    for (const std::string& k : seen)
      if (k == key) return;
    seen.push_back(key);
    v.push_back(c);
  };
  for (const Sizes& r : rows) {
    for (const bool keys : {false, true}) {
      const int64_t k = keys ? r.block_n : r.block_m;
      if (k == 0) continue;
      for (int64_t n : {k - 1, k, k + 1, 2 * k - 1, 2 * k + 1}) {
        if (n < 1) continue;
        const Pair s = keys ? Pair{r.queries, r.keys_from + n} : Pair{n, 97};
        add(r, s, r.only.value_or(n % 2 ? Mask::kNone : Mask::kCausal));
      }
    }
  }
  return v;
}

// Test names: the case's name(), made unique within its list.
struct CaseName {
  std::vector<std::string> names;
  explicit CaseName(const std::vector<FwdCase>& cases) : names(unique_names(cases)) {}
  std::string operator()(const ::testing::TestParamInfo<FwdCase>& info) const { return names[info.index]; }
};

// Every list runs on both paths (names end in _sm80 / _sm90).
#define FC_GRID(tier, group, list)                                                   \
  INSTANTIATE_TEST_SUITE_P(group, tier, ::testing::ValuesIn(on_each_backend(list)), \
                           CaseName(on_each_backend(list)))

FC_GRID(Grid, Seqlens, smoke_seqlens());
FC_GRID(Grid, TileBoundaries, smoke_tiles());
FC_GRID(Grid, HeadDims, smoke_head_dims());
FC_GRID(Grid, Heads, smoke_heads());
FC_GRID(Grid, Masks, smoke_masks());
FC_GRID(Grid, Features, smoke_features());
FC_GRID(Grid, Varlen, smoke_varlen());

FC_GRID(FullGrid, Seqlens, full_seqlens());
FC_GRID(FullGrid, TileBoundaries, full_tiles());
FC_GRID(FullGrid, HeadDims, full_head_dims());
FC_GRID(FullGrid, BatchHeads, full_batch_heads());
FC_GRID(FullGrid, HeadDimV, full_head_dim_v());
FC_GRID(FullGrid, Alibi, full_alibi());
FC_GRID(FullGrid, Pairwise, full_pairwise());
FC_GRID(FullGrid, Persistent, full_persistent());
FC_GRID(FullGrid, CompiledTiles, full_compiled_tiles());

}  // namespace
}  // namespace flashcute::testing
