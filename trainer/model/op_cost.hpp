// What each node of a model::Graph costs per training step, backend-neutral: the arithmetic of
// the products (convolutions, dense layers) and the bytes the other operations must move at
// least. The per-operation profile (--profile-ops, trainer/op_profile.hpp) divides these by the
// measured times to give achieved FLOP/s or bytes/s. docs/trainer.md defines both counts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trainer/model/ops.hpp"
#include "trainer/model/shapes.hpp"

namespace scalebench::trainer::model {

struct OpCost {
  // Multiply-adds count 2 (PyTorch's FlopCounterMode, bench/model_flops.py); 0 for operations
  // that are not products.
  double forward_flops = 0.0;
  double backward_flops = 0.0;  // the input gradient (unless the input is the model's) + weights
  // Tensors read and written once each, at `element_bytes` per value; 0 for products.
  double forward_bytes = 0.0;
  double backward_bytes = 0.0;
  // One line naming the operation and its shapes, equal for nodes that cost the same
  // ("conv2d 3x3/1 64x56x56 -> 64x56x56"), so a profile can add them up.
  std::string signature;
};

// Node i's cost for a batch of `batch` images whose one-image shapes are `shapes`
// (infer_shapes). Node 0, the input, costs nothing.
std::vector<OpCost> op_costs(const Graph& graph, const std::vector<Shape>& shapes,
                             std::size_t batch, std::size_t element_bytes);

}  // namespace scalebench::trainer::model
