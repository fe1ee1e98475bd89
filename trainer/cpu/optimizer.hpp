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
#include "trainer/model/optimizer_recipe.hpp"

namespace scalebench::trainer::cpu {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update of `parameters` from `gradients` with learning rate `lr`. Weight decay (L2, added
  // to the gradient: g ← g + wd·w, as torch.optim) is applied first when options ask for it.
  virtual void step(std::span<float> parameters, std::span<const float> gradients, double lr) = 0;
};

// What --optimizer means, shared with every backend (trainer/model/optimizer_recipe.hpp).
using model::adam_scalars;
using model::AdamScalars;
using model::optimizer_names;
using model::optimizer_recipe;
using model::OptimizerRecipe;

// Throws UsageError for an unknown name. Defaults follow torch.optim: momentum 0.9 for
// momentum/nesterov when options.momentum is 0, Adadelta rho 0.9 eps 1e-6, RMSprop alpha 0.99
// eps 1e-8, Adam/RAdam betas (0.9, 0.999) eps 1e-8.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& options, std::size_t size);

}  // namespace scalebench::trainer::cpu
