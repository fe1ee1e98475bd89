#include "trainer/cpu/optimizer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

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
  Adadelta(std::size_t size, const OptimizerRecipe& r)
      : rho_(r.rho), eps_(r.eps), wd_(r.weight_decay), square_avg_(size), acc_delta_(size) {}
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
  float rho_, eps_, wd_;
  std::vector<float> square_avg_, acc_delta_;
};

class RmsProp final : public Optimizer {
 public:
  RmsProp(std::size_t size, const OptimizerRecipe& r)
      : alpha_(r.alpha), eps_(r.eps), wd_(r.weight_decay), square_avg_(size) {}
  void step(std::span<float> w, std::span<const float> g, double lr) override {
    const auto a = static_cast<float>(lr);
    for (std::size_t i = 0; i < w.size(); ++i) {
      const float gi = decayed(g[i], w[i], wd_);
      square_avg_[i] = alpha_ * square_avg_[i] + (1 - alpha_) * gi * gi;
      w[i] -= a * gi / (std::sqrt(square_avg_[i]) + eps_);
    }
  }

 private:
  float alpha_, eps_, wd_;
  std::vector<float> square_avg_;
};

// Adam, and RAdam (Liu et al. 2019) as torch.optim.RAdam (adam_scalars).
class Adam final : public Optimizer {
 public:
  Adam(std::size_t size, const OptimizerRecipe& r) : r_(r), m_(size), v_(size) {}
  void step(std::span<float> w, std::span<const float> g, double lr) override {
    const AdamScalars s = adam_scalars(r_, ++t_, lr);
    const float b1 = r_.beta1, b2 = r_.beta2, eps = r_.eps, wd = r_.weight_decay;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const float gi = decayed(g[i], w[i], wd);
      m_[i] = b1 * m_[i] + (1 - b1) * gi;
      v_[i] = b2 * v_[i] + (1 - b2) * gi * gi;
      w[i] -= s.adaptive ? s.scale * m_[i] / (s.adaptive_scale * std::sqrt(v_[i]) + eps)
                         : s.scale * m_[i];
    }
  }

 private:
  OptimizerRecipe r_;
  int t_ = 0;
  std::vector<float> m_, v_;
};

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& o, std::size_t size) {
  const OptimizerRecipe r = optimizer_recipe(o);
  switch (r.kind) {
    case OptimizerRecipe::Kind::sgd:
      return std::make_unique<Sgd>(size, r.momentum, r.nesterov, r.weight_decay);
    case OptimizerRecipe::Kind::adadelta:
      return std::make_unique<Adadelta>(size, r);
    case OptimizerRecipe::Kind::rmsprop:
      return std::make_unique<RmsProp>(size, r);
    case OptimizerRecipe::Kind::adam:
    case OptimizerRecipe::Kind::radam:
      return std::make_unique<Adam>(size, r);
  }
  throw std::logic_error("unknown optimizer kind");
}

}  // namespace scalebench::trainer::cpu
