// trainer/cpu/network.cpp: the flat buffers, whole-model gradients (chains, residual adds,
// concats, a node read twice) against finite differences, the SGD step, the gradients-ready hook.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "layer_harness.hpp"
#include "trainer/cpu/models.hpp"
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
  cpu::test::check_gradient(
      "MLP", model->parameters(), analytic,
      [&] { return model->evaluate(x, labels, batch).loss_sum / batch; }, 1e-3f, 2e-3);
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
  CHECK_THROWS_AS(cpu::make_model(spec, {}), UsageError);
  spec.name = "mlp";
  spec.hidden = {0};
  CHECK_THROWS_AS(cpu::make_mlp(spec, {}), UsageError);
}

namespace {

// A graph with every kind of node and every way of sharing one: conv → BN → tanh (read by a conv
// and by the residual add), add, tanh (read by a conv and by the concat), concat, x + x, average
// pooling, flatten, dense. Input 2×6×6, 3 classes. tanh, not ReLU: central differences across a
// ReLU kink are one-sided (the fused BN+ReLU is checked exactly against BN then ReLU in
// test_layers.cpp).
model::Graph branching_graph() {
  using namespace model;
  Graph g;
  const int c1 = g.op(Graph::input, Conv2d{conv2d(2, 4, 3, 1, 1)});
  const int norm = g.op(c1, BatchNorm{4});
  const int bn = g.op(norm, Eltwise{Activation::tanh});
  const int c2 = g.op(bn, Conv2d{conv2d(4, 4, 3, 1, 1)});
  const int sum = g.add(c2, bn);
  const int relu = g.op(sum, Eltwise{Activation::tanh});
  const int c3 = g.op(relu, Conv2d{conv2d(4, 2, 1)});
  const int cat = g.concat({relu, c3});
  const int twice = g.add(cat, cat);
  Pool2dOptions pool;
  pool.kind = PoolKind::average;
  const int p = g.op(twice, Pool2d{pool});
  const int flat = g.op(p, Flatten{});
  g.op(flat, Dense{6 * 3 * 3, 3, Init::glorot});
  return g;
}

}  // namespace

// The whole graph's gradient against central differences of the training-mode batch-mean loss
// (batch statistics, so the loss comes from train_batch): h = 1e-3, tolerance
// 2e-3·max(1, |numeric|), every parameter drawn at random as in the MLP test.
TEST_CASE("a branching graph's gradient matches finite differences of the mean loss") {
  cpu::Network model(branching_graph(), {2, 6, 6}, 3, SgdOptions{});
  CHECK(model.nodes().size() == 13);
  std::mt19937 rng(4);
  std::normal_distribution<float> normal;
  for (float& p : model.parameters()) p = 0.5f * normal(rng);
  const std::size_t batch = 3;
  std::vector<float> x(batch * 2 * 6 * 6);
  for (float& v : x) v = normal(rng);
  const std::vector<std::int32_t> labels = {2, 0, 1};

  model.train_batch(x, labels, batch);
  const std::vector<float> analytic(model.gradients().begin(), model.gradients().end());
  cpu::test::check_gradient(
      "branching graph", model.parameters(), analytic,
      [&] { return model.train_batch(x, labels, batch).loss_sum / batch; }, 1e-3f, 2e-3);
}

TEST_CASE("gradients-ready offsets fall to 0 and the gradients above them are final") {
  cpu::Network model(branching_graph(), {2, 6, 6}, 3, SgdOptions{});
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> x(4 * 2 * 6 * 6);
  for (float& v : x) v = normal(rng);
  const std::vector<std::int32_t> labels = {0, 1, 2, 0};
  std::vector<std::size_t> offsets;
  std::vector<std::vector<float>> snapshots;
  model.set_gradients_ready([&](std::size_t offset) {
    offsets.push_back(offset);
    snapshots.emplace_back(model.gradients().begin() + static_cast<std::ptrdiff_t>(offset),
                           model.gradients().end());
  });
  model.train_batch(x, labels, 4);
  // One call per layer with parameters: dense, conv 1×1, conv, batch norm, conv.
  const std::size_t dense = 54 * 3 + 3, c3 = 4 * 2 + 2, c2 = 4 * 4 * 9 + 4, bn = 8,
                    c1 = 2 * 4 * 9 + 4;
  const std::size_t total = c1 + bn + c2 + c3 + dense;
  REQUIRE(model.parameter_count() == total);
  CHECK(offsets == std::vector<std::size_t>{total - dense, total - dense - c3, c1 + bn, c1, 0});
  for (std::size_t k = 0; k < offsets.size(); ++k) {
    const std::vector<float> final_values(
        model.gradients().begin() + static_cast<std::ptrdiff_t>(offsets[k]),
        model.gradients().end());
    CHECK(snapshots[k] == final_values);
  }
}

TEST_CASE("graphs that read a later node or leave a node unused are rejected") {
  model::Graph g;
  CHECK_THROWS_AS(g.add(0, 3), std::invalid_argument);
  const int a = g.op(model::Graph::input, model::Flatten{});
  g.op(model::Graph::input, model::Dense{4, 2, model::Init::glorot});  // a is never used
  (void)a;
  CHECK_THROWS_AS(cpu::Network(std::move(g), {4}, 1, SgdOptions{}), std::invalid_argument);
}

TEST_CASE("dropout's mask follows the logical NCHW index, not the blocked layout oneDNN chose") {
  // conv → dropout → flatten → dense against conv → flatten → dropout → dense: flatten keeps the
  // channel-major order, so logical element i is the same element in both, and the two networks
  // must drop the same elements, whatever blocked format (nChw8c, nChw16c) the convolution's
  // output has on this CPU. The cuda backend hashes the same logical indices.
  auto build = [](bool dropout_first) {
    model::Graph g;
    int x = g.op(model::Graph::input, model::Conv2d{model::conv2d(3, 16, 3, 1, 1)});
    if (dropout_first) x = g.op(x, model::Dropout{0.5f, 99u});
    x = g.op(x, model::Flatten{});
    if (!dropout_first) x = g.op(x, model::Dropout{0.5f, 99u});
    g.op(x, model::Dense{16 * 8 * 8, 4, model::Init::glorot});
    return cpu::Network(std::move(g), cpu::Dims{3, 8, 8}, 7, SgdOptions{});
  };
  cpu::Network before_flatten = build(true);
  cpu::Network after_flatten = build(false);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> images(5 * 3 * 8 * 8);
  for (float& v : images) v = normal(rng);
  const std::vector<std::int32_t> labels{0, 1, 2, 3, 1};
  for (int step = 0; step < 2; ++step) {  // two calls: two different masks
    CAPTURE(step);
    const BatchStats a = before_flatten.train_batch(images, labels, 5);
    const BatchStats b = after_flatten.train_batch(images, labels, 5);
    CHECK(a.loss_sum == b.loss_sum);
    CHECK(std::equal(before_flatten.gradients().begin(), before_flatten.gradients().end(),
                     after_flatten.gradients().begin()));
  }
  // And the mask is not trivial: without dropout the loss differs.
  model::Graph g;
  int x = g.op(model::Graph::input, model::Conv2d{model::conv2d(3, 16, 3, 1, 1)});
  x = g.op(x, model::Flatten{});
  g.op(x, model::Dense{16 * 8 * 8, 4, model::Init::glorot});
  cpu::Network plain(std::move(g), cpu::Dims{3, 8, 8}, 7, SgdOptions{});
  CHECK(plain.train_batch(images, labels, 5).loss_sum !=
        before_flatten.train_batch(images, labels, 5).loss_sum);
}
