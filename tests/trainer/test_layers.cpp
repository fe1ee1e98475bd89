// trainer/cpu/layers.cpp: every layer's backward against central finite differences of
// L = Σ r ⊙ y (r fixed and random, so dL/dy = r), through the layer's oneDNN plan.
//
// Tolerance: |analytic − numeric| ≤ tol·max(1, |numeric|). The layers compute in float, so the
// central difference (L(θ+h) − L(θ−h)) / 2h, with L summed in double, carries a rounding error
// of about ε_float·Σ|r·y|/h.
// - Convolution, pooling, add, concat, flatten and dense are linear in each input (max pooling
//   and ReLU piecewise so): no truncation error. h = 1e-2, |L| ≲ 30: rounding ≈ 2e-4; tol 2e-3.
//   The seeds are fixed and no perturbation moves a ReLU input across 0 or changes a max-pool
//   winner (checked: the tests pass, and they are deterministic).
// - Batch norm (training statistics) is smooth but not linear: h = 1e-2 leaves truncation
//   h²·|L'''|/6 ≈ 1e-4; tol 2e-3.
// - Softmax cross-entropy: h = 1e-2, truncation ≈ 2e-5; tol 1e-3.
// Dropout is random, so it is checked by its defining identities instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "layer_harness.hpp"

using namespace scalebench::trainer::cpu;
using namespace scalebench::trainer::cpu::test;

namespace {

// Finite-difference check of dx and of the parameter gradients of `layer` on a random input.
void check_layer(const std::string& what, Layer& layer, const Dims& x_dims, std::uint32_t seed,
                 float h = 1e-2f, double tolerance = 2e-3, bool keep_from_kink = false) {
  std::mt19937 rng(seed);
  std::vector<float> x = random_vector(element_count(x_dims), rng);
  if (keep_from_kink) {
    for (float& v : x) v = v >= 0 ? v + 0.1f : v - 0.1f;
  }
  std::vector<float> params = random_vector(layer.parameter_count(), rng, 0.5f);
  std::vector<float> grads(params.size());
  layer.bind(params, grads);
  Harness harness(layer, x_dims, x);
  const std::vector<float> r = random_vector(element_count(harness.y_dims()), rng);
  harness.forward();
  const std::vector<float> dx = harness.backward(r);
  const std::vector<float> analytic = grads;
  const auto loss = [&] { return harness.loss(r); };
  check_gradient(what + " dx", x, dx, loss, h, tolerance);
  if (!params.empty()) check_gradient(what + " dparams", params, analytic, loss, h, tolerance);
}

}  // namespace

TEST_CASE("conv2d backward matches finite differences") {
  Conv2d plain(conv2d(3, 4, 3));
  check_layer("conv 3x3", plain, {2, 3, 6, 6}, 1);
  Conv2d strided(conv2d(4, 6, 3, 2, 1, 2));
  check_layer("conv stride 2 pad 1 groups 2", strided, {2, 4, 7, 7}, 2);
  Conv2dOptions dw = conv2d(3, 3, 3, 1, 1, 3);
  dw.bias = false;
  Conv2d depthwise(dw);
  check_layer("conv depthwise", depthwise, {2, 3, 5, 5}, 3);
  // 16 channels: big enough for oneDNN's blocked formats (aBcd8b) and their reorders. The fused
  // ReLU is not checked by differences (perturbations cross its kink in too many of the outputs
  // an input feeds); the next test checks it exactly against conv2d then ReLU instead.
  Conv2d blocked_linear(conv2d(16, 16, 3, 1, 1));
  check_layer("conv 16->16", blocked_linear, {2, 16, 5, 5}, 4);
}

namespace {

// A layer with a fused ReLU against the same layer without it, then ReLU applied by hand:
// forward, dx, the parameter gradients (same parameters, same input) and inference.
void check_fused_relu(const std::string& what, Layer& linear, Layer& fused, const Dims& xd,
                      unsigned seed, double tolerance) {
  std::mt19937 rng(seed);
  std::vector<float> x = random_vector(element_count(xd), rng);
  std::vector<float> p = random_vector(linear.parameter_count(), rng, 0.5f), g1(p.size()),
                     g2(p.size());
  linear.bind(p, g1);
  fused.bind(p, g2);
  Harness hl(linear, xd, x), hf(fused, xd, x);
  const std::vector<float> yl = hl.forward(), yf = hf.forward();
  const std::vector<float> r = random_vector(yl.size(), rng);
  std::vector<float> relu_y(yl.size()), masked_r(r.size());
  for (std::size_t i = 0; i < yl.size(); ++i) {
    relu_y[i] = std::max(yl[i], 0.0f);
    masked_r[i] = yl[i] > 0 ? r[i] : 0.0f;
  }
  check_close(what + " y", yf, relu_y, 1e-6);
  check_close(what + " dx", hf.backward(r), hl.backward(masked_r), tolerance);
  check_close(what + " dparams", g2, g1, tolerance);
  // Inference (batch norm: running statistics) keeps the ReLU.
  const std::vector<float> yi = hf.forward(false), yli = hl.forward(false);
  for (std::size_t i = 0; i < yi.size(); ++i) {
    CHECK(yi[i] == doctest::Approx(std::max(yli[i], 0.0f)));
  }
}

}  // namespace

TEST_CASE("conv2d with fused ReLU equals conv2d then ReLU, forward and backward") {
  Conv2dOptions o = conv2d(16, 16, 3, 1, 1);
  Conv2d linear(o);
  o.relu = true;
  Conv2d fused(o);
  check_fused_relu("fused relu", linear, fused, {2, 16, 5, 5}, 4, 1e-6);
}

TEST_CASE("2x2 max pooling of a blocked input (own loop) agrees with oneDNN's on a plain one") {
  // 12 channels: one full 8-channel block and one padded. A third of the inputs are zero (a
  // ReLU's output) so that windows tie, and the gradient must go to the window's first maximum.
  const Dims dims{2, 12, 6, 8};
  std::mt19937 rng(21);
  std::vector<float> x = random_vector(element_count(dims), rng);
  for (std::size_t i = 0; i < x.size(); i += 3) x[i] = 0.0f;
  for (std::size_t i = 1; i < x.size(); i += 7) x[i] = std::max(x[i], 0.0f);
  Pool2d pool(Pool2dOptions{});
  const memory::desc plain = plain_desc(dims);
  const memory::desc blocked(dims, memory::data_type::f32, memory::format_tag::aBcd8b);
  auto ref = pool.plan(plain);
  auto own = pool.plan(blocked);
  CHECK(own->dst_desc() ==
        memory::desc(ref->dst_desc().dims(), memory::data_type::f32, memory::format_tag::aBcd8b));
  const memory x_ref = wrap(plain, x.data()), x_own = make_memory(blocked);
  from_plain(x, x_own);
  const memory y_ref = make_memory(ref->dst_desc()), y_own = make_memory(own->dst_desc());
  ref->forward(x_ref, y_ref, true);
  own->forward(x_own, y_own, true);
  stream().wait();
  CHECK(to_plain(y_own) == to_plain(y_ref));
  const std::vector<float> r = random_vector(element_count(ref->dst_desc().dims()), rng);
  const memory dy_ref = make_memory(ref->dst_desc()), dy_own = make_memory(own->dst_desc());
  from_plain(r, dy_ref);
  from_plain(r, dy_own);
  const memory dx_ref = make_memory(plain), dx_own = make_memory(blocked);
  ref->backward(x_ref, y_ref, dy_ref, dx_ref);
  own->backward(x_own, y_own, dy_own, dx_own);
  stream().wait();
  CHECK(to_plain(dx_own) == to_plain(dx_ref));
}

TEST_CASE("pooling backward matches finite differences") {
  Pool2d max2(Pool2dOptions{});
  check_layer("maxpool 2x2", max2, {2, 3, 6, 6}, 5);
  Pool2d max3(Pool2dOptions{PoolKind::max, {3, 3}, {2, 2}, {1, 1}, {1, 1}});
  check_layer("maxpool 3x3 s2 p1", max3, {2, 2, 7, 7}, 6);
  Pool2d avg(Pool2dOptions{PoolKind::average, {3, 3}, {1, 1}, {1, 1}, {1, 1}});
  check_layer("avgpool include padding", avg, {2, 2, 5, 5}, 7);
  Pool2d avg_ex(Pool2dOptions{PoolKind::average_exclude_padding, {3, 3}, {2, 2}, {1, 1}, {1, 1}});
  check_layer("avgpool exclude padding", avg_ex, {2, 2, 7, 7}, 8);
  GlobalAvgPool global;
  check_layer("global avgpool", global, {2, 3, 4, 5}, 9);
}

TEST_CASE("batch norm backward matches finite differences of the training forward") {
  BatchNorm bn(3);
  check_layer("batch norm", bn, {4, 3, 3, 3}, 10);
  BatchNorm bn16(16);
  check_layer("batch norm 16 channels", bn16, {2, 16, 3, 3}, 11);
}

TEST_CASE("batch norm with fused ReLU equals batch norm then ReLU, forward and backward") {
  BatchNorm linear(16), fused(16, 1e-5f, 0.1f, true);
  CHECK(fused.kind() == "batch_norm_relu");
  check_fused_relu("fused bn relu", linear, fused, {4, 16, 3, 3}, 6, 1e-5);
}

TEST_CASE("tanh forward is std::tanh and its backward matches finite differences") {
  Eltwise tanh_layer(Activation::tanh);
  CHECK(tanh_layer.kind() == "tanh");
  check_layer("tanh", tanh_layer, {2, 3, 4, 4}, 16);
  std::vector<float> x{-3.0f, -0.5f, 0.0f, 0.25f, 2.0f, 9.0f};
  Harness h(tanh_layer, {6}, x);
  const std::vector<float> y = h.forward();
  for (std::size_t i = 0; i < x.size(); ++i)
    CHECK(y[i] == doctest::Approx(std::tanh(x[i])).epsilon(1e-6));
}

TEST_CASE("relu, relu6, flatten and dense backward match finite differences") {
  Eltwise relu(Activation::relu);
  check_layer("relu", relu, {2, 3, 4, 4}, 12, 1e-2f, 2e-3, true);
  Eltwise relu6(Activation::relu6);
  check_layer("relu6", relu6, {2, 3, 4, 4}, 13, 1e-2f, 2e-3, true);
  Flatten flatten;
  check_layer("flatten", flatten, {2, 3, 2, 2}, 14);
  Dense dense(5, 4, Init::he);
  check_layer("dense", dense, {3, 5}, 15);
}

TEST_CASE("dense forward is x·W + b") {
  Dense dense(3, 2, Init::glorot);
  std::vector<float> params = {1, 2, 3, 4, 5, 6, /*bias*/ 0.5f, -1};  // W is 3×2, row-major
  std::vector<float> grads(params.size());
  dense.bind(params, grads);
  std::vector<float> x = {1, 0, -1, 2, 1, 0};  // 2 rows
  Harness h(dense, {2, 3}, x);
  const std::vector<float> y = h.forward();
  // Row 0: [1,0,-1]·W = [1−5, 2−6] = [−4, −4]; row 1: [2,1,0]·W = [2+3, 4+4] = [5, 8].
  CHECK(y[0] == doctest::Approx(-3.5));
  CHECK(y[1] == doctest::Approx(-5));
  CHECK(y[2] == doctest::Approx(5.5));
  CHECK(y[3] == doctest::Approx(7));
}

TEST_CASE("residual add and concatenation backward match finite differences") {
  std::mt19937 rng(16);
  const memory::desc da = plain_desc({2, 3, 2, 2}), db = plain_desc({2, 5, 2, 2});
  std::vector<float> a = random_vector(24, rng), b = random_vector(40, rng),
                     b_same = random_vector(24, rng);

  AddPlan add(da, da);
  memory sum = make_memory(add.dst_desc());
  const std::vector<float> r_add = random_vector(24, rng);
  auto add_loss = [&] {
    add.forward(wrap(da, a.data()), wrap(da, b_same.data()), sum);
    const std::vector<float> y = to_plain(sum);
    return std::inner_product(y.begin(), y.end(), r_add.begin(), 0.0);
  };
  std::vector<float> ga(24), gb(24);
  add.backward(wrap(da, r_add.data()), wrap(da, ga.data()), wrap(da, gb.data()));
  stream().wait();
  check_gradient("add da", a, ga, add_loss, 1e-2f, 2e-3);
  check_gradient("add db", b_same, gb, add_loss, 1e-2f, 2e-3);

  ConcatPlan concat({da, db});
  memory cat = make_memory(concat.dst_desc());
  const std::vector<float> r_cat = random_vector(64, rng);
  memory r_mem = make_memory(concat.dst_desc());
  from_plain(r_cat, r_mem);
  auto cat_loss = [&] {
    concat.forward({wrap(da, a.data()), wrap(db, b.data())}, cat);
    const std::vector<float> y = to_plain(cat);
    return std::inner_product(y.begin(), y.end(), r_cat.begin(), 0.0);
  };
  std::vector<float> ca(24), cb(40);
  concat.backward(r_mem, {wrap(da, ca.data()), wrap(db, cb.data())});
  stream().wait();
  check_gradient("concat da", a, ca, cat_loss, 1e-2f, 2e-3);
  check_gradient("concat db", b, cb, cat_loss, 1e-2f, 2e-3);
}

TEST_CASE("dropout: kept fraction, scaling, gradient mask, reproducibility, inference identity") {
  const Dims dims{4, 8, 16, 16};
  std::mt19937 rng(17);
  std::vector<float> x = random_vector(element_count(dims), rng);
  for (float& v : x) v = std::abs(v) + 0.5f;  // never zero, so y == 0 means dropped
  Dropout dropout(0.25f, 42);
  Harness h(dropout, dims, x);
  const std::vector<float> y = h.forward(true);
  const std::vector<float> ones(y.size(), 1.0f);
  const std::vector<float> dx = h.backward(ones);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (y[i] != 0.0f) {
      ++kept;
      CHECK(y[i] == doctest::Approx(x[i] / 0.75f));
      CHECK(dx[i] == doctest::Approx(1 / 0.75f));
    } else {
      CHECK(dx[i] == 0.0f);
    }
  }
  // 8192 Bernoulli(0.75) draws: standard deviation of the fraction ≈ 0.005.
  CHECK(static_cast<double>(kept) / static_cast<double>(y.size()) ==
        doctest::Approx(0.75).epsilon(0.03));
  CHECK(h.forward(true) != y);  // a new mask each step
  Dropout same(0.25f, 42);
  Harness again(same, dims, x);
  CHECK(again.forward(true) == y);  // same seed, same first mask
  CHECK(h.forward(false) == x);     // inference: identity
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
  check_gradient("softmax-ce dlogits", logits, dlogits, mean_loss, 1e-2f, 1e-3);
}
