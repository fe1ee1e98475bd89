// trainer/cpu/layers.cpp against PyTorch 1.13 (tests/data/trainer/torch_layers.txt, written by
// scripts/reference/torch_layers.py in float64).
//
// Tolerance: |ours − PyTorch| ≤ 1e-4·(1 + |PyTorch|) for every output and gradient. Our layers
// compute in float32 (ε = 6e-8); the largest reductions here are ~100 terms of magnitude ~1
// (convolution backward-weights, batch norm over N·H·W = 36), giving rounding of a few 1e-6;
// 1e-4 leaves room for oneDNN's reassociation (Winograd is not used) without hiding a wrong
// index, which shows up as errors of order 1.
#include <doctest/doctest.h>

#include "layer_harness.hpp"

using namespace scalebench::trainer::cpu;
using namespace scalebench::trainer::cpu::test;

namespace {

constexpr double kTolerance = 1e-4;

void compare_layer(const std::string& name, Layer& layer,
                   const std::vector<std::string>& param_names = {}) {
  const RefCase& c = reference_case(name);
  std::vector<float> x = c.at("x").values;
  std::vector<float> params, grads(layer.parameter_count());
  for (const std::string& n : param_names) {
    const auto& v = c.at(n).values;
    params.insert(params.end(), v.begin(), v.end());
  }
  REQUIRE(params.size() == layer.parameter_count());
  layer.bind(params, grads);
  Harness h(layer, c.at("x").dims, x);
  CHECK(h.y_dims() == c.at("y").dims);
  check_close(name + " y", h.forward(), c.at("y").values, kTolerance);
  check_close(name + " dx", h.backward(c.at("r").values), c.at("dx").values, kTolerance);
  std::size_t offset = 0;
  for (const std::string& n : param_names) {
    const auto& expected = c.at("d" + n).values;
    check_close(name + " d" + n, std::span<const float>(grads).subspan(offset, expected.size()),
                expected, kTolerance);
    offset += expected.size();
  }
}

}  // namespace

TEST_CASE("conv2d matches PyTorch: 3x3, no padding") {
  Conv2d conv(conv2d(3, 4, 3));
  compare_layer("conv_3x3", conv, {"w", "b"});
}

TEST_CASE("conv2d matches PyTorch: fused ReLU, padding 1") {
  Conv2dOptions o = conv2d(3, 4, 3, 1, 1);
  o.relu = true;
  Conv2d conv(o);
  compare_layer("conv_relu_pad1", conv, {"w", "b"});
}

TEST_CASE("conv2d matches PyTorch: stride 2, padding 1, 2 groups") {
  Conv2d conv(conv2d(4, 6, 3, 2, 1, 2));
  compare_layer("conv_stride2_pad1_groups2", conv, {"w", "b"});
}

TEST_CASE("conv2d matches PyTorch: depthwise with multiplier 2, no bias") {
  Conv2dOptions o = conv2d(3, 6, 3, 1, 1, 3);
  o.bias = false;
  Conv2d conv(o);
  compare_layer("conv_depthwise_x2", conv, {"w"});
}

TEST_CASE("conv2d matches PyTorch: 1x3 kernel, padding (0, 1)") {
  Conv2dOptions o = conv2d(2, 3, 1);
  o.kernel = {1, 3};
  o.padding = o.padding_end = {0, 1};
  Conv2d conv(o);
  compare_layer("conv_1x3_pad01", conv, {"w", "b"});
}

TEST_CASE("conv2d matches PyTorch: 7x1 kernel, padding (3, 0), no bias (Inception)") {
  Conv2dOptions o = conv2d(3, 4, 1);
  o.kernel = {7, 1};
  o.padding = o.padding_end = {3, 0};
  o.bias = false;
  Conv2d conv(o);
  compare_layer("conv_7x1_pad30", conv, {"w"});
}

TEST_CASE("pooling matches PyTorch") {
  Pool2d max2(Pool2dOptions{});
  compare_layer("maxpool_2x2", max2);
  Pool2d max3(Pool2dOptions{PoolKind::max, {3, 3}, {2, 2}, {1, 1}, {1, 1}});
  compare_layer("maxpool_3x3_s2_p1", max3);
  Pool2d avg_in(Pool2dOptions{PoolKind::average, {3, 3}, {1, 1}, {1, 1}, {1, 1}});
  compare_layer("avgpool_3x3_s1_p1_include", avg_in);
  Pool2d avg_ex(Pool2dOptions{PoolKind::average_exclude_padding, {3, 3}, {2, 2}, {1, 1}, {1, 1}});
  compare_layer("avgpool_3x3_s2_p1_exclude", avg_ex);
  GlobalAvgPool global;
  compare_layer("global_avgpool", global);
}

TEST_CASE("batch norm matches PyTorch in training, running statistics included") {
  BatchNorm bn(3);
  compare_layer("batchnorm_train", bn, {"gamma", "beta"});
  const RefCase& c = reference_case("batchnorm_train");
  check_close("running_mean", bn.running_mean(), c.at("running_mean").values, kTolerance);
  check_close("running_var", bn.running_var(), c.at("running_var").values, kTolerance);
}

TEST_CASE("batch norm matches PyTorch in inference") {
  const RefCase& c = reference_case("batchnorm_infer");
  BatchNorm bn(3);
  std::vector<float> params = c.at("gamma").values, grads(6);
  params.insert(params.end(), c.at("beta").values.begin(), c.at("beta").values.end());
  bn.bind(params, grads);
  std::copy_n(c.at("running_mean").values.begin(), 3, bn.running_mean().begin());
  std::copy_n(c.at("running_var").values.begin(), 3, bn.running_var().begin());
  std::vector<float> x = c.at("x").values;
  Harness h(bn, c.at("x").dims, x);
  check_close("batchnorm inference y", h.forward(false), c.at("y").values, kTolerance);
}

TEST_CASE("batch norm with fused ReLU matches PyTorch's relu(batch_norm) in training") {
  BatchNorm bn(16, 1e-3f, 0.1f, true);
  compare_layer("batchnorm_relu_train", bn, {"gamma", "beta"});
}

TEST_CASE("tanh matches PyTorch") {
  Eltwise tanh_layer(Activation::tanh);
  compare_layer("tanh", tanh_layer);
}

TEST_CASE("relu, relu6, flatten and dense match PyTorch") {
  Eltwise relu(Activation::relu);
  compare_layer("relu", relu);
  Eltwise relu6(Activation::relu6);
  compare_layer("relu6", relu6);
  Flatten flatten;
  compare_layer("flatten", flatten);
  Dense dense(5, 4, Init::glorot);
  compare_layer("dense", dense, {"w", "b"});
}

TEST_CASE("residual add matches PyTorch") {
  const RefCase& c = reference_case("add");
  const memory::desc d = plain_desc(c.at("a").dims);
  AddPlan add(d, d);
  std::vector<float> a = c.at("a").values, b = c.at("b").values, r = c.at("r").values;
  memory y = make_memory(add.dst_desc());
  add.forward(wrap(d, a.data()), wrap(d, b.data()), y);
  check_close("add y", to_plain(y), c.at("y").values, kTolerance);
  std::vector<float> da(a.size()), db(b.size());
  add.backward(wrap(d, r.data()), wrap(d, da.data()), wrap(d, db.data()));
  stream().wait();
  check_close("add da", da, c.at("da").values, kTolerance);
  check_close("add db", db, c.at("db").values, kTolerance);
}

TEST_CASE("channel concatenation matches PyTorch") {
  const RefCase& c = reference_case("concat");
  const memory::desc da_desc = plain_desc(c.at("a").dims), db_desc = plain_desc(c.at("b").dims);
  ConcatPlan concat({da_desc, db_desc});
  std::vector<float> a = c.at("a").values, b = c.at("b").values;
  memory y = make_memory(concat.dst_desc());
  concat.forward({wrap(da_desc, a.data()), wrap(db_desc, b.data())}, y);
  check_close("concat y", to_plain(y), c.at("y").values, kTolerance);
  memory r = make_memory(concat.dst_desc());
  from_plain(c.at("r").values, r);
  std::vector<float> da(a.size()), db(b.size());
  concat.backward(r, {wrap(da_desc, da.data()), wrap(db_desc, db.data())});
  stream().wait();
  check_close("concat da", da, c.at("da").values, kTolerance);
  check_close("concat db", db, c.at("db").values, kTolerance);
}

TEST_CASE("softmax cross-entropy matches PyTorch's cross_entropy") {
  const RefCase& c = reference_case("softmax_cross_entropy");
  const std::vector<float>& logits = c.at("logits").values;
  std::vector<std::int32_t> labels;
  for (float l : c.at("labels").values) labels.push_back(static_cast<std::int32_t>(l));
  const std::size_t batch = labels.size(), classes = logits.size() / batch;
  std::vector<float> p(logits.size()), d(logits.size());
  const LossResult loss = softmax_cross_entropy_forward(logits, labels, batch, classes, p);
  const std::vector<float> mean{static_cast<float>(loss.loss_sum / static_cast<double>(batch))};
  check_close("loss", mean, c.at("loss").values, kTolerance);
  softmax_cross_entropy_backward(p, labels, batch, classes, d);
  check_close("dlogits", d, c.at("dlogits").values, kTolerance);
}
