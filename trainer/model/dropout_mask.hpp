// The dropout rule every backend follows, in one place for host and device code: the mask of
// call k of a dropout layer with seed s keeps element i (its logical N×C×H×W index) when the top
// 24 bits of splitmix64(key + i) are >= rate·2²⁴, with key = splitmix64(s ^ splitmix64(k)). So
// a run drops the same elements whatever the thread count, the ISA or the backend.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SCALEBENCH_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SCALEBENCH_HOST_DEVICE inline
#endif

namespace scalebench::trainer::model {

// Steele, Lea & Flood 2014 (SplitMix64's finaliser).
SCALEBENCH_HOST_DEVICE std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The key of call number `call` (0, 1, ...) of a dropout layer seeded `seed`.
SCALEBENCH_HOST_DEVICE std::uint64_t dropout_mask_key(std::uint64_t seed, std::uint64_t call) {
  return splitmix64(seed ^ splitmix64(call));
}

// rate·2²⁴ (in float arithmetic, as the backends always computed it) as the integer the top
// 24 bits are compared with.
SCALEBENCH_HOST_DEVICE std::uint32_t dropout_threshold(float rate) {
  return static_cast<std::uint32_t>(rate * 16777216.0f);
}

SCALEBENCH_HOST_DEVICE bool dropout_keeps(std::uint64_t key, std::uint64_t index,
                                          std::uint32_t threshold) {
  return static_cast<std::uint32_t>(splitmix64(key + index) >> 40) >= threshold;
}

}  // namespace scalebench::trainer::model
