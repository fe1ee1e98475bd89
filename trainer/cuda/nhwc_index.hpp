// The index arithmetic of channels-last tensors, for host and device code (cuda_kernels.cu is
// compiled as C++17 by nvcc, so this header keeps to what both compilers take).
#pragma once

#include <cstdint>

#include "trainer/model/dropout_mask.hpp"  // SCALEBENCH_HOST_DEVICE

namespace scalebench::trainer::cuda {

// The N×C×H×W index of the element stored at `position` of an N×H×W×C tensor with `channels`
// channels and `plane` = H·W.
SCALEBENCH_HOST_DEVICE std::uint64_t nchw_index_of_nhwc(std::uint64_t position,
                                                        std::uint64_t channels,
                                                        std::uint64_t plane) {
  const std::uint64_t c = position % channels;
  const std::uint64_t pixel = (position / channels) % plane;
  const std::uint64_t n = position / (channels * plane);
  return (n * channels + c) * plane + pixel;
}

}  // namespace scalebench::trainer::cuda
