#include "trainer/cuda/optimizer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "trainer/cpu/optimizer.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/device.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

// Optimizer state starts at zero, as torch.optim's.
DeviceArray<float> zeros(std::size_t n) {
  DeviceArray<float> a(n);
  if (n > 0) SB_CHECK(cudaMemset(a.data(), 0, a.bytes()));
  return a;
}

class Sgd final : public DeviceOptimizer {
 public:
  Sgd(std::size_t size, float momentum, bool nesterov, float wd)
      : momentum_(momentum), nesterov_(nesterov), wd_(wd) {
    if (momentum_ != 0.0f) velocity_ = zeros(size);
  }
  void step(float* w, const float* g, std::size_t n, double lr, cudaStream_t stream) override {
    if (velocity_.size() == 0) {
      sgd_step(w, g, n, static_cast<float>(lr), wd_, stream);
    } else {
      momentum_step(w, g, velocity_.data(), n, static_cast<float>(lr), momentum_, nesterov_, wd_,
                    stream);
    }
  }

 private:
  float momentum_;
  bool nesterov_;
  float wd_;
  DeviceArray<float> velocity_;
};

class Adadelta final : public DeviceOptimizer {
 public:
  Adadelta(std::size_t size, float wd) : wd_(wd), square_avg_(zeros(size)), acc_delta_(zeros(size)) {}
  void step(float* w, const float* g, std::size_t n, double lr, cudaStream_t stream) override {
    adadelta_step(w, g, square_avg_.data(), acc_delta_.data(), n, static_cast<float>(lr), 0.9f,
                  1e-6f, wd_, stream);
  }

 private:
  float wd_;
  DeviceArray<float> square_avg_, acc_delta_;
};

class RmsProp final : public DeviceOptimizer {
 public:
  RmsProp(std::size_t size, float wd) : wd_(wd), square_avg_(zeros(size)) {}
  void step(float* w, const float* g, std::size_t n, double lr, cudaStream_t stream) override {
    rmsprop_step(w, g, square_avg_.data(), n, static_cast<float>(lr), 0.99f, 1e-8f, wd_, stream);
  }

 private:
  float wd_;
  DeviceArray<float> square_avg_;
};

// The step's scalars in double on the host, exactly as trainer/cpu/optimizer.cpp.
class Adam final : public DeviceOptimizer {
 public:
  Adam(std::size_t size, float wd, bool rectified)
      : wd_(wd), rectified_(rectified), m_(zeros(size)), v_(zeros(size)) {}
  void step(float* w, const float* g, std::size_t n, double lr, cudaStream_t stream) override {
    ++t_;
    const double b1 = double{b1_}, b2 = double{b2_};
    const double bc1 = 1 - std::pow(b1, t_), bc2 = 1 - std::pow(b2, t_);
    float scale = 0, adaptive_scale = 0;
    bool adaptive = true;
    if (!rectified_) {
      scale = static_cast<float>(lr / bc1);
      adaptive_scale = static_cast<float>(1 / std::sqrt(bc2));
    } else {
      const double rho_inf = 2 / (1 - b2) - 1;
      const double rho_t = rho_inf - 2 * t_ * std::pow(b2, t_) / bc2;
      if (rho_t > 5) {
        const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                      ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        scale = static_cast<float>(lr * rect * std::sqrt(bc2) / bc1);
        adaptive_scale = 1;
      } else {
        scale = static_cast<float>(lr / bc1);
        adaptive = false;
      }
    }
    adam_step(w, g, m_.data(), v_.data(), n, scale, adaptive_scale, adaptive, b1_, b2_, 1e-8f, wd_,
              stream);
  }

 private:
  float b1_ = 0.9f, b2_ = 0.999f, wd_;
  bool rectified_;
  int t_ = 0;
  DeviceArray<float> m_, v_;
};

}  // namespace

std::unique_ptr<DeviceOptimizer> make_device_optimizer(const OptimizerOptions& o,
                                                       std::size_t size) {
  const auto wd = static_cast<float>(o.weight_decay);
  const auto momentum = static_cast<float>(o.momentum);
  if (o.name == "sgd") return std::make_unique<Sgd>(size, momentum, false, wd);
  if (o.name == "momentum" || o.name == "nesterov") {
    return std::make_unique<Sgd>(size, momentum != 0.0f ? momentum : 0.9f, o.name == "nesterov",
                                 wd);
  }
  if (o.name == "adadelta") return std::make_unique<Adadelta>(size, wd);
  if (o.name == "rmsprop") return std::make_unique<RmsProp>(size, wd);
  if (o.name == "adam") return std::make_unique<Adam>(size, wd, false);
  if (o.name == "radam") return std::make_unique<Adam>(size, wd, true);
  throw UsageError(fmt::format("unknown optimizer '{}' (available: {})", o.name,
                               fmt::join(cpu::optimizer_names(), ", ")));
}

}  // namespace scalebench::trainer::cuda
