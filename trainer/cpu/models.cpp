#include "trainer/cpu/models.hpp"

#include <type_traits>
#include <variant>

namespace scalebench::trainer::cpu {
namespace {

// One CPU layer per operation; a new operation without a case here does not compile.
std::unique_ptr<Layer> layer_of(const model::Op& op) {
  return std::visit(
      [](const auto& o) -> std::unique_ptr<Layer> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, model::Conv2d>) {
          return std::make_unique<Conv2d>(o.options);
        } else if constexpr (std::is_same_v<T, model::Pool2d>) {
          return std::make_unique<Pool2d>(o.options);
        } else if constexpr (std::is_same_v<T, model::GlobalAvgPool>) {
          return std::make_unique<GlobalAvgPool>();
        } else if constexpr (std::is_same_v<T, model::BatchNorm>) {
          return std::make_unique<BatchNorm>(o.channels, o.epsilon, o.momentum, o.relu);
        } else if constexpr (std::is_same_v<T, model::Eltwise>) {
          return std::make_unique<Eltwise>(o.activation);
        } else if constexpr (std::is_same_v<T, model::Dropout>) {
          return std::make_unique<Dropout>(o.rate, o.seed);
        } else if constexpr (std::is_same_v<T, model::Flatten>) {
          return std::make_unique<Flatten>();
        } else {
          static_assert(std::is_same_v<T, model::Dense>, "an operation the CPU cannot lower");
          return std::make_unique<Dense>(o.in, o.out, o.init);
        }
      },
      op);
}

}  // namespace

Graph lower(const model::Graph& description) {
  Graph graph;
  const auto& nodes = description.nodes();
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const model::Node& node = nodes[i];
    switch (node.kind) {
      case model::Node::Kind::op:
        graph.layer(node.inputs.at(0), layer_of(node.op));
        break;
      case model::Node::Kind::add:
        graph.add(node.inputs.at(0), node.inputs.at(1));
        break;
      case model::Node::Kind::concat:
        graph.concat(node.inputs);
        break;
      case model::Node::Kind::input:
        throw std::invalid_argument("a model graph has one input node, its first");
    }
  }
  return graph;
}

std::unique_ptr<Network> make_network(model::ModelDescription description, std::uint32_t seed,
                                      const OptimizerOptions& optimizer) {
  Dims input(description.input.begin(), description.input.end());
  return std::make_unique<Network>(lower(description.graph), std::move(input), seed, optimizer);
}

#define SCALEBENCH_CPU_MODEL(name)                                                          \
  std::unique_ptr<Network> name(const ModelSpec& spec, const OptimizerOptions& optimizer) { \
    return make_network(model::name(spec), spec.seed, optimizer);                           \
  }
SCALEBENCH_CPU_MODEL(make_mlp)
SCALEBENCH_CPU_MODEL(make_mnist_cnn)
SCALEBENCH_CPU_MODEL(make_lenet5)
SCALEBENCH_CPU_MODEL(make_vgg16)
SCALEBENCH_CPU_MODEL(make_resnet50)
SCALEBENCH_CPU_MODEL(make_inception_v3)
SCALEBENCH_CPU_MODEL(make_mobilenet_v2)
#undef SCALEBENCH_CPU_MODEL

std::unique_ptr<Network> make_model(const ModelSpec& spec, const OptimizerOptions& optimizer) {
  return make_network(model::describe_model(spec), spec.seed, optimizer);
}

const std::vector<std::string>& model_names() { return model::model_names(); }

}  // namespace scalebench::trainer::cpu
