#include "trainer/cpu/models.hpp"

#include <utility>

namespace scalebench::trainer::cpu {

std::unique_ptr<Network> make_network(model::ModelDescription description, std::uint32_t seed,
                                      const OptimizerOptions& optimizer) {
  Dims input(description.input.begin(), description.input.end());
  return std::make_unique<Network>(std::move(description.graph), std::move(input), seed, optimizer);
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
