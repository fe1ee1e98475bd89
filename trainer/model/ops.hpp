// The backend-neutral description of a model: plain operation structs in a variant, and a graph
// of them (chains, residual adds, channel concatenations). No oneDNN, no CUDA: every backend
// lowers this (trainer/cpu/network.cpp, trainer/cuda/network.cpp), and an operation a backend
// does not handle is a compile error in its std::visit. Parameter layout and initial values:
// parameters.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <variant>
#include <vector>

namespace scalebench::trainer::model {

// Two spatial extents (height, width).
using Pair = std::array<int, 2>;

// He normal before a ReLU, Glorot (Keras's default) uniform otherwise.
enum class Init { he, glorot };

struct Conv2dOptions {
  int in_channels = 1;
  int out_channels = 1;
  Pair kernel{3, 3};
  Pair stride{1, 1};
  Pair padding{0, 0};      // top, left
  Pair padding_end{0, 0};  // bottom, right (differs from padding for Keras 'same' with stride 2)
  int groups = 1;          // in_channels == groups == out_channels/k: depthwise
  bool bias = true;
  bool relu = false;  // ReLU fused (Keras's activation='relu')
  Init init = Init::glorot;
};

// Symmetric padding p on both sides and both axes.
inline Conv2dOptions conv2d(int in, int out, int kernel, int stride = 1, int padding = 0,
                            int groups = 1) {
  Conv2dOptions o;
  o.in_channels = in;
  o.out_channels = out;
  o.kernel = {kernel, kernel};
  o.stride = {stride, stride};
  o.padding = {padding, padding};
  o.padding_end = {padding, padding};
  o.groups = groups;
  return o;
}

enum class PoolKind { max, average, average_exclude_padding };

struct Pool2dOptions {
  PoolKind kind = PoolKind::max;
  Pair kernel{2, 2};
  Pair stride{2, 2};
  Pair padding{0, 0};
  Pair padding_end{0, 0};
};

enum class Activation { relu, relu6, tanh };

// ---- the operations ----

struct Conv2d {
  Conv2dOptions options;
};
struct Pool2d {
  Pool2dOptions options;
};
// Average over all of H×W: N×C×H×W → N×C×1×1.
struct GlobalAvgPool {};
// Batch normalization per channel (PyTorch's conventions), its ReLU fused when `relu`.
struct BatchNorm {
  int channels = 0;
  float epsilon = 1e-5f;
  float momentum = 0.1f;
  bool relu = false;
};
struct Eltwise {
  Activation activation = Activation::relu;
};
// Inverted dropout; `seed` keys its masks (dropout_mask.hpp).
struct Dropout {
  float rate = 0.5f;
  std::uint64_t seed = 0;
};
// N×C×H×W → N×(C·H·W) in PyTorch's (channel-major) order.
struct Flatten {};
// y = x·W + b, W stored in × out (Keras's kernel layout), then b.
struct Dense {
  std::size_t in = 0;
  std::size_t out = 0;
  Init init = Init::glorot;
};

using Op = std::variant<Conv2d, Pool2d, GlobalAvgPool, BatchNorm, Eltwise, Dropout, Flatten, Dense>;

// The name a backend reports for an operation ("conv2d", "batch_norm_relu", ...).
std::string_view op_name(const Op& op);

// A node: the model's input (node 0), an operation on one node, the sum of two nodes, or the
// channel concatenation of several.
struct Node {
  enum class Kind { input, op, add, concat };
  Kind kind = Kind::input;
  Op op{};                  // Kind::op only
  std::vector<int> inputs;  // indices of earlier nodes
};

// Built node by node in topological order; the last node gives the logits.
class Graph {
 public:
  Graph() { nodes_.emplace_back(); }  // node 0: the input
  static constexpr int input = 0;
  // Appends a node and returns its index; inputs must be earlier nodes.
  int op(int from, Op op);
  int add(int a, int b);
  int concat(std::vector<int> inputs);
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  int append(Node node);
  std::vector<Node> nodes_;
};

}  // namespace scalebench::trainer::model
