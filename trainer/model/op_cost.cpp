#include "trainer/model/op_cost.hpp"

#include <fmt/format.h>

#include <type_traits>

namespace scalebench::trainer::model {
namespace {

std::string pair_text(const Pair& p) {
  return p[0] == p[1] ? fmt::format("{}", p[0]) : fmt::format("{}x{}", p[0], p[1]);
}

std::string op_details(const Op& op) {
  return std::visit(
      [](const auto& o) -> std::string {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Conv2d>) {
          const Conv2dOptions& c = o.options;
          return fmt::format(" {}x{}/{}{}", c.kernel[0], c.kernel[1], pair_text(c.stride),
                             c.groups > 1 ? fmt::format(" groups {}", c.groups) : "");
        } else if constexpr (std::is_same_v<T, Pool2d>) {
          const Pool2dOptions& p = o.options;
          return fmt::format(" {} {}x{}/{}", p.kind == PoolKind::max ? "max" : "avg", p.kernel[0],
                             p.kernel[1], pair_text(p.stride));
        } else {
          return "";
        }
      },
      op);
}

// The forward arithmetic of a product, per image: 2 per multiply-add.
double product_flops(const Op& op, const Shape& out) {
  if (const auto* conv = std::get_if<Conv2d>(&op)) {
    const Conv2dOptions& c = conv->options;
    return 2.0 * static_cast<double>(elements(out)) * (c.in_channels / c.groups) * c.kernel[0] *
           c.kernel[1];
  }
  if (const auto* dense = std::get_if<Dense>(&op)) {
    return 2.0 * static_cast<double>(dense->in) * static_cast<double>(dense->out);
  }
  return 0.0;
}

// Whether backward must read the operation's input or output values, besides the output's
// gradient: a ReLU, a pooling window's maximum or a batch norm's statistics do; an add, a copy,
// an average or a dropout mask (recomputed from its key) do not.
bool backward_reads_values(const Op& op) {
  return !(std::holds_alternative<Flatten>(op) || std::holds_alternative<GlobalAvgPool>(op) ||
           std::holds_alternative<Dropout>(op));
}

}  // namespace

std::vector<OpCost> op_costs(const Graph& graph, const std::vector<Shape>& shapes,
                             std::size_t batch, std::size_t element_bytes) {
  const std::vector<Node>& nodes = graph.nodes();
  std::vector<OpCost> costs(nodes.size());
  const double per_value = static_cast<double>(batch * element_bytes);
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    OpCost& cost = costs[i];
    const Shape& out = shapes.at(i);
    double in_values = 0.0;
    std::string in_text;
    for (const int k : node.inputs) {
      const Shape& in = shapes.at(static_cast<std::size_t>(k));
      in_values += static_cast<double>(elements(in));
      in_text += (in_text.empty() ? "" : " + ") + shape_text(in);
    }
    const auto out_values = static_cast<double>(elements(out));
    // The model's input needs no gradient: backward computes only the weights' (and reads less).
    const bool input_gradient = !(node.inputs.size() == 1 && node.inputs[0] == Graph::input);
    switch (node.kind) {
      case Node::Kind::op: {
        cost.signature = fmt::format("{}{} {} -> {}", op_name(node.op), op_details(node.op),
                                     in_text, shape_text(out));
        const double flops = product_flops(node.op, out) * static_cast<double>(batch);
        if (flops > 0) {
          cost.forward_flops = flops;
          cost.backward_flops = input_gradient ? 2 * flops : flops;
        } else {
          cost.forward_bytes = (in_values + out_values) * per_value;
          const double gradients = out_values + (input_gradient ? in_values : 0.0);
          cost.backward_bytes =
              (gradients + (backward_reads_values(node.op) ? in_values : 0.0)) * per_value;
        }
        break;
      }
      case Node::Kind::add:
        cost.signature = fmt::format("add {} -> {}", in_text, shape_text(out));
        cost.forward_bytes = (in_values + out_values) * per_value;
        cost.backward_bytes = (out_values + in_values) * per_value;
        break;
      case Node::Kind::concat:
        cost.signature = fmt::format("concat {} -> {}", in_text, shape_text(out));
        cost.forward_bytes = (in_values + out_values) * per_value;
        cost.backward_bytes = (out_values + in_values) * per_value;
        break;
      case Node::Kind::input:
        break;
    }
  }
  return costs;
}

}  // namespace scalebench::trainer::model
