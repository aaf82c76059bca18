#pragma once
// Warp roles, register budgets and named-barrier ids of the warp-specialized SM90 kernels: the one
// place these numbers live.

#include <cstdint>

namespace flashcute::sm90 {

inline constexpr int kWarpgroupThreads = 128;

// Warpgroup 0 produces (TMA), warpgroups 1.. consume (wgmma + softmax).
enum class WarpgroupRole : int { kProducer = 0, kConsumer = 1 };

// setmaxnreg budgets (multiples of 8) by the number of consumer warpgroups; the CTA's 64K registers
// are split as (producer + wgs * consumer) * 128 <= 65536: 2 consumers 24 + 2 * 240 = 504,
// 3 consumers 32 + 3 * 160 = 512.
constexpr uint32_t producer_regs(int consumer_wgs) { return consumer_wgs == 2 ? 24 : 32; }
constexpr uint32_t consumer_regs(int consumer_wgs) { return consumer_wgs == 2 ? 240 : 160; }
inline constexpr int kMaxConsumerWgs = 3;

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
