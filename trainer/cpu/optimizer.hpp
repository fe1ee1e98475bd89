// Optimizers over the flat parameter and gradient buffers, in PyTorch 1.13's formulations
// (torch.optim), so that a step can be checked against PyTorch's
// (tests/trainer/test_optimizer.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/backend.hpp"

namespace scalebench::trainer::cpu {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update of `parameters` from `gradients` with learning rate `lr`. Weight decay (L2, added
  // to the gradient: g ← g + wd·w, as torch.optim) is applied first when options ask for it.
  virtual void step(std::span<float> parameters, std::span<const float> gradients, double lr) = 0;
};

// The names --optimizer accepts.
const std::vector<std::string>& optimizer_names();

// What --optimizer and its options mean, with torch.optim's defaults: the one place both
// backends' optimizers (this file's and trainer/cuda/optimizer.cpp's) take their kind and
// hyper-parameters from.
struct OptimizerRecipe {
  enum class Kind { sgd, adadelta, rmsprop, adam, radam };
  Kind kind = Kind::sgd;
  float weight_decay = 0;
  float momentum = 0;     // sgd: 0 for plain SGD; 0.9 for momentum/nesterov unless given
  bool nesterov = false;  // sgd
  float rho = 0.9f;       // adadelta
  float alpha = 0.99f;    // rmsprop
  float beta1 = 0.9f, beta2 = 0.999f;  // adam, radam
  float eps = 0;                       // adadelta 1e-6, rmsprop/adam/radam 1e-8
};
// Throws UsageError for an unknown name.
OptimizerRecipe optimizer_recipe(const OptimizerOptions& options);

// Adam's (and RAdam's) per-step scalars, computed in double as torch.optim does: the update is
// w −= scale·m / (adaptive_scale·√v + eps) when adaptive, else w −= scale·m (RAdam's first
// steps, before the variance is tractable). `step` counts from 1.
struct AdamScalars {
  float scale = 0, adaptive_scale = 0;
  bool adaptive = true;
};
AdamScalars adam_scalars(const OptimizerRecipe& recipe, int step, double lr);

// Throws UsageError for an unknown name. Defaults follow torch.optim: momentum 0.9 for
// momentum/nesterov when options.momentum is 0, Adadelta rho 0.9 eps 1e-6, RMSprop alpha 0.99
// eps 1e-8, Adam/RAdam betas (0.9, 0.999) eps 1e-8.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& options, std::size_t size);

}  // namespace scalebench::trainer::cpu
