#include "trainer/model/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <variant>

namespace scalebench::trainer::model {

std::size_t parameter_count(const Op& op) {
  return std::visit(
      [](const auto& o) -> std::size_t {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Conv2d>) {
          const Conv2dOptions& c = o.options;
          const auto weights = static_cast<std::size_t>(c.out_channels) *
                               static_cast<std::size_t>(c.in_channels / c.groups) *
                               static_cast<std::size_t>(c.kernel[0] * c.kernel[1]);
          return weights + (c.bias ? static_cast<std::size_t>(c.out_channels) : 0);
        } else if constexpr (std::is_same_v<T, BatchNorm>) {
          return 2 * static_cast<std::size_t>(o.channels);
        } else if constexpr (std::is_same_v<T, Dense>) {
          return o.in * o.out + o.out;
        } else {
          return 0;
        }
      },
      op);
}

ParameterLayout parameter_layout(const Graph& graph) {
  ParameterLayout layout;
  for (const Node& node : graph.nodes()) {
    layout.offsets.push_back(layout.total);
    if (node.kind == Node::Kind::op) layout.total += parameter_count(node.op);
  }
  return layout;
}

namespace {

void draw_weights(std::span<float> weights, Init init, float fan_in, float fan_out,
                  std::mt19937& rng) {
  if (init == Init::he) {
    std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / fan_in));
    for (float& w : weights) w = normal(rng);
  } else {
    const float limit = std::sqrt(6.0f / (fan_in + fan_out));
    std::uniform_real_distribution<float> uniform(-limit, limit);
    for (float& w : weights) w = uniform(rng);
  }
}

}  // namespace

void initialize(const Op& op, std::span<float> parameters, std::mt19937& rng) {
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Conv2d>) {
          const Conv2dOptions& c = o.options;
          const auto receptive = static_cast<float>(c.kernel[0] * c.kernel[1]);
          const std::size_t bias = c.bias ? static_cast<std::size_t>(c.out_channels) : 0;
          const auto weights = parameters.first(parameters.size() - bias);
          draw_weights(weights, c.init, static_cast<float>(c.in_channels / c.groups) * receptive,
                       static_cast<float>(c.out_channels / c.groups) * receptive, rng);
          std::fill(parameters.begin() + static_cast<std::ptrdiff_t>(weights.size()),
                    parameters.end(), 0.0f);
        } else if constexpr (std::is_same_v<T, Dense>) {
          if (o.init == Init::he) {
            std::normal_distribution<float> normal(0.0f,
                                                   std::sqrt(2.0f / static_cast<float>(o.in)));
            for (float& w : parameters.first(o.in * o.out)) w = normal(rng);
          } else {
            const float limit = std::sqrt(6.0f / static_cast<float>(o.in + o.out));
            std::uniform_real_distribution<float> uniform(-limit, limit);
            for (float& w : parameters.first(o.in * o.out)) w = uniform(rng);
          }
          std::fill(parameters.begin() + static_cast<std::ptrdiff_t>(o.in * o.out),
                    parameters.end(), 0.0f);
        } else if constexpr (std::is_same_v<T, BatchNorm>) {
          const auto channels = static_cast<std::size_t>(o.channels);
          std::fill(parameters.begin(), parameters.begin() + static_cast<std::ptrdiff_t>(channels),
                    1.0f);
          std::fill(parameters.begin() + static_cast<std::ptrdiff_t>(channels), parameters.end(),
                    0.0f);
        }
      },
      op);
}

std::vector<float> initial_parameters(const Graph& graph, std::uint32_t seed) {
  const ParameterLayout layout = parameter_layout(graph);
  std::vector<float> parameters(layout.total, 0.0f);
  std::mt19937 rng(seed);
  const auto& nodes = graph.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind != Node::Kind::op) continue;
    const std::size_t n = parameter_count(nodes[i].op);
    initialize(nodes[i].op, std::span<float>(parameters).subspan(layout.offsets[i], n), rng);
  }
  return parameters;
}

}  // namespace scalebench::trainer::model
