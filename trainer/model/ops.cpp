#include "trainer/model/ops.hpp"

#include <fmt/format.h>

namespace scalebench::trainer::model {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

std::string_view op_name(const Op& op) {
  return std::visit(Overloaded{
                        [](const Conv2d&) -> std::string_view { return "conv2d"; },
                        [](const Pool2d&) -> std::string_view { return "pool2d"; },
                        [](const GlobalAvgPool&) -> std::string_view { return "global_avg_pool"; },
                        [](const BatchNorm& b) -> std::string_view {
                          return b.relu ? "batch_norm_relu" : "batch_norm";
                        },
                        [](const Eltwise& e) -> std::string_view {
                          switch (e.activation) {
                            case Activation::relu:
                              return "relu";
                            case Activation::relu6:
                              return "relu6";
                            case Activation::tanh:
                              return "tanh";
                          }
                          return "eltwise";
                        },
                        [](const Dropout&) -> std::string_view { return "dropout"; },
                        [](const Flatten&) -> std::string_view { return "flatten"; },
                        [](const Dense&) -> std::string_view { return "dense"; },
                    },
                    op);
}

int Graph::append(Node node) {
  const int index = static_cast<int>(nodes_.size());
  for (int i : node.inputs) {
    if (i < 0 || i >= index) {
      throw std::invalid_argument(
          fmt::format("graph node {} reads node {}, which does not come before it", index, i));
    }
  }
  nodes_.push_back(std::move(node));
  return index;
}

int Graph::op(int from, Op op) {
  Node node;
  node.kind = Node::Kind::op;
  node.op = std::move(op);
  node.inputs = {from};
  return append(std::move(node));
}

int Graph::add(int a, int b) {
  Node node;
  node.kind = Node::Kind::add;
  node.inputs = {a, b};
  return append(std::move(node));
}

int Graph::concat(std::vector<int> inputs) {
  if (inputs.empty()) throw std::invalid_argument("concat needs at least one input");
  Node node;
  node.kind = Node::Kind::concat;
  node.inputs = std::move(inputs);
  return append(std::move(node));
}

}  // namespace scalebench::trainer::model
