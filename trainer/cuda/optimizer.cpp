#include "trainer/cuda/optimizer.hpp"

#include <stdexcept>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/device.hpp"
#include "trainer/model/optimizer_recipe.hpp"

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
  Adadelta(std::size_t size, const model::OptimizerRecipe& r)
      : r_(r), square_avg_(zeros(size)), acc_delta_(zeros(size)) {}
  void step(float* w, const float* g, std::size_t n, double lr, cudaStream_t stream) override {
    adadelta_step(w, g, square_avg_.data(), acc_delta_.data(), n, static_cast<float>(lr), r_.rho,
                  r_.eps, r_.weight_decay, stream);
  }

 private:
  model::OptimizerRecipe r_;
  DeviceArray<float> square_avg_, acc_delta_;
};

class RmsProp final : public DeviceOptimizer {
 public:
  RmsProp(std::size_t size, const model::OptimizerRecipe& r) : r_(r), square_avg_(zeros(size)) {}
  void step(float* w, const float* g, std::size_t n, double lr, cudaStream_t stream) override {
    rmsprop_step(w, g, square_avg_.data(), n, static_cast<float>(lr), r_.alpha, r_.eps,
                 r_.weight_decay, stream);
  }

 private:
  model::OptimizerRecipe r_;
  DeviceArray<float> square_avg_;
};

// Adam and RAdam: the step's scalars from model::adam_scalars, in double on the host as on the CPU.
class Adam final : public DeviceOptimizer {
 public:
  Adam(std::size_t size, const model::OptimizerRecipe& r)
      : r_(r), m_(zeros(size)), v_(zeros(size)) {}
  void step(float* w, const float* g, std::size_t n, double lr, cudaStream_t stream) override {
    const model::AdamScalars s = model::adam_scalars(r_, ++t_, lr);
    adam_step(w, g, m_.data(), v_.data(), n, s.scale, s.adaptive_scale, s.adaptive, r_.beta1,
              r_.beta2, r_.eps, r_.weight_decay, stream);
  }

 private:
  model::OptimizerRecipe r_;
  int t_ = 0;
  DeviceArray<float> m_, v_;
};

}  // namespace

std::unique_ptr<DeviceOptimizer> make_device_optimizer(const OptimizerOptions& o,
                                                       std::size_t size) {
  const model::OptimizerRecipe r = model::optimizer_recipe(o);  // UsageError for an unknown name
  switch (r.kind) {
    case model::OptimizerRecipe::Kind::sgd:
      return std::make_unique<Sgd>(size, r.momentum, r.nesterov, r.weight_decay);
    case model::OptimizerRecipe::Kind::adadelta:
      return std::make_unique<Adadelta>(size, r);
    case model::OptimizerRecipe::Kind::rmsprop:
      return std::make_unique<RmsProp>(size, r);
    case model::OptimizerRecipe::Kind::adam:
    case model::OptimizerRecipe::Kind::radam:
      return std::make_unique<Adam>(size, r);
  }
  throw std::logic_error("unknown optimizer kind");
}

}  // namespace scalebench::trainer::cuda
