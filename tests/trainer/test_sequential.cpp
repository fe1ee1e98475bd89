// trainer/cpu/sequential.cpp: the MLP's flat buffers, its full gradient and the SGD step.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "trainer/cpu/sequential.hpp"
#include "trainer/errors.hpp"

using namespace scalebench::trainer;

TEST_CASE("the default MLP has 101770 parameters, as in docs/trainer-output.md") {
  auto model = cpu::make_mlp(ModelSpec{}, SgdOptions{});
  CHECK(model->parameter_count() == 784 * 128 + 128 + 128 * 10 + 10);
  CHECK(model->parameter_count() == 101770);
  CHECK(model->layers().size() == 3);  // dense, relu, dense
}

TEST_CASE("same seed gives the same initial parameters and another seed others") {
  ModelSpec spec;
  spec.seed = 5;
  auto a = cpu::make_mlp(spec, {});
  auto b = cpu::make_mlp(spec, {});
  spec.seed = 6;
  auto c = cpu::make_mlp(spec, {});
  CHECK(std::equal(a->parameters().begin(), a->parameters().end(), b->parameters().begin()));
  CHECK_FALSE(std::equal(a->parameters().begin(), a->parameters().end(), c->parameters().begin()));
}

// The whole model's gradient (the layers composed through the flat buffers) against central
// differences of the batch-mean loss: h = 1e-3, tolerance 2e-3·max(1, |numeric|) (float rounding
// ε·|L|/h ≈ 1e-4). Every parameter, biases included, is drawn at random: with the zero biases
// of the real initialisation, a sample whose first-layer units are all off would put the next
// layer's pre-activations exactly on the ReLU kink, where the central difference is one-sided.
TEST_CASE("MLP gradient matches finite differences of the mean loss") {
  ModelSpec spec;
  spec.input_size = 6;
  spec.hidden = {5, 4};
  spec.classes = 3;
  spec.seed = 2;
  auto model = cpu::make_mlp(spec, {});
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  for (float& p : model->parameters()) p = 0.7f * normal(rng);
  const std::size_t batch = 4;
  std::vector<float> x(batch * spec.input_size);
  for (float& v : x) v = normal(rng);
  const std::vector<std::int32_t> labels = {0, 2, 1, 2};

  model->train_batch(x, labels, batch);
  const std::vector<float> analytic(model->gradients().begin(), model->gradients().end());
  std::span<float> params = model->parameters();
  const float h = 1e-3f;
  double worst = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const float saved = params[i];
    params[i] = saved + h;
    const double plus = model->evaluate(x, labels, batch).loss_sum / batch;
    params[i] = saved - h;
    const double minus = model->evaluate(x, labels, batch).loss_sum / batch;
    params[i] = saved;
    const double numeric = (plus - minus) / (2.0 * h);
    const double error = std::abs(numeric - analytic[i]) / std::max(1.0, std::abs(numeric));
    worst = std::max(worst, error);
    INFO("parameter " << i << ": analytic " << analytic[i] << ", numeric " << numeric);
    CHECK(error <= 2e-3);
  }
  MESSAGE("MLP: worst scaled error " << worst);
}

TEST_CASE("SGD step: plain and with momentum") {
  ModelSpec spec;
  spec.input_size = 2;
  spec.hidden = {2};
  spec.classes = 2;
  for (double momentum : {0.0, 0.5}) {
    auto model = cpu::make_mlp(spec, SgdOptions{0.1, momentum});
    const std::vector<float> before(model->parameters().begin(), model->parameters().end());
    std::fill(model->gradients().begin(), model->gradients().end(), 1.0f);
    model->optimizer_step();
    CHECK(model->parameters()[0] == doctest::Approx(before[0] - 0.1));
    model->optimizer_step();  // v = μ·1 + 1
    CHECK(model->parameters()[0] == doctest::Approx(before[0] - 0.1 - 0.1 * (1 + momentum)));
  }
}

TEST_CASE("a few SGD steps on one batch lower its loss") {
  ModelSpec spec;
  spec.input_size = 8;
  spec.hidden = {16};
  spec.classes = 4;
  auto model = cpu::make_mlp(spec, SgdOptions{0.1, 0.9});
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> x(32 * 8);
  for (float& v : x) v = normal(rng);
  std::vector<std::int32_t> labels(32);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % 4);
  const double first = model->train_batch(x, labels, 32).loss_sum;
  for (int i = 0; i < 50; ++i) {
    model->optimizer_step();
    model->train_batch(x, labels, 32);
  }
  CHECK(model->evaluate(x, labels, 32).loss_sum < 0.5 * first);
}

TEST_CASE("unknown models and empty layers are usage errors") {
  ModelSpec spec;
  spec.name = "cnn";
  CHECK_THROWS_AS(cpu::make_mlp(spec, {}), UsageError);
  spec.name = "mlp";
  spec.hidden = {0};
  CHECK_THROWS_AS(cpu::make_mlp(spec, {}), UsageError);
}

TEST_CASE("mnist_cnn has the Keras model's 1,199,882 parameters for 28x28x1 and 10 classes") {
  ModelSpec spec;
  spec.name = "mnist_cnn";
  auto model = cpu::make_model(spec, {});
  // conv 3·3·1·32+32, conv 3·3·32·64+64, dense 9216·128+128, dense 128·10+10
  CHECK(model->parameter_count() == 320 + 18496 + 1179776 + 1290);
  CHECK(model->parameter_count() == 1199882);
  CHECK(model->layers().size() == 9);
}
