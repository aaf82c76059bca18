#pragma once
// Compile-time types of the SM90 forward for one (element, tile config): the two wgmma TiledMMAs,
// GMMA shared-memory layouts, the TMA copy types, the pipelines and the shared-storage struct.

#include <cute/tensor.hpp>  // first: the atom headers below expect the core CuTe headers before them
#include <cute/arch/copy_sm90.hpp>  // stmatrix
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/atom/copy_traits_sm90.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cutlass/fast_math.h>  // FastDivmod
#include <cutlass/numeric_types.h>
#include <cutlass/pipeline/sm90_pipeline.hpp>

#include "common/fwd_params.h"
#include "common/softmax.cuh"
#include "sm90/roles.h"
#include "sm90/tile_config.h"

namespace flashcute::sm90 {

// The largest K-major GMMA swizzle atom whose width divides d (16-bit elements): 128-byte rows for
// d % 64 == 0, 64-byte rows for d 96.
template <class Element, int kHeadDim>
constexpr auto gmma_k_major_atom() {
  using namespace cute;
  if constexpr (kHeadDim % 64 == 0) return GMMA::Layout_K_SW128_Atom<Element>{};
  else if constexpr (kHeadDim % 32 == 0) return GMMA::Layout_K_SW64_Atom<Element>{};
  else return GMMA::Layout_K_SW32_Atom<Element>{};
}

template <class Element_, FwdTileConfig C>
struct FwdTraits {
  using Element = Element_;
  static constexpr int kHeadDim = C.head_dim;
  static constexpr int kBlockM = C.block_m;
  static constexpr int kBlockN = C.block_n;
  static constexpr int kStages = C.stages;
  static constexpr int kConsumerWgs = C.consumer_wgs;
  static constexpr int kConsumerThreads = kConsumerWgs * kWarpgroupThreads;
  static constexpr int kThreads = C.threads();
  static constexpr bool kOverlap = C.overlap;
  static constexpr bool kPingPong = C.pingpong;
  static constexpr bool kPersistent = C.persistent;
  static constexpr bool kLptGrid = C.masked_tile_group > 0 && !C.persistent;  // 1-D grid in TileOrder
  static constexpr bool kWgRelease = C.wg_release;  // one empty-barrier arrival per consumer warpgroup
  static constexpr bool kWgKeyBlocks = C.wg_key_blocks;  // each warpgroup runs its own rows' key blocks only
  // CTAs per cluster (adjacent query blocks of one head sharing every K/V block by TMA multicast).
  static constexpr int kCluster = C.cluster;
  using ClusterShape = cute::Shape<cute::Int<kCluster>, cute::_1, cute::_1>;
  // Polynomial degree for the FMA-unit exp2s: P is rounded to Element next, so bf16 (8-bit mantissa)
  // needs less than fp16 (11 bits).
  static constexpr SoftmaxPolicy kSoftmaxPolicy{C.exp2_poly_every,
                                                std::is_same_v<Element, cutlass::bfloat16_t> ? 3 : 4,
                                                C.rescale_threshold, C.fused_exp2,
                                                local_max_check_choice() && C.overlap};
  static_assert(kBlockM == 64 * kConsumerWgs, "each consumer warpgroup owns 64 query rows");
  static_assert(kConsumerWgs >= 2 && kConsumerWgs <= kMaxConsumerWgs, "2 to 4 consumer warpgroups (roles.h budgets)");
  static_assert(producer_regs(kConsumerWgs) + kConsumerWgs * consumer_regs(kConsumerWgs) <=
                    (kConsumerWgs + 1) * launch_regs(kConsumerWgs),
                "register budget: setmaxnreg cannot hand out more than the CTA launched with");
  static_assert(!kPingPong || kOverlap, "ping-pong needs the overlapped loop");
  static_assert(!kWgKeyBlocks || (kOverlap && !kPingPong),
                "per-warpgroup key blocks: the overlapped loop, no ping-pong");
  // (On the TileOrder grid with groups of one head, which unmasked problems get, tiles 2i and 2i + 1
  // are adjacent query blocks of one head, as on the 3-D grid.)
  static_assert(kCluster == 1 || (kCluster == 2 && !kPersistent && !kWgKeyBlocks),
                "clusters: two CTAs, the non-persistent kernel");
#if !defined(CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED)
  static_assert(kBlockN % 32 == 0, "wgmma N shapes that are not multiples of 32 need CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED");
#endif
  static_assert(kHeadDim % 16 == 0 && kBlockN % 16 == 0 && kBlockN <= 256 && kHeadDim <= 256, "bad tile config");

  using BlockM = cute::Int<kBlockM>;
  using BlockN = cute::Int<kBlockN>;
  using HeadDim = cute::Int<kHeadDim>;

  // S = Q K^T: both operands K-major in smem. O += P V: P from registers, V^T (d, block_n) is
  // MN-major in smem (d contiguous). Consumer warpgroups stacked along M.
  using WgLayout = cute::Layout<cute::Shape<cute::Int<kConsumerWgs>, cute::_1, cute::_1>>;
  // kQRegs (the config's q_regs): Q from registers instead, loaded once per tile. Two forms. The
  // short tiles' (short_q_regs: persistent, overlapped, O in its own smem, no speculative exps, which
  // read Q from smem) frees Q's space after the tile's first S. kQRegsKeepSq (main_q_regs: any
  // overlapped kernel) keeps sQ until the release it would have without Q in registers, so the
  // speculative exps' recompute may still read it.
  static constexpr bool kQRegsKeepSq = C.q_regs && C.q_regs_keep_sq && kOverlap;
  static constexpr bool kQRegs = kQRegsKeepSq || (C.q_regs && kOverlap && kPersistent && !C.spec_exp);
  static constexpr bool kQRegsFree = kQRegs && !kQRegsKeepSq;  // Q's space freed after the first S
  template <int kN>
  using QKOp = std::conditional_t<
      kQRegs, decltype(cute::GMMA::rs_op_selector<Element, Element, float, cute::Shape<cute::_64, cute::Int<kN>, HeadDim>>()),
      decltype(cute::GMMA::ss_op_selector<Element, Element, float, cute::Shape<cute::_64, cute::Int<kN>, HeadDim>>())>;
  // S over the first kCols keys of a block (kBlockN: TiledMmaQK).
  template <int kCols>
  using TiledMmaQKCols = decltype(cute::make_tiled_mma(QKOp<kCols>{}, WgLayout{}));
  using TiledMmaQK = TiledMmaQKCols<kBlockN>;
  // kQRegs: smem -> registers of Q in the wgmma A fragment's layout (ldmatrix, 8 x 8 tiles).
  using SmemCopyQ = decltype(cute::make_tiled_copy_A(cute::Copy_Atom<cute::SM75_U32x4_LDSM_N, Element>{}, TiledMmaQK{}));
  using TiledMmaPV = decltype(cute::make_tiled_mma(
      cute::GMMA::rs_op_selector<Element, Element, float, cute::Shape<cute::_64, HeadDim, BlockN>, cute::GMMA::Major::K,
                                 cute::GMMA::Major::MN>(),
      WgLayout{}));

  using SmemAtom = decltype(gmma_k_major_atom<Element, kHeadDim>());
  using SmemLayoutQ = decltype(cute::tile_to_shape(SmemAtom{}, cute::Shape<BlockM, HeadDim>{}));
  using SmemLayoutK =
      decltype(cute::tile_to_shape(SmemAtom{}, cute::Shape<BlockN, HeadDim, cute::Int<kStages>>{}));
  using SmemLayoutV = SmemLayoutK;
  // V seen as (d, block_n, stage): the same bytes, transposed coordinates.
  using SmemLayoutVt = decltype(cute::composition(
      SmemLayoutV{}, cute::make_ordered_layout(cute::Shape<HeadDim, BlockN, cute::Int<kStages>>{},
                                               cute::Step<cute::_2, cute::_1, cute::_3>{})));
  // Persistent: O gets its own smem when it fits (227 KB per CTA), so Q's space is freed before the
  // epilogue (after the last P V, or with kEarlyQ after the last S = Q K^T) and the next tile's Q
  // loads under it. Where the whole of O does not fit but half of its columns do (d 256's masked
  // short tiles: 192 KB of Q and K/V, + 32 KB), O goes out in kOChunks column chunks through a
  // buffer of one chunk (kSplitO; FLASHCUTE_SM90_FWD_SPLIT_O=0 turns it off). Otherwise (d 192, the
  // other d 256 kernels) O is staged in Q's space, freed after the epilogue.
  static constexpr int64_t kOBytes = int64_t(kBlockM) * kHeadDim * 2;
  static constexpr bool kFullO = kPersistent && C.tile_smem_bytes() + kOBytes <= 227 * 1024;
  static constexpr bool kSplitO = FLASHCUTE_SM90_FWD_SPLIT_O != 0 && kPersistent && !kFullO && kHeadDim % 128 == 0 &&
                                  C.tile_smem_bytes() + kOBytes / 2 <= 227 * 1024;
  static constexpr bool kSeparateO = kFullO || kSplitO;
  static constexpr int kOChunks = kSplitO ? 2 : 1;
  static constexpr int kOCols = kHeadDim / kOChunks;  // columns of O per chunk
  using OCols = cute::Int<kOCols>;
  // O's staging tile (BM, kOCols): Q's layout when O is staged in Q's space or in one chunk.
  using SmemLayoutO = decltype(cute::tile_to_shape(SmemAtom{}, cute::Shape<BlockM, OCols>{}));
  // One consumer warpgroup's 64 rows of sO, the source of its TMA store: rows [64 c, 64 c + 64) of
  // SmemLayoutO start at element SmemLayoutO(64 c, 0) (whole swizzle atoms of 8 rows, so the swizzle
  // leaves that offset alone) and have this layout, the (BM, kOCols) layout restricted to its first
  // 64 rows.
  using SmemLayoutOWg = decltype(cute::composition(
      SmemLayoutO{}, cute::Layout<cute::Shape<cute::_64, OCols>, cute::Stride<cute::_1, BlockM>>{}));
  // kWarpStore (tile_config.h's warp_store; ping-pong kernels only): the source of one consumer
  // warp's TMA store, its 16 rows [64 c + 16 w, +16) of sO (two whole swizzle atoms: the same
  // restriction).
  static constexpr bool kWarpStore = C.warp_store && C.pingpong;
  using SmemLayoutOWarp = decltype(cute::composition(
      SmemLayoutO{}, cute::Layout<cute::Shape<cute::_16, OCols>, cute::Stride<cute::_1, BlockM>>{}));
  using OTmaRows = cute::Int<kWarpStore ? 16 : 64>;
  using SmemLayoutOTma = std::conditional_t<kWarpStore, SmemLayoutOWarp, SmemLayoutOWg>;
  // O's accumulator seen one chunk at a time: wgmma's C fragment of 64 x d lists its columns in
  // 8-column groups, so chunk j is the contiguous slice [j, j + 1) x size / kOChunks of acc_o, laid
  // out as the fragment of a 64 x kOCols product. Only its layouts are used (the epilogue's
  // register -> smem copy); no wgmma of this shape runs.
  using TiledMmaOChunk = decltype(cute::make_tiled_mma(
      cute::GMMA::rs_op_selector<Element, Element, float, cute::Shape<cute::_64, OCols, BlockN>, cute::GMMA::Major::K,
                                 cute::GMMA::Major::MN>(),
      WgLayout{}));
  // Q's space freed after a tile's last S = Q K^T rather than its last P V (fwd_kernel.cuh): the
  // overlapped loop with O in its own smem, not with per-warpgroup key ranges except where O is
  // split (the plain loop and those ranges spilled 48 and 8 bytes at d 64 with the extra compare).
  // (kQRegsFree frees Q's space after the tile's first S instead.)
  static constexpr bool kEarlyQ = C.early_q_release && kSeparateO && kOverlap && (!kWgKeyBlocks || kSplitO) && !kQRegsFree;
  static_assert(!kQRegsFree || kSeparateO, "Q in registers: O needs its own smem (Q's space is freed after the first S)");
  // Q in per-warpgroup slices (tile_config.h's FLASHCUTE_SM90_FWD_WG_Q): the persistent kernels with
  // per-warpgroup key blocks and the whole of O in its own smem (Q's space is freed after each
  // warpgroup's last P V, not at the early release). kMirrorRows: every second tile of a CTA hands
  // rows 64 (W - 1 - c) to consumer warpgroup c. kQSlots: Q's full and empty barriers.
  static constexpr bool kWgQ = FLASHCUTE_SM90_FWD_WG_Q != 0 && kWgKeyBlocks && kPersistent && kFullO && !kEarlyQ;
  static constexpr bool kMirrorRows = kWgQ && FLASHCUTE_SM90_FWD_WG_Q == 2;
  static constexpr int kQSlots = kWgQ ? kConsumerWgs : 1;
  // The overlapped loop's last P V runs under the rows' factors and LSE (kEarlyRows) and, with O in
  // its own smem, the epilogue's first WAR wait on it (kEarlyWar); tile_config.h's
  // FLASHCUTE_SM90_FWD_EARLY_ROWS / _EARLY_WAR. Not with ping-pong: there that work competes for
  // issue slots with the other warpgroup's last softmax (session 33: d 128 non-causal 512 0.958 and
  // 0.983 with both, 0.982 with the rows alone). Not with four consumer warpgroups either (112
  // registers: d 64's short tiles spilled 4 bytes with P's registers still held by the P V).
  static constexpr bool kEarlyRows =
      FLASHCUTE_SM90_FWD_EARLY_ROWS != 0 && kOverlap && !kPingPong && kConsumerWgs < 4;
  static constexpr bool kEarlyWar = FLASHCUTE_SM90_FWD_EARLY_WAR != 0 && kOverlap && !kPingPong && kSeparateO;
  // The persistent instantiation's tile index by the launcher's fast divisions (the row's fast_decode).
  static constexpr bool kFastDecode = kPersistent && C.fast_decode;
  // The overlapped loop's exps before the block max (the row's spec_exp; fwd_kernel.cuh,
  // OnlineSoftmax::update_speculative). Not with clusters (one empty-barrier arrival per warp).
  static constexpr bool kSpecExp = C.spec_exp && kOverlap && kCluster == 1;
  // With kSpecExp, the interior key blocks' check from the row sums of p instead of the block max
  // (OnlineSoftmax::update_sum_check; tile_config.h, sum_check_choice).
  static constexpr bool kSumCheck = kSpecExp && sum_check_choice();
  // A warpgroup's first key block's S as half a block where its rows see none of the block's second
  // half (the row's half_first; fwd_kernel.cuh): the persistent overlapped kernels, a block_n whose
  // half is a wgmma N.
  static constexpr bool kHalfFirst = C.half_first && kOverlap && kPersistent && kBlockN % 32 == 0;
  // S = Q K^T over the first block_n / 2 keys: its accumulator is the first half of S's registers
  // (wgmma's C fragment lists its columns in 8-column groups), and its K operand the same smem
  // descriptors as S's (K-major: a narrower N reads fewer of the same 8-row core matrices).
  using TiledMmaQKHalf = TiledMmaQKCols<kBlockN / 2>;

  // The plain loop's first key block in 64-key parts (FLASHCUTE_SM90_FWD_DIAG_PARTS, tile_config.h):
  // a warpgroup whose 64 rows see none of that block's last parts (a causal diagonal's upper rows,
  // a ragged last block) computes S (TiledMmaQKCols<64 j>, the same K descriptors), the softmax
  // and P V (the first 4 j of its k-blocks) over the j parts it sees only.
  static constexpr int kDiagParts = FLASHCUTE_SM90_FWD_DIAG_PARTS != 0 && !kOverlap && kBlockN % 64 == 0 ? kBlockN / 64 : 1;

  // Gmem tensors as TMA sees them: (rows, d, heads, batch); varlen has one "batch" of packed rows.
  using ShapeT = cute::Shape<int32_t, int32_t, int32_t, int32_t>;
  using StrideT = cute::Stride<int64_t, cute::_1, int64_t, int64_t>;
  using GmemTensor = decltype(cute::make_tensor(cute::make_gmem_ptr(static_cast<const Element*>(nullptr)), ShapeT{},
                                                StrideT{}));
  // Q's TMA box: the tile, or (kWgQ) one warpgroup's 64 rows, which start at element SmemLayoutQ(64 c, 0)
  // of sQ and are laid out as SmemLayoutQWg (as O's rows are in sO).
  using SmemLayoutQWg = decltype(cute::composition(
      SmemLayoutQ{}, cute::Layout<cute::Shape<cute::_64, HeadDim>, cute::Stride<cute::_1, BlockM>>{}));
  using QTmaRows = cute::Int<kWgQ ? 64 : kBlockM>;
  using SmemLayoutQTma = std::conditional_t<kWgQ, SmemLayoutQWg, SmemLayoutQ>;
  using TmaQ = decltype(cute::make_tma_copy(cute::SM90_TMA_LOAD{}, GmemTensor{}, SmemLayoutQTma{},
                                            cute::Shape<QTmaRows, HeadDim>{}, cute::_1{}));
  // K and V: with clusters, each CTA loads 1/kCluster of a block and multicasts it to the cluster.
  using TmaKVOp = std::conditional_t<(kCluster > 1), cute::SM90_TMA_LOAD_MULTICAST, cute::SM90_TMA_LOAD>;
  using TmaKV = decltype(cute::make_tma_copy(TmaKVOp{}, GmemTensor{}, cute::take<0, 2>(SmemLayoutK{}),
                                             cute::Shape<BlockN, HeadDim>{}, cute::Int<kCluster>{}));
  // O out of smem by TMA, one store per consumer warpgroup (64 rows; kWarpStore: per warp, 16 rows)
  // and chunk: the store writes only what lies inside the tensor map's extents (rows < seqlen_q,
  // columns < head_dim_v).
  using GmemTensorO =
      decltype(cute::make_tensor(cute::make_gmem_ptr(static_cast<Element*>(nullptr)), ShapeT{}, StrideT{}));
  using TmaO = decltype(cute::make_tma_copy(cute::SM90_TMA_STORE{}, GmemTensorO{}, SmemLayoutOTma{},
                                            cute::Shape<OTmaRows, OCols>{}, cute::_1{}));
  // Where TMA cannot store a warpgroup's rows, smem -> gmem of O by 128-bit copies: 16 bytes per
  // thread per access; one swizzle-atom row (64 or 32 elements) per kThreadsPerRow threads, so a
  // warp reads whole 16-byte chunks that the swizzle keeps contiguous.
  static constexpr int kAtomWidth = kOCols % 64 == 0 ? 64 : 32;
  static constexpr int kThreadsPerRow = kAtomWidth / 8;
  using GmemCopyOut = decltype(cute::make_tiled_copy(
      cute::Copy_Atom<cute::UniversalCopy<cute::uint128_t>, Element>{},
      cute::Layout<cute::Shape<cute::Int<kWarpgroupThreads / kThreadsPerRow>, cute::Int<kThreadsPerRow>>,
                   cute::Stride<cute::Int<kThreadsPerRow>, cute::_1>>{},
      cute::Layout<cute::Shape<cute::_1, cute::_8>>{}));

  // Registers -> smem of O (the epilogue): stmatrix (8 x 8 tiles of 16-bit elements, one 16-byte row
  // address per lane), 8 stores per thread at d 128 where element-wise 32-bit copies compiled to 32
  // generic 64-bit stores, each with its own swizzled address (session 24, docs/perf-notes.md). Not
  // in the persistent kernels that stage O in Q's space (d 256), where stmatrix's operands spilled
  // 12 bytes.
  using SmemCopyAtomO = std::conditional_t<kPersistent && !kSeparateO,
                                           cute::AutoVectorizingCopyWithAssumedAlignment<32>,
                                           cute::SM90_U32x4_STSM_N>;

  static constexpr uint32_t kTmaBytesQ = QTmaRows::value * kHeadDim * sizeof(Element);  // one Q load
  static constexpr uint32_t kTmaBytesKV = kBlockN * kHeadDim * sizeof(Element);

  using Pipeline = cutlass::PipelineTmaAsync<kStages>;
  using PipelineState = typename Pipeline::PipelineState;

  using OStorage = std::conditional_t<kSeparateO, cute::array_aligned<Element, cute::cosize_v<SmemLayoutO>, 1024>,
                                      cute::array<Element, 0>>;
  struct SharedStorage {
    // Operand tiles first: GMMA descriptors and 128-byte swizzles want 1024-byte aligned atoms.
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutQ>, 1024> q;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutK>, 1024> k;
    alignas(1024) cute::array_aligned<Element, cute::cosize_v<SmemLayoutV>, 1024> v;
    [[no_unique_address]] OStorage o;  // empty unless kSeparateO
    alignas(8) uint64_t barrier_q[kQSlots];        // Q (kWgQ: warpgroup c's slice) landed (TMA transaction bytes)
    alignas(8) uint64_t barrier_q_empty[kQSlots];  // persistent: consumers are done with Q's space (slice)
    alignas(8) uint64_t barrier_tile_full[2];   // persistent: the producer wrote tile_id[i]
    alignas(8) uint64_t barrier_tile_empty[2];  // persistent: every consumer thread read tile_id[i]
    int tile_id[2];                             // persistent: the next tiles' TileOrder indices
    typename Pipeline::SharedStorage pipeline_k;
    typename Pipeline::SharedStorage pipeline_v;
#if FLASHCUTE_SM90_FWD_TIMELINE
    long long timeline_q[4];  // probe builds (kWgQ): the producer's issue of each Q slice, this tile
#endif
  };
  static constexpr int64_t kSmemBytes = sizeof(SharedStorage);
  static constexpr int64_t kTileSmemBytes = C.tile_smem_bytes() + (kSeparateO ? kOBytes / kOChunks : 0);
  static_assert(kSmemBytes >= kTileSmemBytes && kSmemBytes <= kTileSmemBytes + 1024,
                "tile_config.h's smem formula disagrees with the layouts");

  // Kernel parameters: the plain forward params and the four TMA descriptors (and the shapes the
  // descriptors were built for, which the device side needs to rebuild the coordinate tensors).
  struct Params {
    FwdParams p;
    ShapeT shape_q, shape_k, shape_v, shape_o;
    TmaQ tma_q;
    TmaKV tma_k;
    TmaKV tma_v;
    TmaO tma_o;
    bool tma_store_o = false;  // tma_o addresses O (else every tile's O goes out by 128-bit copies)
    int tile_group = 1;  // persistent or LPT grid: batch x head indices per TileOrder group
    // kFastDecode: TileOrder's divisors (group x query blocks, group, heads), set by the launcher.
    cutlass::FastDivmod div_per_group{}, div_group{}, div_heads{};
    // Persistent: the dynamic scheduler's counter of tiles handed out beyond the first gridDim.x
    // (the caller's workspace: zero at the launch, by the launcher's reset or the caller's promise,
    // and left zero by the launch's last claim); null: the static deal.
    int* tile_counter = nullptr;
#if FLASHCUTE_SM90_FWD_TIMELINE
    // Probe builds only (tile_config.h): clock64 stamps, kTimelineSlots per (CTA, CTA-local tile).
    unsigned long long* timeline = nullptr;
#endif
  };
};

}  // namespace flashcute::sm90
