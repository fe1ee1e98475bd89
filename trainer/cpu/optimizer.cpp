#include "trainer/cpu/optimizer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "trainer/errors.hpp"

namespace scalebench::trainer::cpu {
namespace {

// g + wd·w, the L2 weight decay of torch.optim.
inline float decayed(float g, float w, float wd) { return g + wd * w; }

class Sgd final : public Optimizer {
 public:
  Sgd(std::size_t size, float momentum, bool nesterov, float wd)
      : momentum_(momentum), nesterov_(nesterov), wd_(wd) {
    if (momentum_ != 0.0f) velocity_.assign(size, 0.0f);
  }
  void step(std::span<float> w, std::span<const float> g, double lr) override {
    const auto a = static_cast<float>(lr);
    const std::size_t n = w.size();
    if (velocity_.empty()) {
      for (std::size_t i = 0; i < n; ++i) w[i] -= a * decayed(g[i], w[i], wd_);
      return;
    }
    // torch.optim.SGD: v ← μ·v + g (v = g at the first step, the same with v = 0);
    // Nesterov steps along g + μ·v.
    const float mu = momentum_;
    for (std::size_t i = 0; i < n; ++i) {
      const float gi = decayed(g[i], w[i], wd_);
      velocity_[i] = mu * velocity_[i] + gi;
      w[i] -= a * (nesterov_ ? gi + mu * velocity_[i] : velocity_[i]);
    }
  }

 private:
  float momentum_;
  bool nesterov_;
  float wd_;
  std::vector<float> velocity_;
};

class Adadelta final : public Optimizer {
 public:
  Adadelta(std::size_t size, float wd) : wd_(wd), square_avg_(size), acc_delta_(size) {}
  void step(std::span<float> w, std::span<const float> g, double lr) override {
    const auto a = static_cast<float>(lr);
    const float rho = rho_, eps = eps_, wd = wd_;
    float* __restrict wp = w.data();
    const float* __restrict gp = g.data();
    float* __restrict sq = square_avg_.data();
    float* __restrict acc = acc_delta_.data();
    const auto n = static_cast<std::int64_t>(w.size());
    // Element-wise and independent: vectorized (sqrt and division are exact in SIMD too).
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const float gi = decayed(gp[i], wp[i], wd);
      const float s = rho * sq[i] + (1 - rho) * gi * gi;
      sq[i] = s;
      const float delta = std::sqrt(acc[i] + eps) / std::sqrt(s + eps) * gi;
      acc[i] = rho * acc[i] + (1 - rho) * delta * delta;
      wp[i] -= a * delta;
    }
  }

 private:
  float rho_ = 0.9f, eps_ = 1e-6f, wd_;
  std::vector<float> square_avg_, acc_delta_;
};

class RmsProp final : public Optimizer {
 public:
  RmsProp(std::size_t size, float wd) : wd_(wd), square_avg_(size) {}
  void step(std::span<float> w, std::span<const float> g, double lr) override {
    const auto a = static_cast<float>(lr);
    for (std::size_t i = 0; i < w.size(); ++i) {
      const float gi = decayed(g[i], w[i], wd_);
      square_avg_[i] = alpha_ * square_avg_[i] + (1 - alpha_) * gi * gi;
      w[i] -= a * gi / (std::sqrt(square_avg_[i]) + eps_);
    }
  }

 private:
  float alpha_ = 0.99f, eps_ = 1e-8f, wd_;
  std::vector<float> square_avg_;
};

// Adam, and RAdam (Liu et al. 2019) as torch.optim.RAdam: Adam's step times the variance
// rectification once the approximated SMA length exceeds 5, plain momentum SGD before.
class Adam final : public Optimizer {
 public:
  Adam(std::size_t size, float wd, bool rectified) : wd_(wd), rectified_(rectified), m_(size), v_(size) {}
  void step(std::span<float> w, std::span<const float> g, double lr) override {
    ++t_;
    const double bc1 = 1 - std::pow(double{b1_}, t_), bc2 = 1 - std::pow(double{b2_}, t_);
    float scale = 0, adaptive_scale = 0;  // w −= scale·m / (adaptive_scale·√v + eps) or scale·m
    bool adaptive = true;
    if (!rectified_) {
      scale = static_cast<float>(lr / bc1);
      adaptive_scale = static_cast<float>(1 / std::sqrt(bc2));
    } else {
      const double rho_inf = 2 / (1 - double{b2_}) - 1;
      const double rho_t = rho_inf - 2 * t_ * std::pow(double{b2_}, t_) / bc2;
      if (rho_t > 5) {
        const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                      ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        scale = static_cast<float>(lr * rect * std::sqrt(bc2) / bc1);
        adaptive_scale = 1;  // torch: √bc2 / (√v + eps)
      } else {
        scale = static_cast<float>(lr / bc1);
        adaptive = false;
      }
    }
    for (std::size_t i = 0; i < w.size(); ++i) {
      const float gi = decayed(g[i], w[i], wd_);
      m_[i] = b1_ * m_[i] + (1 - b1_) * gi;
      v_[i] = b2_ * v_[i] + (1 - b2_) * gi * gi;
      w[i] -= adaptive ? scale * m_[i] / (adaptive_scale * std::sqrt(v_[i]) + eps_) : scale * m_[i];
    }
  }

 private:
  float b1_ = 0.9f, b2_ = 0.999f, eps_ = 1e-8f, wd_;
  bool rectified_;
  int t_ = 0;
  std::vector<float> m_, v_;
};

}  // namespace

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names{"sgd",     "momentum", "nesterov", "adadelta",
                                              "rmsprop", "adam",     "radam"};
  return names;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& o, std::size_t size) {
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
                               fmt::join(optimizer_names(), ", ")));
}

}  // namespace scalebench::trainer::cpu
