// The optimizer recipe: what --optimizer and its options mean, with torch.optim's defaults and
// per-step scalars. Backend-neutral: the CPU optimizers (trainer/cpu/optimizer.cpp) and the CUDA
// ones (trainer/cuda/optimizer.cpp) take their kind and hyper-parameters from here.
#pragma once

#include <string>
#include <vector>

#include "trainer/model/spec.hpp"

namespace scalebench::trainer::model {

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

}  // namespace scalebench::trainer::model
