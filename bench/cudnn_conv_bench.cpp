// Every distinct convolution of ResNet-50 (torchvision's v1.5, 224x224 input), forward,
// backward-data and backward-filter, timed on one GPU through:
//   legacy-nchw-fp32   cudnnFind* and cudnnConvolution*: what the trainer runs now
//   legacy-nchw-bf16   the same in bf16 (the trainer's --precision bf16, without its casts)
//   legacy-nhwc-bf16   the legacy API on channels-last bf16 (52 img/s in the trainer, 2026-11-26)
//   graph-nhwc-fp32    cuDNN's graph API (trainer/cuda/cudnn_graph.hpp), autotuned plans
//   graph-nhwc-bf16    the same in bf16: what PyTorch's channels-last bf16 runs
// For each: ms per call (median of --iterations after a warm-up) and TFLOP/s per direction and
// shape, then the sum over ResNet-50's 53 convolutions (each shape times its count; the stem
// has no backward-data, as in training). PyTorch trains channels-last bf16 ResNet-50 at ~4,700
// img/s at batch 256 on an H200, so its convolutions take well under 256/4700 s = 54 ms a step.
// Exit 77 without a GPU. `#` lines are metadata; the rest is a fixed-width table.
//   cudnn_conv_bench [--batch 64,256] [--variants a,b,...] [--iterations 10]
//                    [--max-candidates 10] [--shapes N] [--verbose]
#include <cudnn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_support.hpp"
#include "trainer/cuda/check.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/cudnn_graph.hpp"
#include "trainer/cuda/device.hpp"

using namespace scalebench::trainer::cuda;

namespace {

// One distinct convolution of ResNet-50 and how many times it occurs.
struct ResNetConv {
  const char* where;
  int size, in, out, kernel, stride, count;
};

// 23 shapes, 53 convolutions (the four shortcut 1x1s included).
const std::vector<ResNetConv>& resnet50_convs() {
  static const std::vector<ResNetConv> convs = {
      {"stem 7x7/2", 224, 3, 64, 7, 2, 1},
      {"layer1 1x1 reduce (first)", 56, 64, 64, 1, 1, 1},
      {"layer1 3x3", 56, 64, 64, 3, 1, 3},
      {"layer1 1x1 expand + shortcut", 56, 64, 256, 1, 1, 4},
      {"layer1 1x1 reduce", 56, 256, 64, 1, 1, 2},
      {"layer2 1x1 reduce (first)", 56, 256, 128, 1, 1, 1},
      {"layer2 3x3/2", 56, 128, 128, 3, 2, 1},
      {"layer2 1x1 expand", 28, 128, 512, 1, 1, 4},
      {"layer2 shortcut 1x1/2", 56, 256, 512, 1, 2, 1},
      {"layer2 1x1 reduce", 28, 512, 128, 1, 1, 3},
      {"layer2 3x3", 28, 128, 128, 3, 1, 3},
      {"layer3 1x1 reduce (first)", 28, 512, 256, 1, 1, 1},
      {"layer3 3x3/2", 28, 256, 256, 3, 2, 1},
      {"layer3 1x1 expand", 14, 256, 1024, 1, 1, 6},
      {"layer3 shortcut 1x1/2", 28, 512, 1024, 1, 2, 1},
      {"layer3 1x1 reduce", 14, 1024, 256, 1, 1, 5},
      {"layer3 3x3", 14, 256, 256, 3, 1, 5},
      {"layer4 1x1 reduce (first)", 14, 1024, 512, 1, 1, 1},
      {"layer4 3x3/2", 14, 512, 512, 3, 2, 1},
      {"layer4 1x1 expand", 7, 512, 2048, 1, 1, 3},
      {"layer4 shortcut 1x1/2", 14, 1024, 2048, 1, 2, 1},
      {"layer4 1x1 reduce", 7, 2048, 512, 1, 1, 2},
      {"layer4 3x3", 7, 512, 512, 3, 1, 2},
  };
  return convs;
}

ConvShape shape_of(const ResNetConv& c, int batch) {
  ConvShape s;
  s.n = batch;
  s.c = c.in;
  s.h = s.w = c.size;
  s.k = c.out;
  s.r = s.s = c.kernel;
  s.stride_h = s.stride_w = c.stride;
  s.pad_h = s.pad_w = c.kernel / 2;
  return s;
}

const ConvDirection kDirections[3] = {ConvDirection::forward, ConvDirection::backward_data,
                                      ConvDirection::backward_filter};

// Device buffers large enough for every shape at one batch, filled with the byte 0x3C (about
// 0.0115 as fp32 and as bf16: finite values, no denormals).
struct Buffers {
  DeviceArray<unsigned char> x, w, y;
  Buffers(std::size_t x_bytes, std::size_t w_bytes, std::size_t y_bytes)
      : x(x_bytes), w(w_bytes), y(y_bytes) {
    SB_CHECK(cudaMemset(x.data(), 0x3C, x.bytes()));
    SB_CHECK(cudaMemset(w.data(), 0x3C, w.bytes()));
    SB_CHECK(cudaMemset(y.data(), 0x3C, y.bytes()));
  }
};

// The median time in ms of `iterations` calls of `call` on `stream`, after one untimed call.
float median_ms(cudaStream_t stream, int iterations, const std::function<void()>& call) {
  call();
  std::vector<cudaEvent_t> events(static_cast<std::size_t>(iterations) + 1);
  for (cudaEvent_t& e : events) SB_CHECK(cudaEventCreate(&e));
  SB_CHECK(cudaEventRecord(events[0], stream));
  for (int i = 0; i < iterations; ++i) {
    call();
    SB_CHECK(cudaEventRecord(events[static_cast<std::size_t>(i) + 1], stream));
  }
  SB_CHECK(cudaEventSynchronize(events.back()));
  std::vector<float> times;
  for (std::size_t i = 1; i < events.size(); ++i) {
    float ms = 0;
    SB_CHECK(cudaEventElapsedTime(&ms, events[i - 1], events[i]));
    times.push_back(ms);
  }
  for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// ---- the legacy API: cudnnFind*, then cudnnConvolution* (trainer/cuda/conv2d.cpp's way) ----

class LegacyTensor : public Owned<cudnnTensorDescriptor_t, &cudnnDestroyTensorDescriptor> {
 public:
  LegacyTensor(cudnnTensorFormat_t format, cudnnDataType_t type, std::int64_t n, std::int64_t c,
               std::int64_t h, std::int64_t w) {
    SB_CHECK(cudnnCreateTensorDescriptor(&handle_));
    SB_CHECK(cudnnSetTensor4dDescriptor(handle_, format, type, static_cast<int>(n),
                                        static_cast<int>(c), static_cast<int>(h),
                                        static_cast<int>(w)));
  }
};
class LegacyFilter : public Owned<cudnnFilterDescriptor_t, &cudnnDestroyFilterDescriptor> {
 public:
  LegacyFilter(cudnnTensorFormat_t format, cudnnDataType_t type, const ConvShape& s) {
    SB_CHECK(cudnnCreateFilterDescriptor(&handle_));
    SB_CHECK(cudnnSetFilter4dDescriptor(handle_, type, format, static_cast<int>(s.k),
                                        static_cast<int>(s.c / s.groups), static_cast<int>(s.r),
                                        static_cast<int>(s.s)));
  }
};
class LegacyConv : public Owned<cudnnConvolutionDescriptor_t, &cudnnDestroyConvolutionDescriptor> {
 public:
  explicit LegacyConv(const ConvShape& s) {
    SB_CHECK(cudnnCreateConvolutionDescriptor(&handle_));
    SB_CHECK(cudnnSetConvolution2dDescriptor(
        handle_, static_cast<int>(s.pad_h), static_cast<int>(s.pad_w), static_cast<int>(s.stride_h),
        static_cast<int>(s.stride_w), 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  }
};

// The first result that ran within the workspace limit and without converting to fp16, as
// trainer/cuda/conv2d.cpp's `fastest` (cudnnFind* sorts by time).
template <typename Perf>
const Perf& first_usable(const Perf* results, int count, std::size_t limit) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS && results[i].memory <= limit &&
        results[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
      return results[i];
    }
  }
  throw std::runtime_error("cudnnFind found no algorithm that runs");
}

struct BenchContext {
  cudnnHandle_t cudnn = nullptr;
  cudaStream_t stream = nullptr;
  int iterations = 10;
  AutotuneOptions tune;
  bool verbose = false;
  DeviceArray<unsigned char> workspace;
  void reserve(std::size_t bytes) {
    if (bytes > workspace.bytes()) workspace = DeviceArray<unsigned char>(bytes);
  }
};

// ms of forward, backward-data and backward-filter of `s` through the legacy API.
std::array<float, 3> time_legacy(BenchContext& ctx, const ConvShape& s, cudnnTensorFormat_t format,
                                 cudnnDataType_t type, Buffers& b) {
  const LegacyTensor x(format, type, s.n, s.c, s.h, s.w);
  const LegacyTensor y(format, type, s.n, s.k, s.out_h(), s.out_w());
  const LegacyFilter w(format, type, s);
  const LegacyConv fwd(s), data(s), filter(s);
  std::size_t free_bytes = 0, total_bytes = 0;
  SB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t limit = free_bytes / 2;
  const float one = 1.0f, zero = 0.0f;
  cudnnHandle_t h = ctx.cudnn;
  std::array<float, 3> ms{};
  int count = 0;
  {
    cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    SB_CHECK(cudnnFindConvolutionForwardAlgorithm(h, x.get(), w.get(), fwd.get(), y.get(),
                                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, r));
    const auto& best = first_usable(r, count, limit);
    SB_CHECK(cudnnSetConvolutionMathType(fwd.get(), best.mathType));
    ctx.reserve(best.memory);
    ms[0] = median_ms(ctx.stream, ctx.iterations, [&] {
      SB_CHECK(cudnnConvolutionForward(h, &one, x.get(), b.x.data(), w.get(), b.w.data(), fwd.get(),
                                       best.algo, ctx.workspace.data(), ctx.workspace.bytes(),
                                       &zero, y.get(), b.y.data()));
    });
  }
  {
    cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    SB_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(h, w.get(), y.get(), data.get(), x.get(),
                                                       CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                       &count, r));
    const auto& best = first_usable(r, count, limit);
    SB_CHECK(cudnnSetConvolutionMathType(data.get(), best.mathType));
    ctx.reserve(best.memory);
    ms[1] = median_ms(ctx.stream, ctx.iterations, [&] {
      SB_CHECK(cudnnConvolutionBackwardData(h, &one, w.get(), b.w.data(), y.get(), b.y.data(),
                                            data.get(), best.algo, ctx.workspace.data(),
                                            ctx.workspace.bytes(), &zero, x.get(), b.x.data()));
    });
  }
  {
    cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    SB_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x.get(), y.get(), filter.get(), w.get(),
                                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                         &count, r));
    const auto& best = first_usable(r, count, limit);
    SB_CHECK(cudnnSetConvolutionMathType(filter.get(), best.mathType));
    ctx.reserve(best.memory);
    ms[2] = median_ms(ctx.stream, ctx.iterations, [&] {
      SB_CHECK(cudnnConvolutionBackwardFilter(h, &one, x.get(), b.x.data(), y.get(), b.y.data(),
                                              filter.get(), best.algo, ctx.workspace.data(),
                                              ctx.workspace.bytes(), &zero, w.get(), b.w.data()));
    });
  }
  return ms;
}

// ---- the graph API ----

std::array<float, 3> time_graph(BenchContext& ctx, ConvPlanCache& cache, const ConvShape& s,
                                cudnnDataType_t type, Buffers& b) {
  std::array<float, 3> ms{};
  const ConvBuffers buffers{b.x.data(), b.w.data(), b.y.data(), nullptr};
  for (int d = 0; d < 3; ++d) {
    const ConvProblem p{kDirections[d], s, TensorLayout::nhwc, type};
    const auto plan = cache.get(ctx.cudnn, p, buffers, ctx.tune);
    ctx.reserve(plan->workspace_bytes());
    ms[static_cast<std::size_t>(d)] = median_ms(ctx.stream, ctx.iterations, [&] {
      plan->execute(ctx.cudnn, buffers, ctx.workspace.data(), ctx.workspace.bytes());
    });
    if (ctx.verbose) std::printf("#   %s: %s\n", p.key().c_str(), plan->engine().c_str());
  }
  return ms;
}

// ---- the driver ----

struct Variant {
  std::string name;
  bool graph;
  cudnnTensorFormat_t format;
  cudnnDataType_t type;
};

const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> variants = {
      {"legacy-nchw-fp32", false, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT},
      {"legacy-nchw-bf16", false, CUDNN_TENSOR_NCHW, CUDNN_DATA_BFLOAT16},
      {"legacy-nhwc-bf16", false, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16},
      {"graph-nhwc-fp32", true, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT},
      {"graph-nhwc-bf16", true, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16},
  };
  return variants;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// One variant at one batch: a row per shape, then its total. Returns 0, or 1 when a shape failed.
int run_variant(BenchContext& ctx, const Variant& v, int batch, std::size_t shapes, Buffers& b) {
  ConvPlanCache cache;
  double total[3] = {0, 0, 0}, flops = 0;
  int failed = 0;
  for (std::size_t i = 0; i < shapes; ++i) {
    const ResNetConv& c = resnet50_convs()[i];
    const ConvShape s = shape_of(c, batch);
    std::array<float, 3> ms{};
    try {
      ms =
          v.graph ? time_graph(ctx, cache, s, v.type, b) : time_legacy(ctx, s, v.format, v.type, b);
    } catch (const std::exception& e) {
      std::printf("%-17s %5d %-30s %5d  failed: %s\n", v.name.c_str(), batch, c.where, c.count,
                  e.what());
      std::fflush(stdout);
      ++failed;
      continue;
    }
    const bool stem = i == 0;  // training never needs the image's gradient
    std::printf("%-17s %5d %-30s %5d %9.4f %9.4f %9.4f %8.1f %8.1f %8.1f\n", v.name.c_str(), batch,
                c.where, c.count, ms[0], ms[1], ms[2], s.flops() / ms[0] * 1e-9,
                s.flops() / ms[1] * 1e-9, s.flops() / ms[2] * 1e-9);
    std::fflush(stdout);
    for (int d = 0; d < 3; ++d) {
      if (stem && d == 1) continue;
      total[d] += c.count * ms[static_cast<std::size_t>(d)];
      flops += c.count * s.flops();
    }
  }
  const double step = total[0] + total[1] + total[2];
  std::printf(
      "# total %-17s batch %4d: %9.3f ms a step (fwd %.3f, dgrad %.3f, wgrad %.3f), "
      "%.1f TFLOP/s, %.0f img/s from the convolutions alone%s\n",
      v.name.c_str(), batch, step, total[0], total[1], total[2], flops / step * 1e-9,
      batch / step * 1e3,
      failed ? fmt::format(" (INCOMPLETE: {} shapes failed)", failed).c_str() : "");
  if (v.graph && ctx.verbose) {
    for (const AutotuneReport& r : cache.reports()) {
      std::printf("# autotune %s\n", r.key.c_str());
      for (const std::string& line : r.lines) std::printf("#   %s\n", line.c_str());
    }
  }
  std::fflush(stdout);
  return failed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::printf(
        "usage: cudnn_conv_bench [--batch 64,256] [--variants a,b] [--iterations 10]\n"
        "                        [--max-candidates 10] [--shapes N] [--verbose]\n");
    return 0;
  }
  if (device_count() == 0) {
    std::printf("cudnn_conv_bench: no GPU found (skipped)\n");
    return 77;
  }
  using scalebench::bench::option;
  BenchContext ctx;
  ctx.iterations = std::max(1, std::atoi(option(args, "--iterations", "10").c_str()));
  ctx.tune.max_candidates = std::max(1, std::atoi(option(args, "--max-candidates", "10").c_str()));
  ctx.verbose = std::find(args.begin(), args.end(), "--verbose") != args.end();
  const std::size_t shapes = std::min<std::size_t>(
      resnet50_convs().size(),
      static_cast<std::size_t>(std::max(1, std::atoi(option(args, "--shapes", "23").c_str()))));
  std::vector<Variant> variants;
  for (const std::string& name : split(option(args, "--variants", ""))) {
    const auto it = std::find_if(all_variants().begin(), all_variants().end(),
                                 [&](const Variant& v) { return v.name == name; });
    if (it == all_variants().end()) {
      std::fprintf(stderr, "cudnn_conv_bench: no variant '%s'\n", name.c_str());
      return 2;
    }
    variants.push_back(*it);
  }
  if (variants.empty()) variants = all_variants();
  SB_CHECK(cudaSetDevice(0));
  SB_CHECK(cudnnCreate(&ctx.cudnn));
  SB_CHECK(cudaStreamCreate(&ctx.stream));
  SB_CHECK(cudnnSetStream(ctx.cudnn, ctx.stream));
  const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
  std::printf("# cudnn_conv_bench: ResNet-50's %zu distinct convolutions of 23 (53 in all)\n",
              shapes);
  std::printf("# device: %s; cuDNN %zu; NVIDIA_TF32_OVERRIDE=%s; %d iterations, median\n",
              device_name(0).c_str(), cudnnGetVersion(), tf32 ? tf32 : "(unset)", ctx.iterations);
  std::printf("# %-15s %5s %-30s %5s %9s %9s %9s %8s %8s %8s\n", "variant", "batch", "shape",
              "count", "fwd", "dgrad", "wgrad", "fwd", "dgrad", "wgrad");
  std::printf("# %-15s %5s %-30s %5s %9s %9s %9s %8s %8s %8s\n", "", "", "", "", "ms", "ms", "ms",
              "TFLOP/s", "TFLOP/s", "TFLOP/s");
  int status = 0;
  for (const std::string& batch_text : split(option(args, "--batch", "64,256"))) {
    const int batch = std::max(1, std::atoi(batch_text.c_str()));
    std::size_t x_bytes = 0, w_bytes = 0, y_bytes = 0;
    for (std::size_t i = 0; i < shapes; ++i) {
      const ConvShape s = shape_of(resnet50_convs()[i], batch);
      x_bytes = std::max(x_bytes, s.x_count() * 4);
      w_bytes = std::max(w_bytes, s.w_count() * 4);
      y_bytes = std::max(y_bytes, s.y_count() * 4);
    }
    Buffers buffers(x_bytes, w_bytes, y_bytes);
    for (const Variant& v : variants) status |= run_variant(ctx, v, batch, shapes, buffers);
  }
  (void)cudnnDestroy(ctx.cudnn);
  (void)cudaStreamDestroy(ctx.stream);
  return status;
}
