// trainer/cpu/optimizer.cpp: seven steps of each optimizer against torch.optim (float32 on both
// sides; tests/data/trainer/torch_layers.txt). Tolerance |ours − torch| ≤ 2e-5·(1 + |torch|):
// both compute in float32 with the same formulas, so only operation order differs (a few ulps
// per step, compounded over seven steps).
#include <doctest/doctest.h>

#include "layer_harness.hpp"
#include "trainer/cpu/optimizer.hpp"
#include "trainer/errors.hpp"

using namespace scalebench::trainer;
using namespace scalebench::trainer::cpu::test;

namespace {

void compare_optimizer(const std::string& name, OptimizerOptions o) {
  const RefCase& c = reference_case("optimizer_" + name);
  std::vector<float> w = c.at("w0").values;
  const RefTensor& grads = c.at("grads");
  auto optimizer = cpu::make_optimizer(o, w.size());
  for (std::size_t s = 0; s < static_cast<std::size_t>(grads.dims[0]); ++s) {
    optimizer->step(w, std::span<const float>(grads.values).subspan(s * w.size(), w.size()), o.lr);
  }
  check_close(name, w, c.at("w").values, 2e-5);
}

OptimizerOptions options(const std::string& name, double lr, double momentum = 0,
                         double weight_decay = 0) {
  OptimizerOptions o;
  o.name = name;
  o.lr = lr;
  o.momentum = momentum;
  o.weight_decay = weight_decay;
  return o;
}

}  // namespace

TEST_CASE("SGD, momentum and Nesterov match torch.optim.SGD") {
  compare_optimizer("sgd", options("sgd", 0.1));
  compare_optimizer("momentum", options("sgd", 0.1, 0.9));
  compare_optimizer("nesterov", options("nesterov", 0.1));
}

TEST_CASE("Adadelta matches torch.optim.Adadelta, with and without weight decay") {
  compare_optimizer("adadelta", options("adadelta", 1.0));
  compare_optimizer("adadelta_wd", options("adadelta", 1.0, 0, 0.1));
}

TEST_CASE("RMSprop, Adam and RAdam match torch.optim") {
  compare_optimizer("rmsprop", options("rmsprop", 0.01));
  compare_optimizer("adam", options("adam", 0.01));
  compare_optimizer("adam_wd", options("adam", 0.01, 0, 0.1));
  compare_optimizer("radam", options("radam", 0.01));
}

TEST_CASE("an unknown optimizer is a usage error naming the available ones") {
  CHECK_THROWS_WITH_AS(cpu::make_optimizer(options("lamb", 0.1), 3), doctest::Contains("adadelta"),
                       UsageError);
}
