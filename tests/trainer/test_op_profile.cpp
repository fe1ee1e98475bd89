// --profile-ops: the costs of model::op_costs (exact counts), the table of trainer/op_profile.hpp
// (exact text from given times), and the CPU backend timing a real training run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/errors.hpp"
#include "trainer/model/op_cost.hpp"
#include "trainer/op_profile.hpp"
#include "trainer/options.hpp"
#include "trainer/trainer.hpp"

using namespace scalebench::trainer;

namespace {

// input 3x8x8 -> conv 3->8 3x3 pad 1 -> relu -> conv 8->8 3x3 pad 1 -> add(relu, conv) ->
// flatten -> dense 512->4: every kind of cost once, and a node whose input is the model's.
model::Graph small_graph() {
  model::Graph g;
  const int conv1 = g.op(model::Graph::input, model::Conv2d{model::conv2d(3, 8, 3, 1, 1)});
  const int relu = g.op(conv1, model::Eltwise{model::Activation::relu});
  const int conv2 = g.op(relu, model::Conv2d{model::conv2d(8, 8, 3, 1, 1)});
  const int sum = g.add(relu, conv2);
  const int flat = g.op(sum, model::Flatten{});
  g.op(flat, model::Dense{512, 4, model::Init::glorot});
  return g;
}

std::vector<model::OpCost> small_costs(std::size_t batch) {
  const model::Graph g = small_graph();
  return model::op_costs(g, model::infer_shapes(g, {3, 8, 8}), batch, 4);
}

}  // namespace

TEST_CASE("op_costs: products count 2 per multiply-add, the rest the bytes they move") {
  const std::vector<model::OpCost> c = small_costs(2);
  REQUIRE(c.size() == 7);
  CHECK(c[0].signature.empty());
  // conv1: 2 images x 8x8x8 outputs x 3 channels x 9 taps x 2; its input is the model's, so
  // backward computes the weight gradient only (one more product, not two).
  CHECK(c[1].signature == "conv2d 3x3/1 3x8x8 -> 8x8x8");
  CHECK(c[1].forward_flops == 2.0 * 512 * 3 * 9 * 2);
  CHECK(c[1].backward_flops == c[1].forward_flops);
  CHECK(c[1].forward_bytes == 0.0);
  // conv2: input gradient and weight gradient.
  CHECK(c[3].forward_flops == 2.0 * 512 * 8 * 9 * 2);
  CHECK(c[3].backward_flops == 2 * c[3].forward_flops);
  // relu: reads x, writes y; backward reads dy and x, writes dx (512 values an image, 4 bytes).
  CHECK(c[2].signature == "relu 8x8x8 -> 8x8x8");
  CHECK(c[2].forward_bytes == (512 + 512) * 2 * 4);
  CHECK(c[2].backward_bytes == (512 + 512 + 512) * 2 * 4);
  // add: two inputs read, one written; backward reads dy, writes both shares.
  CHECK(c[4].signature == "add 8x8x8 + 8x8x8 -> 8x8x8");
  CHECK(c[4].forward_bytes == (1024 + 512) * 2 * 4);
  CHECK(c[4].backward_bytes == (512 + 1024) * 2 * 4);
  // flatten's backward needs no values, only dy.
  CHECK(c[5].backward_bytes == (512 + 512) * 2 * 4);
  CHECK(c[6].signature == "dense 512 -> 4");
  CHECK(c[6].forward_flops == 2.0 * 512 * 4 * 2);
  CHECK(c[6].backward_flops == 2 * c[6].forward_flops);
}

TEST_CASE("op_costs: pools and strided convolutions say so in their signature") {
  model::Graph g;
  model::Pool2dOptions pool;
  pool.kind = model::PoolKind::max;
  pool.kernel = {3, 3};
  pool.stride = {2, 2};
  const int p = g.op(model::Graph::input, model::Pool2d{pool});
  g.op(p, model::Conv2d{model::conv2d(4, 4, 1, 2, 0, 4)});
  const auto c = model::op_costs(g, model::infer_shapes(g, {4, 9, 9}), 1, 2);
  CHECK(c[1].signature == "pool2d max 3x3/2 4x9x9 -> 4x4x4");
  CHECK(c[1].forward_bytes == (324 + 64) * 2);
  CHECK(c[2].signature == "conv2d 1x1/2 groups 4 4x4x4 -> 4x2x2");
  CHECK(c[2].forward_flops == 2.0 * 16 * 1);  // depthwise: one input channel per output
}

TEST_CASE("op profile: nodes of one signature add up, slowest first, exact table") {
  model::Graph g;
  int x = model::Graph::input;
  for (int i = 0; i < 2; ++i) x = g.op(x, model::Eltwise{model::Activation::relu});
  g.op(x, model::Flatten{});
  const auto costs = model::op_costs(g, model::infer_shapes(g, {2, 5, 5}), 10, 4);
  OpTimes t;
  t.steps = 4;
  t.clock = "test clock";
  t.nodes = {{0.004, 0.0}, {0.002, 0.002}, {0.004, 0.004}, {0.001, 0.001}};
  t.loss = 0.002;
  t.optimizer = 0.004;
  const auto rows = op_profile_rows(t, costs);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].operation == "relu 2x5x5 -> 2x5x5");
  CHECK(rows[0].nodes == 2);
  CHECK(rows[0].forward_seconds == doctest::Approx(0.0015));
  CHECK(rows[0].backward_seconds == doctest::Approx(0.0015));
  CHECK(rows[1].operation == "input copy to the device");
  CHECK(rows[2].operation == "optimizer step");  // 1 ms; ties keep the input copy first
  // relu: forward 2 x 500 values, backward 3 x 500 per node, 2 nodes, 4 bytes, in 3 ms.
  CHECK(achieved_rate(rows[0]) == "0.0 GB/s");
  const std::vector<std::string> lines = format_op_profile("model=m", t, costs, 0.010);
  const std::vector<std::string> expected = {
      "Per-operation profile: model=m steps=4 clock=test clock (milliseconds per step; nodes of "
      "one shape added up)",
      "",
      "| # | operation | nodes | ms/step | share | cumulative | forward ms | backward ms | "
      "achieved |",
      "| ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
      "| 1 | relu 2x5x5 -> 2x5x5 | 2 | 3.000 | 50.0% | 50.0% | 1.500 | 1.500 | 0.0 GB/s |",
      "| 2 | input copy to the device |  | 1.000 | 16.7% | 66.7% | 1.000 | 0.000 |  |",
      "| 3 | optimizer step |  | 1.000 | 16.7% | 83.3% | 0.000 | 1.000 |  |",
      "| 4 | flatten 2x5x5 -> 50 | 1 | 0.500 | 8.3% | 91.7% | 0.250 | 0.250 | 0.0 GB/s |",
      "| 5 | loss (softmax cross-entropy) |  | 0.500 | 8.3% | 100.0% | 0.500 | 0.000 |  |",
      "| | all operations | | 6.000 | 100.0% | | 3.250 | 2.750 |  |",
      "",
      "The loop's step (host clock, same steps): 10.000 ms; the operations add up to 60.0% of it.",
  };
  CHECK(lines == expected);
}

TEST_CASE("op profile: a large product reads in TFLOP/s, traffic in GB/s") {
  OpProfileRow conv{"conv", 1, 0.001, 0.002, 3e10, 0.0};
  CHECK(achieved_rate(conv) == "10.0 TFLOP/s");
  OpProfileRow small{"dense", 1, 0.001, 0.0, 5e6, 0.0};
  CHECK(achieved_rate(small) == "5.0 GFLOP/s");
  OpProfileRow copy{"copy", 1, 0.0005, 0.0005, 0.0, 2e9};
  CHECK(achieved_rate(copy) == "2000.0 GB/s");
  CHECK(achieved_rate(OpProfileRow{"idle"}) == "");
}

TEST_CASE("op profile: times of another graph or of no step are refused") {
  const auto costs = small_costs(1);
  OpTimes t;
  t.nodes.resize(3);
  t.steps = 1;
  CHECK_THROWS_WITH_AS(op_profile_rows(t, costs), "op profile: 3 timed nodes but 7 costed",
                       std::invalid_argument);
  t.nodes.resize(7);
  t.steps = 0;
  CHECK_THROWS_AS(op_profile_rows(t, costs), std::invalid_argument);
}

TEST_CASE("--profile-ops: the cpu backend times every operation of a real run") {
  TrainOptions o;
  o.model = "mnist_cnn";
  o.dataset = "synthetic";
  o.train_images = 96;
  o.test_images = 16;
  o.input_shape = "1x28x28";
  o.batch_size = 16;
  o.epochs = 2;
  const DataSplit data = load_data(o);
  const TrainingSummary plain = train(o, data, [](std::string_view) {});
  o.profile_ops = true;
  std::vector<std::string> lines;
  const TrainingSummary profiled =
      train(o, data, [&](std::string_view line) { lines.emplace_back(line); });
  // Timing only observes: the same losses, bit for bit.
  REQUIRE(plain.epochs.size() == profiled.epochs.size());
  for (std::size_t e = 0; e < plain.epochs.size(); ++e)
    CHECK(plain.epochs[e].loss == profiled.epochs[e].loss);
  // 6 steps an epoch, 2 epochs, the first step left out.
  auto title = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("Per-operation profile:", 0) == 0;
  });
  REQUIRE(title != lines.end());
  CHECK(title[-1].rfind("Training done:", 0) == 0);
  CHECK(title->find("model=mnist_cnn batch_size=16 backend=cpu precision=fp32 steps=11 "
                    "clock=host steady clock") != std::string::npos);
  // A row per distinct operation of mnist_cnn, each with a time (3 decimals of a ms could
  // round a tiny one to 0.000, so only the products, which take longest, must be non-zero).
  const std::regex row(R"(\| \d+ \| (.+?) \| (\d*) \| (\d+\.\d{3}) \| ([\d.]+)% \|.*)");
  int rows = 0;
  for (auto it = title; it != lines.end(); ++it) {
    std::smatch m;
    if (!std::regex_match(*it, m, row)) continue;
    ++rows;
    if (m[1].str().rfind("conv2d", 0) == 0 || m[1].str().rfind("dense 9216", 0) == 0) {
      CHECK(std::stod(m[3].str()) > 0.0);
    }
  }
  // conv, conv, pool, dropout, flatten, dense, relu, dropout, dense; loss; optimizer.
  CHECK(rows == 11);
  // The operations are timed inside the loop's step, on the same clock: at most all of it.
  const std::regex cover(
      R"(The loop's step .*: ([\d.]+) ms; the operations add up to ([\d.]+)% of it\.)");
  std::smatch m;
  REQUIRE(std::regex_match(lines.back(), m, cover));
  CHECK(std::stod(m[2].str()) <= 100.05);
  CHECK(std::stod(m[2].str()) > 10.0);
}

TEST_CASE("--profile-ops: refused where there is no operation to time") {
  TrainOptions o;
  o.profile_ops = true;
  o.backend = "cuda";
  o.cuda_graph = OnOff::On;
  CHECK_THROWS_WITH_AS(validate(o),
                       "--profile-ops needs --cuda-graph off (a graph has no per-operation times)",
                       UsageError);
  o.backend = "cpu";
  o.cuda_graph = OnOff::Off;
  o.emulated_compute_ms = 5;
  CHECK_THROWS_WITH_AS(validate(o), "--profile-ops times training, not --emulated-compute-ms",
                       UsageError);
}
