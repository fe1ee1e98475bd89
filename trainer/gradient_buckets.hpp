// Gradient fusion buckets over a flat buffer (Horovod's tensor fusion, PyTorch DDP's buckets):
// the gradients are reduced in a few large messages, one per bucket, rather than one huge or many
// tiny ones, and a bucket can be reduced while backward still computes the gradients before it.
// Header-only arithmetic, shared by the MPI reducer (distributed.cpp) and the NCCL one
// (cuda/nccl.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace scalebench::trainer {

// Horovod's default fusion threshold (HOROVOD_FUSION_THRESHOLD): 64 MiB.
inline constexpr std::size_t kDefaultFusionBytes = std::size_t{64} << 20;

// A half-open range [begin, end) of elements of the flat gradient buffer.
struct Bucket {
  std::size_t begin = 0, end = 0;
  bool operator==(const Bucket&) const = default;
};

// The buckets of a buffer of `elements` floats: contiguous ranges of bucket_bytes / sizeof(float)
// elements (at least one) cut from the END of the buffer toward the start, because backward
// finishes the last layers' gradients first. buckets[0] ends at `elements`; the last bucket
// starts at 0 and holds the remainder. No buckets for an empty buffer.
inline std::vector<Bucket> make_buckets(std::size_t elements, std::size_t bucket_bytes) {
  const std::size_t per_bucket = std::max<std::size_t>(1, bucket_bytes / sizeof(float));
  std::vector<Bucket> buckets;
  buckets.reserve((elements + per_bucket - 1) / per_bucket);
  for (std::size_t end = elements; end > 0;) {
    const std::size_t begin = end > per_bucket ? end - per_bucket : 0;
    buckets.push_back({begin, end});
    end = begin;
  }
  return buckets;
}

// How many buckets, counted from buckets[0], are complete once the gradients from `offset` to the
// end of the buffer are final: those with begin >= offset (a prefix, as the list runs backward).
inline std::size_t complete_buckets(std::span<const Bucket> buckets, std::size_t offset) {
  std::size_t count = 0;
  while (count < buckets.size() && buckets[count].begin >= offset) ++count;
  return count;
}

}  // namespace scalebench::trainer
