// The CUDA backend against the CPU backend (the oracle), in the manner of ggml's
// test-backend-ops and llm.c's test_gpt2: every layer, every graph node kind, every optimizer and
// every model runs forward and backward on both, from the same parameters and inputs, and the
// losses, accuracy counts, gradients, updated parameters, evaluation results and batch norm
// running statistics must agree. Each layer sits between a convolution (so its input gradient
// is checked through that convolution's weight gradient) and a dense classifier.
//
// Skipped (SCALEBENCH_SKIP) where no GPU is present. TF32 is switched off (NVIDIA_TF32_OVERRIDE=0)
// so the comparison is fp32 against fp32; training runs keep cuDNN's default, as PyTorch does.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"
#include "trainer/cpu/models.hpp"
#include "trainer/cpu/network.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/nccl.hpp"
#include "trainer/cuda/network.hpp"
#include "trainer/model/parameters.hpp"
#include "trainer/model/zoo.hpp"
#include "trainer/options.hpp"

using namespace scalebench::trainer;
using model::Graph;

namespace {

std::optional<std::string> why_no_gpu() {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);  // before cuBLAS/cuDNN start
  if (cuda::device_count() > 0) return std::nullopt;
  return "no GPU found";
}

// Largest |a − b| relative to the largest |a| (an absolute floor for all-zero tensors).
double relative_difference(std::span<const float> a, std::span<const float> b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 1e-6;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(a[i])));
  }
  return diff / scale;
}

// Running means against the data's scale (the running SD): the mean of an already normalized
// input is zero up to rounding, so its own size (1e-9) is no scale to measure a difference by.
double mean_difference(std::span<const float> a, std::span<const float> b,
                       std::span<const float> variance) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 1e-6;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max({scale, std::abs(static_cast<double>(a[i])),
                      std::sqrt(std::max(0.0, static_cast<double>(variance[i])))});
  }
  return diff / scale;
}

// How far the GPU may be from the CPU: the fixed tolerance, or kFloorFactor times the CPU's
// own distance from a twin whose parameters were moved by rounding-sized noise (the "floor"),
// whichever is larger. Deep batch-norm networks at initialisation amplify rounding: on the CPU
// alone, a 1e-7 relative change of ResNet-50's parameters (about one ulp) moves its weight
// gradients by 1% (median layer) to 17% (worst), and a 2x2 max pool turns bf16's 0.4% rounding
// into argmax flips that move whole gradient elements. A fixed bound is then either loose
// everywhere or fails on rounding alone; the floor keeps small models (where it is far below
// the fixed tolerance) held to that tolerance. A distance to one twin is a noisy estimate (on
// an H100, 2026-11-26, every per-layer check of ResNet-50 was within 8 times it, but two scalar
// losses were 9 times one twin's): the floor is the largest distance to kTwins twins.
constexpr double kFloorFactor = 8;
constexpr int kTwins = 2;

double bound(double tolerance, double floor) { return std::max(tolerance, kFloorFactor * floor); }

// Where the CPU's own twins differ from it by half the value's size or more, rounding alone
// decides the value (a chaotic regime: bf16 ResNet-50 at batch 4 after one momentum step, on an
// H100 2026-11-26, had a conv gradient whose twin differed by 102% and an evaluation loss of
// 1e21 whose twin's was 1e24): no bound derived from it means anything, so such a value is
// counted as skipped, not compared. The test still requires the first step's loss and a fifth of
// its other values to be compared (Tally below).
constexpr double kChaotic = 0.5;

// How many checks were made and how many were skipped as chaotic, for one training step.
struct Tally {
  int compared = 0, skipped = 0;
  bool loss_compared = false;
};

// Compares each layer's slice of two flat buffers, naming the node that differs; `twins` are the
// perturbed CPU networks' buffers (the floor).
void check_per_node(const model::Graph& layout, std::span<const float> expected,
                    std::span<const float> actual, const std::vector<std::span<const float>>& twins,
                    const char* what, double tolerance, Tally& tally) {
  std::size_t offset = 0;
  const auto& nodes = layout.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind != model::Node::Kind::op) continue;
    const std::size_t n = model::parameter_count(nodes[i].op);
    if (n == 0) continue;
    const double d = relative_difference(expected.subspan(offset, n), actual.subspan(offset, n));
    double floor = 0;
    for (const auto& twin : twins)
      floor = std::max(floor,
                       relative_difference(expected.subspan(offset, n), twin.subspan(offset, n)));
    INFO(what << " of node " << i << " (" << model::op_name(nodes[i].op)
              << "): relative difference " << d << ", CPU floor " << floor);
    offset += n;
    if (floor >= kChaotic) {
      ++tally.skipped;
      continue;
    }
    ++tally.compared;
    CHECK(d <= bound(tolerance, floor));
  }
}

// A loss sum and accuracy count against the CPU's, with the twins' distances as the floor.
void check_stats(const BatchStats& expected, const BatchStats& actual,
                 const std::vector<BatchStats>& twins, double tolerance, Tally& tally) {
  double floor = 0, correct_floor = 0;
  for (const BatchStats& twin : twins) {
    floor = std::max(floor, std::abs(twin.loss_sum - expected.loss_sum));
    correct_floor =
        std::max(correct_floor, static_cast<double>(std::abs(twin.correct - expected.correct)));
  }
  INFO("loss " << actual.loss_sum << " vs the CPU's " << expected.loss_sum << " (floor " << floor
               << ")");
  const double loss_tolerance = tolerance * std::max(1.0, std::abs(expected.loss_sum));
  if (floor >= kChaotic * std::max(1.0, std::abs(expected.loss_sum))) {
    ++tally.skipped;
    return;
  }
  ++tally.compared;
  tally.loss_compared = true;
  CHECK(std::abs(actual.loss_sum - expected.loss_sum) <= bound(loss_tolerance, floor));
  // A near-tie may flip one image; more only where rounding flips more on the CPU itself. Where
  // rounding alone moves the loss past the tolerance the network is chaotic (ResNet-50's
  // evaluation after two steps: a loss of 1e21 on the CPU, 1e24 on a twin): which image is right
  // is then rounding, and two twins that agree by chance are no floor (an H100 run, 2026-11-26:
  // bf16 ResNet-50 got 2 of 3 evaluation images otherwise, its twins none).
  if (floor > loss_tolerance) return;
  CHECK(std::abs(actual.correct - expected.correct) <= std::max(1.0, kFloorFactor * correct_floor));
}

// Every parameter times (1 + noise·N(0,1)): rounding-sized for noise 1e-6 (fp32) or 2^-9 (bf16).
void perturb(std::span<float> parameters, double noise, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (float& p : parameters) p = static_cast<float>(p * (1.0 + noise * normal(rng)));
}

struct Batch {
  std::vector<float> images;
  std::vector<std::int32_t> labels;
};

Batch random_batch(std::size_t batch, std::size_t image_size, int classes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> label(0, classes - 1);
  Batch b;
  b.images.resize(batch * image_size);
  for (float& x : b.images) x = normal(rng);
  for (std::size_t i = 0; i < batch; ++i) b.labels.push_back(label(rng));
  return b;
}

std::size_t elements(const cpu::Dims& shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

struct Tolerance {
  double loss = 1e-4, gradients = 2e-3, parameters = 1e-4, running_stats = 1e-4;
  double floor_noise = 1e-6;  // the twin's relative parameter noise (perturb)
};

// Two training steps (forward, backward, optimizer) and an evaluation on both backends: the CPU
// lowers `description` (parameters from `seed`), the GPU lowers the same description with
// model::initial_parameters.
void compare_networks(const model::ModelDescription& description, std::uint32_t seed,
                      const OptimizerOptions& optimizer, std::size_t batch, int classes,
                      Tolerance tol = {}, cuda::Precision precision = cuda::Precision::fp32,
                      cuda::Layout memory_layout = cuda::Layout::nchw,
                      cuda::ConvEngine engine = cuda::ConvEngine::legacy) {
  const auto reference = cpu::make_network(description, seed, optimizer);
  cpu::Network& cpu_net = *reference;
  std::vector<std::unique_ptr<cpu::Network>> twins;
  for (int k = 0; k < kTwins; ++k) {
    twins.push_back(cpu::make_network(description, seed, optimizer));
    perturb(twins.back()->parameters(), tol.floor_noise, 12345 + static_cast<std::uint32_t>(k));
  }
  // Each twin's view of a buffer, or of a batch's statistics.
  auto twin_spans = [&](auto get) {
    std::vector<std::span<const float>> spans;
    for (const auto& twin : twins) spans.push_back(get(*twin));
    return spans;
  };
  auto twin_stats = [&](auto run) {
    std::vector<BatchStats> stats;
    for (const auto& twin : twins) stats.push_back(run(*twin));
    return stats;
  };
  const model::Graph& layout = description.graph;
  const std::vector<float> initial(cpu_net.parameters().begin(), cpu_net.parameters().end());
  cuda::DeviceOptions options;
  options.precision = precision;
  options.layout = memory_layout;
  options.conv_engine = engine;
  options.verbose = true;  // which plans, and any fallback, in the test's output
  cuda::CudaNetwork gpu(description, model::initial_parameters(description.graph, seed), optimizer,
                        0, options);
  {
    const std::span<float> p = gpu.parameters();
    REQUIRE(std::equal(p.begin(), p.end(), initial.begin()));  // same seed, same layout
  }
  const std::size_t image = elements(cpu_net.input_shape());
  std::vector<Tally> tallies(3);  // step 0, step 1, then the running statistics and evaluation
  for (int step = 0; step < 2; ++step) {
    CAPTURE(step);
    Tally& tally = tallies[static_cast<std::size_t>(step)];
    const Batch b = random_batch(batch, image, classes, 100 + static_cast<std::uint32_t>(step));
    const BatchStats expected = cpu_net.train_batch(b.images, b.labels, batch);
    const auto floor =
        twin_stats([&](cpu::Network& twin) { return twin.train_batch(b.images, b.labels, batch); });
    const BatchStats actual = gpu.train_batch(b.images, b.labels, batch);
    check_stats(expected, actual, floor, tol.loss, tally);
    check_per_node(layout, cpu_net.gradients(), gpu.gradients(), twin_spans([](cpu::Network& t) {
                     return std::span<const float>(t.gradients());
                   }),
                   "gradient", tol.gradients, tally);
    cpu_net.optimizer_step();
    for (const auto& twin : twins) twin->optimizer_step();
    gpu.optimizer_step();
    check_per_node(layout, cpu_net.parameters(), gpu.parameters(), twin_spans([](cpu::Network& t) {
                     return std::span<const float>(t.parameters());
                   }),
                   "parameter", tol.parameters, tally);
  }
  Tally& after = tallies[2];
  // Batch norm's running statistics after two training steps, then inference with them.
  for (std::size_t i = 0; i < cpu_net.nodes().size(); ++i) {
    const auto* bn = dynamic_cast<const cpu::BatchNorm*>(cpu_net.layer(i));
    if (bn == nullptr) continue;
    CAPTURE(i);
    double mean_floor = 0, var_floor = 0;
    for (const auto& twin : twins) {
      const auto* twin_bn = dynamic_cast<const cpu::BatchNorm*>(twin->layer(i));
      REQUIRE(twin_bn != nullptr);
      mean_floor = std::max(mean_floor, mean_difference(bn->running_mean(), twin_bn->running_mean(),
                                                        bn->running_var()));
      var_floor =
          std::max(var_floor, relative_difference(bn->running_var(), twin_bn->running_var()));
    }
    if (mean_floor >= kChaotic || var_floor >= kChaotic) {
      ++after.skipped;
      continue;
    }
    ++after.compared;
    CHECK(mean_difference(bn->running_mean(), gpu.running_mean(i), bn->running_var()) <=
          bound(tol.running_stats, mean_floor));
    CHECK(relative_difference(bn->running_var(), gpu.running_var(i)) <=
          bound(tol.running_stats, var_floor));
  }
  const std::size_t eval_batch = batch > 1 ? batch - 1 : 1;  // a second plan, another size
  const Batch e = random_batch(eval_batch, image, classes, 7);
  const BatchStats expected = cpu_net.evaluate(e.images, e.labels, eval_batch);
  const auto floor =
      twin_stats([&](cpu::Network& twin) { return twin.evaluate(e.images, e.labels, eval_batch); });
  const BatchStats actual = gpu.evaluate(e.images, e.labels, eval_batch);
  check_stats(expected, actual, floor, tol.loss, after);
  MESSAGE("compared/skipped as chaotic: step 0 "
          << tallies[0].compared << "/" << tallies[0].skipped << ", step 1 " << tallies[1].compared
          << "/" << tallies[1].skipped << ", running statistics and evaluation " << after.compared
          << "/" << after.skipped);
  // Not vacuous: the first step's loss (every layer's forward) is compared, and at least a fifth
  // of its other values. Deep networks at batch 2-4 leave most of them to rounding: their last
  // batch norms normalize over 2-4 values (1x1 maps), so the gradients behind them are chaotic
  // (an H100, 2026-11-26: step 0 compared 56 of 215 values for bf16 ResNet-50, 139 of 379 for
  // Inception v3; the other models more than half).
  CHECK(tallies[0].loss_compared);
  CHECK(tallies[0].compared * 4 >= tallies[0].skipped);
}

OptimizerOptions sgd(double lr = 0.1) {
  OptimizerOptions o;
  o.lr = lr;
  return o;
}

constexpr int kClasses = 5;

// input (C×8×8) → conv 3×3 (C → 8) → LAYER → flatten → dense → logits.
void compare_layer(int in_channels, const std::function<int(Graph&, int)>& add_layer,
                   std::size_t batch = 3, int size = 8) {
  const model::InputDims input{in_channels, size, size};
  auto make = [&] {
    Graph g;
    model::Conv2dOptions o = model::conv2d(in_channels, 8, 3, 1, 1);
    int x = g.op(Graph::input, model::Conv2d{o});
    x = add_layer(g, x);
    g.op(x, model::Flatten{});
    return g;
  };
  // The dense layer's width depends on the layer's output shape: plan the graph once on the CPU.
  const auto probe = cpu::make_network({make(), input}, 1, sgd());
  cpu::Network& shape_probe = *probe;
  const Batch b = random_batch(1, static_cast<std::size_t>(in_channels * size * size), 2, 1);
  (void)shape_probe.evaluate(b.images, b.labels, 1);  // logits = the flattened features
  const std::size_t features = shape_probe.logits().size();
  auto full = [&] {
    Graph g = make();
    const int last = static_cast<int>(g.nodes().size()) - 1;
    g.op(last, model::Dense{features, static_cast<std::size_t>(kClasses), model::Init::glorot});
    return g;
  };
  // Both layouts, and the graph API's convolutions in both: channels last reorders the input,
  // the convolution weights, flatten, dropout's mask and concat, the graph API fuses the bias
  // and the ReLU; all must give the same numbers.
  for (const auto& [layout, engine] : {std::pair{cuda::Layout::nchw, cuda::ConvEngine::legacy},
                                       std::pair{cuda::Layout::nhwc, cuda::ConvEngine::legacy},
                                       std::pair{cuda::Layout::nchw, cuda::ConvEngine::graph},
                                       std::pair{cuda::Layout::nhwc, cuda::ConvEngine::graph}}) {
    CAPTURE((layout == cuda::Layout::nhwc ? "channels_last" : "nchw"));
    CAPTURE((engine == cuda::ConvEngine::graph ? "conv graph API" : "conv legacy API"));
    compare_networks({full(), input}, 3, sgd(), batch, kClasses, {}, cuda::Precision::fp32, layout,
                     engine);
  }
}

}  // namespace

TEST_CASE("cuda vs cpu: conv2d 3x3 with bias and fused relu") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(3, [](Graph& g, int x) {
    model::Conv2dOptions o = model::conv2d(8, 6, 3, 1, 1);
    o.relu = true;
    return g.op(x, model::Conv2d{o});
  });
}

TEST_CASE("cuda vs cpu: conv2d 5x5 stride 2, no bias, He init") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(3, [](Graph& g, int x) {
    model::Conv2dOptions o = model::conv2d(8, 4, 5, 2, 2);
    o.bias = false;
    o.init = model::Init::he;
    return g.op(x, model::Conv2d{o});
  });
}

TEST_CASE("cuda vs cpu: depthwise conv2d (groups = channels)") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(
      3, [](Graph& g, int x) { return g.op(x, model::Conv2d{model::conv2d(8, 8, 3, 1, 1, 8)}); });
}

TEST_CASE("cuda vs cpu: conv2d 1x1 and 7x1 (asymmetric kernel)") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(3, [](Graph& g, int x) {
    int y = g.op(x, model::Conv2d{model::conv2d(8, 4, 1)});
    model::Conv2dOptions o = model::conv2d(4, 4, 1);
    o.kernel = {7, 1};
    o.padding = o.padding_end = {3, 0};
    return g.op(y, model::Conv2d{o});
  });
}

TEST_CASE("cuda vs cpu: max pooling 2x2/2 and 3x3/2 padded") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(2, [](Graph& g, int x) {
    model::Pool2dOptions o;
    int y = g.op(x, model::Pool2d{o});
    o.kernel = {3, 3};
    o.padding = o.padding_end = {1, 1};
    return g.op(y, model::Pool2d{o});
  });
}

TEST_CASE("cuda vs cpu: average pooling with and without padding in the count") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(2, [](Graph& g, int x) {
    model::Pool2dOptions o;
    o.kind = model::PoolKind::average;
    o.kernel = {3, 3};
    o.stride = {1, 1};
    o.padding = o.padding_end = {1, 1};
    int y = g.op(x, model::Pool2d{o});
    o.kind = model::PoolKind::average_exclude_padding;
    o.stride = {2, 2};
    return g.op(y, model::Pool2d{o});
  });
}

TEST_CASE("cuda vs cpu: global average pooling") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(2, [](Graph& g, int x) { return g.op(x, model::GlobalAvgPool{}); });
}

TEST_CASE("cuda vs cpu: batch norm, and batch norm with fused relu (eps 1e-3)") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(
      3,
      [](Graph& g, int x) {
        int y = g.op(x, model::BatchNorm{8});
        return g.op(y, model::BatchNorm{8, 1e-3f, 0.1f, true});
      },
      4);
}

TEST_CASE("cuda vs cpu: relu, relu6 and tanh") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(3, [](Graph& g, int x) {
    int y = g.op(x, model::Eltwise{model::Activation::tanh});
    y = g.op(y, model::Eltwise{model::Activation::relu6});
    return g.op(y, model::Eltwise{model::Activation::relu});
  });
}

TEST_CASE("cuda vs cpu: dropout drops the same elements (the CPU's hash)") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(3, [](Graph& g, int x) { return g.op(x, model::Dropout{0.5f, 1234u}); });
}

TEST_CASE("cuda vs cpu: residual add (x + f(x), and x + x)") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(3, [](Graph& g, int x) {
    int f = g.op(x, model::Conv2d{model::conv2d(8, 8, 3, 1, 1)});
    int sum = g.add(f, x);
    return g.add(sum, sum);
  });
}

TEST_CASE("cuda vs cpu: channel concat of three branches") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  compare_layer(3, [](Graph& g, int x) {
    int a = g.op(x, model::Conv2d{model::conv2d(8, 3, 1)});
    int b = g.op(x, model::Conv2d{model::conv2d(8, 5, 3, 1, 1)});
    model::Pool2dOptions o;
    o.kernel = {3, 3};
    o.stride = {1, 1};
    o.padding = o.padding_end = {1, 1};
    int c = g.op(x, model::Pool2d{o});
    return g.concat({a, b, c});
  });
}

TEST_CASE("cuda vs cpu: every optimizer, with weight decay, on an MLP") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  for (const std::string name :
       {"sgd", "momentum", "nesterov", "adadelta", "rmsprop", "adam", "radam"}) {
    CAPTURE(name);
    OptimizerOptions o = sgd(name == "adadelta" ? 1.0 : 0.01);
    o.name = name;
    o.weight_decay = 1e-3;
    ModelSpec spec;
    spec.name = "mlp";
    spec.input_size = 20;
    spec.hidden = {16, 12};
    spec.classes = kClasses;
    compare_networks(model::describe_model(spec), spec.seed, o, 6, kClasses);
  }
}

namespace {

// The whole body of a test case: it skips (returns) where there is no GPU.
void compare_model(const std::string& name, int channels, int size, std::size_t batch, int classes,
                   cuda::Precision precision = cuda::Precision::fp32,
                   cuda::Layout layout = cuda::Layout::nchw,
                   cuda::ConvEngine engine = cuda::ConvEngine::legacy) {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  ModelSpec spec;
  spec.name = name;
  spec.channels = channels;
  spec.height = spec.width = size;
  spec.input_size = static_cast<std::size_t>(channels * size * size);
  spec.classes = classes;
  spec.seed = 5;
  OptimizerOptions o = sgd(0.01);
  o.name = "momentum";
  // Deep models add up rounding over dozens of layers: a looser bound on gradients.
  Tolerance tol;
  tol.gradients = 1e-2;
  tol.loss = 1e-3;
  tol.parameters = 1e-3;
  if (precision == cuda::Precision::bf16) {
    // bf16 keeps 8 significant bits: ~0.4% per rounded input, against the CPU's fp32.
    tol.loss = 2e-2;
    tol.gradients = 6e-2;
    tol.running_stats = 2e-2;     // the batch statistics of bf16-rounded convolution outputs
    tol.floor_noise = 1.0 / 512;  // bf16's relative rounding, 2^-9
  }
  compare_networks(model::describe_model(spec), spec.seed, o, batch, classes, tol, precision,
                   layout, engine);
}

}  // namespace

TEST_CASE("cuda vs cpu: mnist_cnn") { compare_model("mnist_cnn", 1, 28, 8, 10); }
TEST_CASE("cuda vs cpu: lenet5") { compare_model("lenet5", 1, 28, 8, 10); }
TEST_CASE("cuda vs cpu: resnet50 at 3x32x32") { compare_model("resnet50", 3, 32, 4, 10); }
TEST_CASE("cuda vs cpu: mobilenet_v2 at 3x32x32") { compare_model("mobilenet_v2", 3, 32, 4, 10); }
TEST_CASE("cuda vs cpu: inception_v3 at 3x75x75") { compare_model("inception_v3", 3, 75, 2, 10); }
TEST_CASE("cuda vs cpu: vgg16 at 3x32x32") { compare_model("vgg16", 3, 32, 2, 10); }
// --memory-format channels_last (unverified on a GPU when written: none was lent).
TEST_CASE("cuda channels_last vs cpu: mnist_cnn") {
  compare_model("mnist_cnn", 1, 28, 8, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last vs cpu: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last vs cpu: mobilenet_v2 at 3x32x32") {
  compare_model("mobilenet_v2", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last vs cpu: inception_v3 at 3x75x75") {
  compare_model("inception_v3", 3, 75, 2, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last bf16 vs cpu fp32: resnet50 at 3x32x32, within bf16's rounding") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::bf16, cuda::Layout::nhwc);
}
// --conv-engine graph (unverified on a GPU when written: none was lent).
TEST_CASE("cuda conv graph API, channels_last vs cpu: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc,
                cuda::ConvEngine::graph);
}
TEST_CASE("cuda conv graph API, channels_last vs cpu: mobilenet_v2 at 3x32x32") {
  compare_model("mobilenet_v2", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc,
                cuda::ConvEngine::graph);
}
TEST_CASE("cuda conv graph API vs cpu: mnist_cnn (fused bias and ReLU)") {
  compare_model("mnist_cnn", 1, 28, 8, 10, cuda::Precision::fp32, cuda::Layout::nchw,
                cuda::ConvEngine::graph);
}
TEST_CASE("cuda conv graph API, channels_last bf16 vs cpu fp32: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::bf16, cuda::Layout::nhwc,
                cuda::ConvEngine::graph);
}
TEST_CASE("cuda bf16 vs cpu fp32: mnist_cnn, within bf16's rounding") {
  compare_model("mnist_cnn", 1, 28, 8, 10, cuda::Precision::bf16);
}
TEST_CASE("cuda bf16 vs cpu fp32: resnet50 at 3x32x32, within bf16's rounding") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::bf16);
}

TEST_CASE("nccl: one-rank allreduce benchmark sums and times") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  ProcessGroup group;  // one process: rank 0 of 1, no broadcast needed
  auto bench = cuda::make_nccl_allreduce_benchmark(group);
  CHECK(bench->name() == "nccl");
  CHECK(bench->check(1000) == 0);
  CHECK(bench->check(1) == 0);
  const double seconds = bench->time(1 << 20, 2, 5);
  CHECK(seconds > 0);
  CHECK(seconds < 1);
}

TEST_CASE("nccl: the bucketed, overlapped gradient allreduce on one rank leaves the gradients") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  // The mean over one rank is the gradient itself, so events, streams, buckets launched during
  // backward and the wait before the optimizer must leave exactly what backward computed.
  ModelSpec spec;
  spec.name = "mnist_cnn";
  spec.channels = 1;
  spec.height = spec.width = 16;
  spec.input_size = 256;
  const OptimizerOptions o = sgd(0.01);
  const Batch b = random_batch(8, 256, 10, 11);
  std::vector<std::vector<float>> results;
  for (const bool reduce : {false, true}) {
    cuda::DeviceOptions options;
    options.deterministic = true;  // two networks compared bit for bit
    cuda::CudaNetwork gpu(model::describe_model(spec),
                          model::initial_parameters(model::describe_model(spec).graph, spec.seed),
                          o, 0, options);
    std::unique_ptr<GradientAllreduce> reducer;
    if (reduce) {
      ProcessGroup one;
      CHECK_FALSE(gpu.make_gradient_allreduce(one, 64 << 10, true)->overlap());  // one rank: none
      // 64 KiB buckets (many of them), launched during backward.
      reducer = cuda::make_nccl_gradient_allreduce(
          gpu.context(), gpu.device_gradients(), gpu.parameter_count(), one, 64 << 10, true, true);
      REQUIRE(reducer->overlap());
      gpu.set_gradients_ready([&](std::size_t offset) { reducer->gradients_ready(offset); });
    }
    for (int step = 0; step < 2; ++step) {
      (void)gpu.train_batch(b.images, b.labels, 8);
      if (reducer) reducer->finish();
      gpu.optimizer_step();
    }
    const std::span<float> p = gpu.parameters();
    results.emplace_back(p.begin(), p.end());
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("cuda graph: replayed steps train exactly as queued ones (new dropout masks each step)") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  // mnist_cnn has two dropout layers: a graph that froze the first step's keys would drop the
  // same elements every step and part from the eager run at the second replay.
  ModelSpec spec;
  spec.name = "mnist_cnn";
  spec.channels = 1;
  spec.height = spec.width = 16;
  spec.input_size = 256;
  OptimizerOptions o = sgd(0.01);
  o.name = "adam";
  // Also with channels last and the graph API's convolutions (a plan executed inside a capture).
  for (const auto& [layout, engine] : {std::pair{cuda::Layout::nchw, cuda::ConvEngine::legacy},
                                       std::pair{cuda::Layout::nhwc, cuda::ConvEngine::graph}}) {
    CAPTURE((engine == cuda::ConvEngine::graph ? "channels_last, conv graph API" : "nchw, legacy"));
    std::vector<std::vector<double>> losses;
    std::vector<std::vector<float>> parameters;
    for (const bool graph : {false, true}) {
      CAPTURE(graph);
      cuda::DeviceOptions options;
      options.cuda_graph = graph;
      options.layout = layout;
      options.conv_engine = engine;
      options.deterministic = true;  // compared bit for bit
      cuda::CudaNetwork gpu(model::describe_model(spec),
                            model::initial_parameters(model::describe_model(spec).graph, spec.seed),
                            o, 0, options);
      std::vector<double> run;
      for (int step = 0; step < 6; ++step) {  // eager, capture + launch, then replays
        const Batch b = random_batch(8, 256, 10, 20 + static_cast<std::uint32_t>(step));
        run.push_back(gpu.train_batch(b.images, b.labels, 8).loss_sum);
        gpu.optimizer_step();
        if (step == 2) {
          // A new plan between replays (evaluation at another batch size) may grow the
          // workspace: the graph must then be captured again, not replayed with stale addresses.
          const Batch e = random_batch(64, 256, 10, 4);
          run.push_back(gpu.evaluate(e.images, e.labels, 64).loss_sum);
        }
      }
      const Batch e = random_batch(5, 256, 10, 3);
      run.push_back(gpu.evaluate(e.images, e.labels, 5).loss_sum);  // another plan, no graph
      losses.push_back(run);
      const std::span<float> p = gpu.parameters();
      parameters.emplace_back(p.begin(), p.end());
    }
    CHECK(losses[0] == losses[1]);
    CHECK(parameters[0] == parameters[1]);
  }
}

TEST_CASE(
    "cuda: bf16 is refused, naming the GPU, below compute capability 8.0 (runs without a GPU)") {
  const auto refusal = cuda::precision_refusal(cuda::Precision::bf16, "Tesla V100-SXM2-16GB", 7, 0);
  REQUIRE(refusal);
  CHECK(*refusal ==
        "backend cuda: --precision bf16 needs bf16 tensor cores (compute capability 8.0 or "
        "newer); Tesla V100-SXM2-16GB is 7.0: use --precision fp32");
  CHECK(cuda::precision_refusal(cuda::Precision::bf16, "Tesla T4", 7, 5));
  CHECK_FALSE(cuda::precision_refusal(cuda::Precision::bf16, "NVIDIA A100-SXM4-80GB", 8, 0));
  CHECK_FALSE(cuda::precision_refusal(cuda::Precision::bf16, "NVIDIA H200", 9, 0));
  CHECK_FALSE(cuda::precision_refusal(cuda::Precision::fp32, "Tesla V100-SXM2-16GB", 7, 0));
}

TEST_CASE("cuda: what cuDNN cannot run is named from the operation alone (no GPU needed)") {
  model::Conv2dOptions keras_same = model::conv2d(3, 8, 3, 2);
  keras_same.padding = {0, 0};
  keras_same.padding_end = {1, 1};  // Keras 'same' with stride 2
  const auto conv = cuda::unsupported(model::Conv2d{keras_same});
  REQUIRE(conv);
  CHECK(conv->find("conv2d with asymmetric padding") != std::string::npos);
  // (cuDNN 9's minimum batch norm epsilon is 0, so no epsilon is refused here.)
  CHECK_FALSE(cuda::unsupported(model::Conv2d{model::conv2d(3, 8, 3, 1, 1)}));
  CHECK_FALSE(cuda::unsupported(model::BatchNorm{8, 1e-3f}));
  CHECK_FALSE(cuda::unsupported(model::Dense{4, 2, model::Init::glorot}));
  // Every model of the zoo runs on cuDNN as described.
  for (const auto& name : model_names()) {
    ModelSpec spec;
    spec.name = name;
    spec.channels = 3;
    spec.height = spec.width = 75;
    spec.input_size = 3 * 75 * 75;
    const auto description = model::describe_model(spec);
    for (const auto& node : description.graph.nodes())
      if (node.kind == model::Node::Kind::op) CHECK_FALSE(cuda::unsupported(node.op));
  }
}
