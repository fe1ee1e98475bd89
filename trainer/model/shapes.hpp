// Shape inference on model::Graph: the output shape of every node for one input (batch left out),
// by the rules every backend implements (the CPU's oneDNN descriptors, the CUDA layers' shapes).
// The model zoo takes its dense layers' widths from here instead of computing them by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/model/ops.hpp"

namespace scalebench::trainer::model {

// {features} or {channels, height, width}.
using Shape = std::vector<std::int64_t>;

std::int64_t elements(const Shape& shape);
std::string shape_text(const Shape& shape);  // "8x14x14"

// The output shape of node `index` of `graph` from the shapes of the nodes before it. Throws
// std::invalid_argument naming the node and the operation when the inputs do not fit (a window
// larger than the padded input, channel counts that differ, a dense width that is not the
// flattened input's).
Shape infer_node(const Graph& graph, std::size_t index, const std::vector<Shape>& shapes);

// Every node's output shape (node 0: `input`).
std::vector<Shape> infer_shapes(const Graph& graph, const Shape& input);

}  // namespace scalebench::trainer::model
