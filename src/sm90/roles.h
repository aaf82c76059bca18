#pragma once
// Warp roles, register budgets and named-barrier ids of the warp-specialized SM90 kernels: the one
// place these numbers live.

#include <cstdint>

namespace flashcute::sm90 {

inline constexpr int kWarpgroupThreads = 128;

// Warpgroup 0 produces (TMA), warpgroups 1.. consume (wgmma + softmax).
enum class WarpgroupRole : int { kProducer = 0, kConsumer = 1 };

// setmaxnreg budgets (multiples of 8) by the number of consumer warpgroups. setmaxnreg moves
// registers within what the CTA was launched with (launch_regs per thread, a multiple of 8, times
// the threads), so producer + wgs * consumer <= (wgs + 1) * launch_regs: 2 consumers 24 + 2 * 240 =
// 504 <= 3 * 168, 3 consumers 32 + 3 * 160 = 512 <= 4 * 128, 4 consumers 24 + 4 * 112 = 472 <= 5 * 96
// (a larger request waits forever for registers that never free up).
constexpr uint32_t producer_regs(int consumer_wgs) { return consumer_wgs == 3 ? 32 : 24; }
constexpr uint32_t consumer_regs(int consumer_wgs) {
  return consumer_wgs == 2 ? 240 : (consumer_wgs == 3 ? 160 : 112);
}
// Registers per thread a CTA of `consumer_wgs` consumer warpgroups and one producer launches with:
// the 64K register file over its threads, rounded down to the allocation unit of 8.
constexpr uint32_t launch_regs(int consumer_wgs) {
  return (65536u / ((consumer_wgs + 1) * 128u)) / 8u * 8u;
}
inline constexpr int kMaxConsumerWgs = 4;

// Named barrier ids (0 is __syncthreads; ids below 8 are left to CUTLASS's reserved ones).
enum class NamedBarrierId : uint32_t {
  kEpilogue = 8,  // + consumer warpgroup index: one warpgroup's O tile is complete in smem
  kSchedule = 8 + kMaxConsumerWgs,  // + consumer warpgroup index: its turn to issue wgmma (ping-pong)
};

// bar.sync on a named barrier with `threads` participants.
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// bar.arrive: counts towards `threads` without waiting (the producer side of a named barrier).
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace flashcute::sm90
