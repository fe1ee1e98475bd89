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

#include "cross_backend_harness.hpp"
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

using namespace cross_backend;

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
      options.graph_candidates = 1;  // numbers, not speed
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
