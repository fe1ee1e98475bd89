// trainer/cpu/layers.cpp: every layer's backward against central finite differences.
//
// Tolerances. The layers compute in float, so a central difference (L(θ+h) − L(θ−h)) / 2h with
// L accumulated in double carries a rounding error of about ε_float·|L|/h ≈ 1e-7·|L|/h.
// - Dense is linear in x, W and b: the difference quotient has no truncation error; h = 1e-2
//   gives rounding ≈ 1e-5, checked with |analytic − numeric| ≤ 1e-3·max(1, |numeric|).
// - ReLU: inputs are kept ≥ 0.1 away from the kink and h = 1e-3, so no sample crosses it; the
//   function is then linear, same tolerance.
// - Softmax cross-entropy: smooth; h = 1e-2 leaves truncation error h²·|L'''|/6 ≈ 2e-5 and
//   rounding ≈ 1e-5; same tolerance 1e-3.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "trainer/cpu/layers.hpp"

using namespace scalebench::trainer::cpu;

namespace {

std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// L = Σ r ⊙ f(·): a scalar whose gradient w.r.t. the layer output is r.
double weighted_sum(const std::vector<float>& y, const std::vector<float>& r) {
  double sum = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
  return sum;
}

// Checks analytic[i] against the central difference of loss() when value[i] moves by ±h.
void check_gradient(const char* what, std::span<float> values, std::span<const float> analytic,
                    const std::function<double()>& loss, float h, double tolerance) {
  REQUIRE(values.size() == analytic.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float saved = values[i];
    values[i] = saved + h;
    const double plus = loss();
    values[i] = saved - h;
    const double minus = loss();
    values[i] = saved;
    const double numeric = (plus - minus) / (2.0 * static_cast<double>(h));
    const double error = std::abs(numeric - analytic[i]) / std::max(1.0, std::abs(numeric));
    worst = std::max(worst, error);
    INFO(what << "[" << i << "]: analytic " << analytic[i] << ", numeric " << numeric);
    CHECK(error <= tolerance);
  }
  MESSAGE(std::string(what) << ": worst scaled error " << worst);
}

}  // namespace

TEST_CASE("dense forward is x·W + b") {
  Dense dense(3, 2, Init::glorot);
  std::vector<float> params = {1, 2, 3, 4, 5, 6, /*bias*/ 0.5f, -1};  // W is 3×2, row-major
  std::vector<float> grads(params.size());
  dense.bind(params, grads);
  const std::vector<float> x = {1, 0, -1, 2, 1, 0};  // 2 rows
  std::vector<float> y(4);
  dense.forward(x, y, 2);
  // Row 0: [1,0,-1]·W = [1−5, 2−6] = [−4, −4]; row 1: [2,1,0]·W = [2+3, 4+4] = [5, 8].
  CHECK(y[0] == doctest::Approx(-3.5));
  CHECK(y[1] == doctest::Approx(-5));
  CHECK(y[2] == doctest::Approx(5.5));
  CHECK(y[3] == doctest::Approx(7));
}

TEST_CASE("dense backward matches finite differences for W, b and x") {
  std::mt19937 rng(7);
  const std::size_t batch = 3, in = 5, out = 4;
  Dense dense(in, out, Init::he);
  std::vector<float> params(dense.parameter_count()), grads(dense.parameter_count());
  dense.bind(params, grads);
  dense.init(rng);
  for (std::size_t j = in * out; j < params.size(); ++j) params[j] = 0.1f * static_cast<float>(j);
  std::vector<float> x = random_vector(batch * in, rng);
  const std::vector<float> r = random_vector(batch * out, rng);
  std::vector<float> y(batch * out), dx(batch * in);

  dense.forward(x, y, batch);
  dense.backward(x, y, r, dx, batch);
  const std::vector<float> analytic_params = grads;

  auto loss = [&] {
    dense.forward(x, y, batch);
    return weighted_sum(y, r);
  };
  check_gradient("dense dW,db", params, analytic_params, loss, 1e-2f, 1e-3);
  check_gradient("dense dx", x, dx, loss, 1e-2f, 1e-3);
}

TEST_CASE("dense backward skips dx when it is not wanted") {
  Dense dense(2, 2, Init::glorot);
  std::vector<float> params(6, 1.0f), grads(6);
  dense.bind(params, grads);
  const std::vector<float> x = {1, 2}, dy = {1, 1};
  std::vector<float> y(2);
  dense.backward(x, y, dy, {}, 1);
  CHECK(grads[0] == doctest::Approx(1));  // dW[0][0] = x0·dy0
  CHECK(grads[3] == doctest::Approx(2));  // dW[1][1] = x1·dy1
  CHECK(grads[4] == doctest::Approx(1));  // db
}

TEST_CASE("relu backward matches finite differences away from the kink") {
  std::mt19937 rng(3);
  const std::size_t batch = 4, features = 6;
  Relu relu(features);
  std::vector<float> x = random_vector(batch * features, rng);
  for (float& v : x) v = v >= 0 ? v + 0.1f : v - 0.1f;
  const std::vector<float> r = random_vector(batch * features, rng);
  std::vector<float> y(x.size()), dx(x.size());
  relu.forward(x, y, batch);
  relu.backward(x, y, r, dx, batch);
  auto loss = [&] {
    relu.forward(x, y, batch);
    return weighted_sum(y, r);
  };
  check_gradient("relu dx", x, dx, loss, 1e-3f, 1e-3);
}

TEST_CASE("softmax cross-entropy: probabilities, loss and gradient") {
  std::mt19937 rng(11);
  const std::size_t batch = 5, classes = 4;
  std::vector<float> logits = random_vector(batch * classes, rng, 2.0f);
  const std::vector<std::int32_t> labels = {0, 3, 1, 2, 3};
  std::vector<float> p(batch * classes), dlogits(batch * classes);

  const LossResult result = softmax_cross_entropy_forward(logits, labels, batch, classes, p);
  for (std::size_t r = 0; r < batch; ++r) {
    double sum = 0;
    for (std::size_t j = 0; j < classes; ++j) sum += p[r * classes + j];
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  }
  double expected = 0;
  for (std::size_t r = 0; r < batch; ++r) expected -= std::log(p[r * classes + labels[r]]);
  CHECK(result.loss_sum == doctest::Approx(expected).epsilon(1e-5));

  softmax_cross_entropy_backward(p, labels, batch, classes, dlogits);
  auto mean_loss = [&] {
    return softmax_cross_entropy_forward(logits, labels, batch, classes, p).loss_sum /
           static_cast<double>(batch);
  };
  check_gradient("softmax-CE dlogits", logits, dlogits, mean_loss, 1e-2f, 1e-3);
}

TEST_CASE("softmax cross-entropy is finite for huge logits and counts arg-max hits") {
  const std::vector<float> logits = {1000.0f, 0.0f, -1000.0f, 0.0f, 500.0f, 0.0f};
  const std::vector<std::int32_t> labels = {0, 0};
  std::vector<float> p(6);
  const LossResult result = softmax_cross_entropy_forward(logits, labels, 2, 3, p);
  CHECK(std::isfinite(result.loss_sum));
  CHECK(result.loss_sum == doctest::Approx(500.0));  // row 0 costs 0, row 1 costs 500
  CHECK(result.correct == 1);
}
