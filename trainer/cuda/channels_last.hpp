// --memory-format channels_last: activations stored N×H×W×C on the GPU (cuDNN's NHWC, PyTorch's
// torch.channels_last), the layout cuDNN's tensor-core kernels read without transposing, and
// each convolution's weights stored K×R×S×(C/g) to match. What the rest of the program sees
// stays the CPU's: the flat parameters and gradients a host asks for are in model::
// parameter_layout's order (K×(C/g)×R×S), the batch arrives N×C×H×W, a flattened tensor is in
// channel-major order and dropout drops the CPU's elements. The index arithmetic is in
// nhwc_index.hpp (host and device code); the weight reordering here is testable without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "trainer/cuda/nhwc_index.hpp"
#include "trainer/model/ops.hpp"

namespace scalebench::trainer::cuda {

enum class Layout { nchw, nhwc };

// One convolution's weights in the flat parameter buffer: K×(C/g)×R×S floats from `offset`.
struct ConvWeights {
  std::size_t offset = 0;
  int k = 0, c = 0, r = 0, s = 0;  // c: input channels per group
  std::size_t count() const {
    return static_cast<std::size_t>(k) * static_cast<std::size_t>(c) * static_cast<std::size_t>(r) *
           static_cast<std::size_t>(s);
  }
};

// Every convolution's weight block of `graph` (model::parameter_layout's offsets).
std::vector<ConvWeights> conv_weight_blocks(const model::Graph& graph);

// In place: K×C×R×S → K×R×S×C for every block (host order to device order), and back.
void weights_to_channels_last(std::span<float> flat, const std::vector<ConvWeights>& blocks);
void weights_from_channels_last(std::span<float> flat, const std::vector<ConvWeights>& blocks);

}  // namespace scalebench::trainer::cuda
