// trainer/cuda/cudnn_graph.*: convolutions through cuDNN's graph API (backend descriptors)
// against a plain double-precision reference on the CPU, in NHWC: forward, backward-data and
// backward-filter for ResNet-50's kinds of layer (3x3 stride 1 and 2, 1x1, 1x1 stride 2, the 7x7
// stride-2 stem), fp32 within fp32 rounding (TF32 off: NVIDIA_TF32_OVERRIDE=0) and bf16 within
// bf16 rounding; the fused bias + ReLU against the unfused convolution; the plan cache.
// The GPU cases are skipped (SCALEBENCH_SKIP) where no GPU is present; the problem keys, the
// operation graphs (cuDNN finalizes them without a GPU) and the error messages are checked
// everywhere.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/cudnn_graph.hpp"
#include "trainer/cuda/device.hpp"
#include "trainer/errors.hpp"

using namespace scalebench::trainer;
using namespace scalebench::trainer::cuda;

namespace {

std::optional<std::string> why_no_gpu() {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);  // before cuDNN starts
  if (device_count() > 0) return std::nullopt;
  return "no GPU found";
}

// ResNet-50's kinds of convolution at test sizes (batch 2, smaller maps).
struct NamedShape {
  const char* name;
  ConvShape shape;
};
std::vector<NamedShape> test_shapes() {
  // {n, c, h, w, k, r, s, stride_h, stride_w, pad_h, pad_w}
  return {{"3x3 stride 1", {2, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1}},
          {"1x1 (expansion)", {2, 64, 14, 14, 256, 1, 1, 1, 1, 0, 0}},
          {"7x7 stride 2 (stem)", {2, 3, 56, 56, 64, 7, 7, 2, 2, 3, 3}},
          {"3x3 stride 2, odd input", {2, 32, 15, 15, 48, 3, 3, 2, 2, 1, 1}},
          {"1x1 stride 2 (shortcut)", {2, 64, 14, 14, 128, 1, 1, 2, 2, 0, 0}}};
}

// fp32 → bfloat16 bits, round to nearest even (finite values), and back.
std::uint16_t to_bf16_bits(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16_bits(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::vector<float> random_values(std::size_t n, std::uint32_t seed, bool bf16) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = bf16 ? from_bf16_bits(to_bf16_bits(dist(rng))) : dist(rng);
  return v;
}

// The NHWC reference of all three directions at once, in double: y = conv(x, w) and, from dy,
// dx and dw. Filters are KRSC.
struct Reference {
  std::vector<double> y, dx, dw;
};
Reference reference(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<float>& dy) {
  const std::int64_t P = s.out_h(), Q = s.out_w(), cg = s.c / s.groups, kg = s.k / s.groups;
  Reference r{std::vector<double>(s.y_count()), std::vector<double>(s.x_count()),
              std::vector<double>(s.w_count())};
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t q = 0; q < Q; ++q)
        for (std::int64_t k = 0; k < s.k; ++k) {
          const std::size_t yi = static_cast<std::size_t>(((n * P + p) * Q + q) * s.k + k);
          const double g = dy[yi];
          double sum = 0;
          for (std::int64_t i = 0; i < s.r; ++i) {
            const std::int64_t h = p * s.stride_h - s.pad_h + i * s.dilation_h;
            if (h < 0 || h >= s.h) continue;
            for (std::int64_t j = 0; j < s.s; ++j) {
              const std::int64_t v = q * s.stride_w - s.pad_w + j * s.dilation_w;
              if (v < 0 || v >= s.w) continue;
              for (std::int64_t c = 0; c < cg; ++c) {
                const auto xi =
                    static_cast<std::size_t>(((n * s.h + h) * s.w + v) * s.c + (k / kg) * cg + c);
                const auto wi = static_cast<std::size_t>(((k * s.r + i) * s.s + j) * cg + c);
                sum += static_cast<double>(x[xi]) * w[wi];
                r.dx[xi] += g * w[wi];
                r.dw[wi] += g * x[xi];
              }
            }
          }
          r.y[yi] = sum;
        }
  return r;
}

// Largest |a − b| relative to the largest |b|.
double relative_difference(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}

class CudnnHandle : public Owned<cudnnHandle_t, &cudnnDestroy> {
 public:
  CudnnHandle() { SB_CHECK(cudnnCreate(&handle_)); }
};

// A host tensor on the device in the problem's data type.
struct DeviceTensor {
  DeviceArray<unsigned char> bytes;
  std::size_t count = 0;
  bool bf16 = false;

  DeviceTensor(const std::vector<float>& host, bool as_bf16)
      : bytes(host.size() * (as_bf16 ? 2 : 4)), count(host.size()), bf16(as_bf16) {
    if (bf16) {
      std::vector<std::uint16_t> bits(host.size());
      std::transform(host.begin(), host.end(), bits.begin(), to_bf16_bits);
      SB_CHECK(cudaMemcpy(bytes.data(), bits.data(), bytes.bytes(), cudaMemcpyHostToDevice));
    } else {
      SB_CHECK(cudaMemcpy(bytes.data(), host.data(), bytes.bytes(), cudaMemcpyHostToDevice));
    }
  }
  std::vector<float> download() const {
    std::vector<float> host(count);
    if (bf16) {
      std::vector<std::uint16_t> bits(count);
      SB_CHECK(cudaMemcpy(bits.data(), bytes.data(), bytes.bytes(), cudaMemcpyDeviceToHost));
      std::transform(bits.begin(), bits.end(), host.begin(), from_bf16_bits);
    } else {
      SB_CHECK(cudaMemcpy(host.data(), bytes.data(), bytes.bytes(), cudaMemcpyDeviceToHost));
    }
    return host;
  }
};

// Runs `p` once through the cache (tuning it on first use) and returns what it writes: y, dx
// or dw by direction.
std::vector<float> run(ConvPlanCache& cache, cudnnHandle_t handle, const ConvProblem& p,
                       const std::vector<float>& x, const std::vector<float>& w,
                       const std::vector<float>& y, const std::vector<float>& bias = {}) {
  const bool bf16 = p.data_type == CUDNN_DATA_BFLOAT16;
  DeviceTensor dx(x, bf16), dw(w, bf16), dy(y, bf16);
  const DeviceTensor db(bias.empty() ? std::vector<float>(1) : bias, bf16);
  const ConvBuffers buffers{dx.bytes.data(), dw.bytes.data(), dy.bytes.data(),
                            p.bias ? db.bytes.data() : nullptr};
  const auto plan = cache.get(handle, p, buffers);
  DeviceArray<unsigned char> workspace(plan->workspace_bytes());
  plan->execute(handle, buffers, workspace.data(), workspace.bytes());
  SB_CHECK(cudaDeviceSynchronize());
  switch (p.direction) {
    case ConvDirection::forward:
      return dy.download();
    case ConvDirection::backward_data:
      return dx.download();
    case ConvDirection::backward_filter:
      return dw.download();
  }
  return {};
}

// Every direction of every test shape in `type` against the reference.
void check_directions(cudnnDataType_t type, double tolerance) {
  const bool bf16 = type == CUDNN_DATA_BFLOAT16;
  CudnnHandle handle;
  ConvPlanCache cache;
  std::string differences;
  for (const auto& [name, shape] : test_shapes()) {
    const auto x = random_values(shape.x_count(), 1, bf16);
    const auto w = random_values(shape.w_count(), 2, bf16);
    const auto dy = random_values(shape.y_count(), 3, bf16);
    const Reference ref = reference(shape, x, w, dy);
    for (auto direction :
         {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_filter}) {
      const ConvProblem p{direction, shape, TensorLayout::nhwc, type};
      const std::vector<float> out = run(cache, handle.get(), p, x, w, dy);
      const std::vector<double>& expected = direction == ConvDirection::forward         ? ref.y
                                            : direction == ConvDirection::backward_data ? ref.dx
                                                                                        : ref.dw;
      const auto plan = cache.get(handle.get(), p, {});
      const double d = relative_difference(out, expected);
      INFO(name << ": " << p.key() << " on " << plan->engine() << ": relative difference " << d);
      CHECK(d <= tolerance);
      differences += p.key() + ": " + std::to_string(d) + " (" + plan->engine() + ")\n";
    }
  }
  std::string summary;
  for (const AutotuneReport& r : cache.reports()) {
    summary += r.key + ": " + std::to_string(r.heuristic_configs) + " from the heuristics, " +
               std::to_string(r.fallback_configs) + " fallback, " + std::to_string(r.finalized) +
               " finalized, " + std::to_string(r.timed) + " timed; " + r.lines.back() + "\n";
  }
  MESSAGE("relative differences:\n" << differences << "autotunes:\n" << summary);
}

}  // namespace

TEST_CASE("conv graph: problem keys tell every choice apart and refuse impossible problems") {
  ConvProblem p;
  p.shape = {2, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1};
  CHECK(p.key() == "fwd nhwc fp32 x2x64x28x28 k64x3x3 s1x1 p1x1 d1x1 g1");
  CHECK(p.shape.out_h() == 28);
  CHECK(p.shape.flops() == doctest::Approx(2.0 * 2 * 64 * 28 * 28 * 64 * 9));
  ConvProblem q = p;
  q.bias = q.relu = true;
  CHECK(q.key() == p.key() + " +bias +relu");
  q = p;
  q.data_type = CUDNN_DATA_BFLOAT16;
  CHECK(q.key() != p.key());
  q = p;
  q.layout = TensorLayout::nchw;
  CHECK(q.key() != p.key());
  q = p;
  q.direction = ConvDirection::backward_filter;
  CHECK(q.key() != p.key());
  q.relu = true;
  CHECK_THROWS_AS((void)q.key(), std::invalid_argument);  // fusions are forward only
  q = p;
  q.data_type = CUDNN_DATA_HALF;
  CHECK_THROWS_AS((void)q.key(), std::invalid_argument);
  q = p;
  q.shape.r = 40;  // larger than the padded input
  CHECK_THROWS_AS((void)q.key(), std::invalid_argument);
  q = p;
  q.shape.groups = 3;
  CHECK_THROWS_AS((void)q.key(), std::invalid_argument);
}

TEST_CASE("conv graph: the reference's gradients are the adjoints of its forward (no GPU needed)") {
  // <dy, conv(x, w)> = <dx(dy, w), x> = <dw(dy, x), w>: checks the oracle's index arithmetic.
  for (const auto& [name, shape] : test_shapes()) {
    const auto x = random_values(shape.x_count(), 7, false);
    const auto w = random_values(shape.w_count(), 8, false);
    const auto dy = random_values(shape.y_count(), 9, false);
    const Reference r = reference(shape, x, w, dy);
    auto dot = [](const std::vector<double>& a, const std::vector<float>& b) {
      double sum = 0;
      for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
      return sum;
    };
    const double forward = dot(r.y, dy);
    INFO(name);
    CHECK(dot(r.dx, x) == doctest::Approx(forward).epsilon(1e-9));
    CHECK(dot(r.dw, w) == doctest::Approx(forward).epsilon(1e-9));
  }
}

TEST_CASE("conv graph: every direction, type and fusion makes an operation graph (no GPU needed)") {
  for (const auto& [name, shape] : test_shapes()) {
    for (auto type : {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16}) {
      for (auto direction :
           {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_filter}) {
        for (int fusion = 0; fusion < (direction == ConvDirection::forward ? 4 : 1); ++fusion) {
          ConvProblem p{direction,        shape, TensorLayout::nhwc, type, (fusion & 1) != 0,
                        (fusion & 2) != 0};
          INFO(name << ": " << p.key());
          CHECK_NOTHROW((void)build_conv_graph(p));
          p.layout = TensorLayout::nchw;
          CHECK_NOTHROW((void)build_conv_graph(p));
        }
      }
    }
  }
}

TEST_CASE("conv graph: a failed cuDNN call names the descriptor, the status and the caller") {
  BackendDescriptor tensor(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  try {
    tensor.finalize();  // no dimensions, no type: cuDNN refuses it
    FAIL("finalize accepted a tensor without attributes");
  } catch (const BackendError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("cudnnBackendFinalize(CUDNN_BACKEND_TENSOR_DESCRIPTOR)") != std::string::npos);
    CHECK(what.find("CUDNN_STATUS_") != std::string::npos);
    CHECK(what.find("test_cudnn_graph.cpp:") != std::string::npos);
  }
}

TEST_CASE("conv graph: fp32 NHWC forward, backward-data and backward-filter equal the reference") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  // fp32 sums of at most 1,568 products are within 1e-6; FFT and Winograd engines, which the
  // autotune may pick, round more (up to ~1e-4). A layout or index mistake is off by O(1).
  check_directions(CUDNN_DATA_FLOAT, 1e-3);
}

TEST_CASE("conv graph: bf16 NHWC forward, backward-data and backward-filter within bf16 rounding") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  // Inputs are bf16 exactly (the reference uses the same values); the output's rounding to
  // bf16 is 2^-9 of each value, so 1e-2 of the largest leaves room for fp32 accumulation.
  check_directions(CUDNN_DATA_BFLOAT16, 1e-2);
}

TEST_CASE("conv graph: a fused bias and ReLU equal the unfused convolution followed by them") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  CudnnHandle handle;
  ConvPlanCache cache;
  const ConvShape shape = test_shapes()[0].shape;
  for (auto type : {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16}) {
    const bool bf16 = type == CUDNN_DATA_BFLOAT16;
    const auto x = random_values(shape.x_count(), 4, bf16);
    const auto w = random_values(shape.w_count(), 5, bf16);
    const auto bias = random_values(static_cast<std::size_t>(shape.k), 6, bf16);
    const std::vector<float> y0(shape.y_count());
    const ConvProblem plain{ConvDirection::forward, shape, TensorLayout::nhwc, type};
    const std::vector<float> conv = run(cache, handle.get(), plain, x, w, y0);
    for (int fusion = 1; fusion < 4; ++fusion) {
      ConvProblem fused = plain;
      fused.bias = (fusion & 1) != 0;
      fused.relu = (fusion & 2) != 0;
      std::vector<double> expected(conv.size());
      for (std::size_t i = 0; i < conv.size(); ++i) {
        double v = conv[i] + (fused.bias ? bias[i % static_cast<std::size_t>(shape.k)] : 0.0);
        expected[i] = fused.relu ? std::max(v, 0.0) : v;
      }
      std::vector<float> out;
      try {
        out = run(cache, handle.get(), fused, x, w, y0, bias);
      } catch (const BackendError& e) {
        // Fused fp32 needs a runtime-fusion engine that takes fp32 with TF32 off (these tests
        // run with NVIDIA_TF32_OVERRIDE=0); where cuDNN has none, there is nothing to compare.
        // bf16, the fusion that matters for speed, must have one.
        if (bf16 || std::string(e.what()).find("has no plan") == std::string::npos) throw;
        MESSAGE("not compared: " << e.what());
        continue;
      }
      const double d = relative_difference(out, expected);
      INFO(fused.key() << " on " << cache.get(handle.get(), fused, {})->engine()
                       << ": relative difference " << d);
      // fp32: another engine may sum in another order; bf16: the unfused output was rounded
      // to bf16 before the bias, the fused one after it (two roundings of 2^-9 at most).
      CHECK(d <= (bf16 ? 1e-2 : 1e-5));
    }
  }
}

TEST_CASE("conv graph: the plan cache tunes a key once and returns the same plan for it") {
  SCALEBENCH_SKIP_IF(why_no_gpu());
  CudnnHandle handle;
  ConvPlanCache cache;
  const ConvShape shape = test_shapes()[1].shape;
  DeviceArray<float> x(shape.x_count()), w(shape.w_count()), y(shape.y_count());
  const ConvBuffers buffers{x.data(), w.data(), y.data(), nullptr};
  const ConvProblem p{ConvDirection::forward, shape, TensorLayout::nhwc, CUDNN_DATA_FLOAT};
  const auto first = cache.get(handle.get(), p, buffers);
  const auto again = cache.get(handle.get(), p, buffers);
  CHECK(first.get() == again.get());
  CHECK(cache.autotunes() == 1);
  CHECK(cache.size() == 1);
  CHECK(first->tuned_ms() > 0);
  ConvProblem other = p;
  other.direction = ConvDirection::backward_filter;
  const auto filter = cache.get(handle.get(), other, buffers);
  CHECK(filter.get() != first.get());
  CHECK(cache.autotunes() == 2);
  AutotuneOptions deterministic;
  deterministic.deterministic = true;
  CHECK(cache.get(handle.get(), p, buffers, deterministic).get() != first.get());
  CHECK(cache.size() == 3);
  // A plan refuses a workspace smaller than it asked for.
  if (first->workspace_bytes() > 0) {
    DeviceArray<unsigned char> small(first->workspace_bytes() - 1);
    CHECK_THROWS_AS(first->execute(handle.get(), buffers, small.data(), small.bytes()),
                    BackendError);
  }
  std::string lines;
  for (const std::string& line : cache.reports().front().lines) lines += line + "\n";
  MESSAGE(p.key() << ":\n" << lines);
}
