// The parameters of a model::Graph: how many each operation has, where each node's start in the
// one flat buffer (node order: the layout every backend and the gradient allreduce share), and
// their initial values. Layouts per operation are PyTorch's: conv weights (out, in/groups, kh, kw)
// then bias; dense W (in × out, Keras's kernel) then bias; batch norm gamma then beta.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "trainer/model/ops.hpp"

namespace scalebench::trainer::model {

std::size_t parameter_count(const Op& op);

struct ParameterLayout {
  std::vector<std::size_t> offsets;  // node i's first parameter (its count: parameter_count)
  std::size_t total = 0;
};
ParameterLayout parameter_layout(const Graph& graph);

// Draws one operation's initial parameters from `rng` into `parameters` (parameter_count(op)
// floats): conv and dense weights He normal (std √(2/fan_in)) or Glorot uniform
// (±√(6/(fan_in + fan_out))) with fan_in = in/groups·kh·kw, zero biases; batch norm gamma 1,
// beta 0. The values of every release so far for the same seed.
void initialize(const Op& op, std::span<float> parameters, std::mt19937& rng);

// Every node's parameters in node order, from one std::mt19937 seeded `seed`.
std::vector<float> initial_parameters(const Graph& graph, std::uint32_t seed);

}  // namespace scalebench::trainer::model
