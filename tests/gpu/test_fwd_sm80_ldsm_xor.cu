// Host-side check of the SM80 forward's ldmatrix addressing (sm80/utils.cuh's LdsmXorSource): for
// every tile config, operand (Q, K, V^T) and thread, the address of every element of every ldmatrix
// copy equals the one CuTe computes for the same partition of the swizzled tile. It needs no GPU
// (CuTe layouts are evaluated on the host), so it runs everywhere.

#include <gtest/gtest.h>

#include <cstdint>

#include "sm80/fwd_traits.cuh"
#include "sm80/utils.cuh"

namespace flashcute::sm80 {
namespace {

using namespace cute;

template <class Element, class SmemLayout, class TiledCopy>
void check_operand(const char* name, const TiledCopy& tiled_copy, int threads) {
  // A fake tile base: only offsets are compared, and an unaligned base shows that both sides are
  // tile-relative.
  Element* tile = reinterpret_cast<Element*>(uintptr_t{1} << 20) + 8;
  for (int t = 0; t < threads; ++t) {
    auto thr = tiled_copy.get_thread_slice(t);
    using Src = LdsmXorSource<Element, SmemLayout, decltype(thr)>;
    const Src src{tile, Src::thread_offset(thr, tile)};
    Tensor ref = thr.partition_S(make_tensor(make_smem_ptr(tile), SmemLayout{}));  // (CPY, CPY_M, CPY_K)
    for (int m = 0; m < size<1>(ref); ++m) {
      for (int k = 0; k < size<2>(ref); ++k) {
        Tensor mine = src(m, k);
        ASSERT_EQ(size(mine), size<0>(ref));
        for (int c = 0; c < size(mine); ++c) {
          ASSERT_EQ(&mine(c) - tile, &ref(c, m, k) - tile) << name << " thread " << t << " copy (" << m << ", " << k
                                                          << ") element " << c;
        }
      }
    }
  }
}

template <FwdTileConfig C>
void check_config() {
  using Tr = FwdTraits<cutlass::bfloat16_t, C>;
  using E = typename Tr::Element;
  typename Tr::TiledMma mma;
  check_operand<E, typename Tr::SmemLayoutQ>("Q", make_tiled_copy_A(typename Tr::SmemCopyAtom{}, mma), Tr::kThreads);
  check_operand<E, typename Tr::SmemLayoutKV>("K", make_tiled_copy_B(typename Tr::SmemCopyAtom{}, mma), Tr::kThreads);
  check_operand<E, typename Tr::SmemLayoutVt>("Vt", make_tiled_copy_B(typename Tr::SmemCopyAtomVt{}, mma), Tr::kThreads);
}

TEST(Sm80FwdLdsmXor, EveryTileConfig) {
  check_config<kFwdTileConfigs[0]>();
  check_config<kFwdTileConfigs[1]>();
  check_config<kFwdTileConfigs[2]>();
  check_config<kFwdTileConfigs[3]>();
  check_config<kFwdTileConfigs[4]>();
  check_config<kFwdTileConfigs[5]>();
  check_config<kFwdTileConfigs[6]>();
  check_config<kFwdTileConfigs[7]>();
  check_config<kFwdTileConfigs[8]>();
  check_config<kFwdTileConfigs[9]>();
  static_assert(sizeof(kFwdTileConfigs) / sizeof(kFwdTileConfigs[0]) == 10, "add the new rows above");
}

// The d 128 shapes the A/B macros select (tile_config.h): block_n 32, 48 and 64, one or two stages.
TEST(Sm80FwdLdsmXor, D128BlockN) {
  check_config<FwdTileConfig{128, false, 128, 32, 4, 2}>();
  check_config<FwdTileConfig{128, false, 128, 48, 4, 2}>();
  check_config<FwdTileConfig{128, false, 128, 64, 4, 2}>();
  check_config<FwdTileConfig{128, false, 128, 64, 4, 1}>();
}

}  // namespace
}  // namespace flashcute::sm80
