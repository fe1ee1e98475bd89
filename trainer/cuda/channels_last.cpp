#include "trainer/cuda/channels_last.hpp"

#include <stdexcept>

#include "trainer/model/parameters.hpp"

namespace scalebench::trainer::cuda {
namespace {

// Moves each block's K×C×R×S values to K×R×S×C (to_last) or back, through one scratch copy.
void reorder(std::span<float> flat, const std::vector<ConvWeights>& blocks, bool to_last) {
  std::vector<float> scratch;
  for (const ConvWeights& b : blocks) {
    if (b.offset + b.count() > flat.size())
      throw std::out_of_range("channels_last: a convolution's weights lie past the parameters");
    const std::span<float> w = flat.subspan(b.offset, b.count());
    scratch.assign(w.begin(), w.end());
    const auto kk = static_cast<std::size_t>(b.k), cc = static_cast<std::size_t>(b.c),
               rr = static_cast<std::size_t>(b.r), ss = static_cast<std::size_t>(b.s);
    for (std::size_t k = 0; k < kk; ++k)
      for (std::size_t c = 0; c < cc; ++c)
        for (std::size_t r = 0; r < rr; ++r)
          for (std::size_t s = 0; s < ss; ++s) {
            const std::size_t kcrs = ((k * cc + c) * rr + r) * ss + s;
            const std::size_t krsc = ((k * rr + r) * ss + s) * cc + c;
            if (to_last) {
              w[krsc] = scratch[kcrs];
            } else {
              w[kcrs] = scratch[krsc];
            }
          }
  }
}

}  // namespace

std::vector<ConvWeights> conv_weight_blocks(const model::Graph& graph) {
  const model::ParameterLayout layout = model::parameter_layout(graph);
  std::vector<ConvWeights> blocks;
  const std::vector<model::Node>& nodes = graph.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind != model::Node::Kind::op) continue;
    const auto* conv = std::get_if<model::Conv2d>(&nodes[i].op);
    if (conv == nullptr) continue;
    const model::Conv2dOptions& o = conv->options;
    // The weights come first in a convolution's parameters, then the bias (parameters.hpp).
    blocks.push_back(ConvWeights{layout.offsets[i], o.out_channels, o.in_channels / o.groups,
                                 o.kernel[0], o.kernel[1]});
  }
  return blocks;
}

void weights_to_channels_last(std::span<float> flat, const std::vector<ConvWeights>& blocks) {
  reorder(flat, blocks, true);
}

void weights_from_channels_last(std::span<float> flat, const std::vector<ConvWeights>& blocks) {
  reorder(flat, blocks, false);
}

}  // namespace scalebench::trainer::cuda
