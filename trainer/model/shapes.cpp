#include "trainer/model/shapes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <type_traits>
#include <variant>

namespace scalebench::trainer::model {
namespace {

// Output extent of a window of `kernel` with `stride` over `size` padded by begin and end
// (floor, as oneDNN and cuDNN).
std::int64_t extent(std::int64_t size, int kernel, int stride, int begin, int end) {
  const std::int64_t padded = size + begin + end;
  if (padded < kernel)
    throw std::invalid_argument(
        fmt::format("kernel {} is larger than the padded input {}", kernel, padded));
  return (padded - kernel) / stride + 1;
}

void require_image(const Shape& s) {
  if (s.size() != 3)
    throw std::invalid_argument(fmt::format("needs a CxHxW input, got {}", shape_text(s)));
}

Shape window(const Shape& in, std::int64_t channels, const Pair& kernel, const Pair& stride,
             const Pair& padding, const Pair& padding_end) {
  require_image(in);
  return {channels, extent(in[1], kernel[0], stride[0], padding[0], padding_end[0]),
          extent(in[2], kernel[1], stride[1], padding[1], padding_end[1])};
}

}  // namespace

std::int64_t elements(const Shape& shape) {
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  return n;
}

std::string shape_text(const Shape& shape) { return fmt::format("{}", fmt::join(shape, "x")); }

Shape infer_node(const Graph& graph, std::size_t index, const std::vector<Shape>& shapes) {
  const Node& node = graph.nodes().at(index);
  const auto in = [&](std::size_t k) -> const Shape& {
    return shapes.at(static_cast<std::size_t>(node.inputs.at(k)));
  };
  try {
    switch (node.kind) {
      case Node::Kind::input:
        throw std::invalid_argument("only node 0 is the input");
      case Node::Kind::add:
        if (in(0) != in(1))
          throw std::invalid_argument(fmt::format("add of {} and {}: the shapes differ",
                                                  shape_text(in(0)), shape_text(in(1))));
        return in(0);
      case Node::Kind::concat: {
        Shape out = in(0);
        require_image(out);
        for (std::size_t k = 1; k < node.inputs.size(); ++k) {
          require_image(in(k));
          if (in(k)[1] != out[1] || in(k)[2] != out[2])
            throw std::invalid_argument(fmt::format("concat of {} and {}: H and W differ",
                                                    shape_text(out), shape_text(in(k))));
          out[0] += in(k)[0];
        }
        return out;
      }
      case Node::Kind::op:
        break;
    }
    const Shape& x = in(0);
    return std::visit(
        [&](const auto& o) -> Shape {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, Conv2d>) {
            const Conv2dOptions& c = o.options;
            require_image(x);
            if (x[0] != c.in_channels)
              throw std::invalid_argument(
                  fmt::format("expects {} channels, got {}", c.in_channels, shape_text(x)));
            return window(x, c.out_channels, c.kernel, c.stride, c.padding, c.padding_end);
          } else if constexpr (std::is_same_v<T, Pool2d>) {
            const Pool2dOptions& p = o.options;
            require_image(x);
            return window(x, x[0], p.kernel, p.stride, p.padding, p.padding_end);
          } else if constexpr (std::is_same_v<T, GlobalAvgPool>) {
            require_image(x);
            return {x[0], 1, 1};
          } else if constexpr (std::is_same_v<T, BatchNorm>) {
            if (x.empty() || x[0] != o.channels)
              throw std::invalid_argument(
                  fmt::format("expects {} channels, got {}", o.channels, shape_text(x)));
            return x;
          } else if constexpr (std::is_same_v<T, Flatten>) {
            return {elements(x)};
          } else if constexpr (std::is_same_v<T, Dense>) {
            if (elements(x) != static_cast<std::int64_t>(o.in))
              throw std::invalid_argument(
                  fmt::format("expects {} features, got {}", o.in, shape_text(x)));
            return {static_cast<std::int64_t>(o.out)};
          } else {
            static_assert(std::is_same_v<T, Eltwise> || std::is_same_v<T, Dropout>);
            return x;
          }
        },
        node.op);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format(
        "graph node {} ({}): {}", index,
        node.kind == Node::Kind::op ? op_name(node.op) : std::string_view("add/concat"), e.what()));
  }
}

std::vector<Shape> infer_shapes(const Graph& graph, const Shape& input) {
  std::vector<Shape> shapes = {input};
  for (std::size_t i = 1; i < graph.nodes().size(); ++i)
    shapes.push_back(infer_node(graph, i, shapes));
  return shapes;
}

}  // namespace scalebench::trainer::model
