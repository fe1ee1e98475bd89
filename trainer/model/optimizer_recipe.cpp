#include "trainer/model/optimizer_recipe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "trainer/errors.hpp"

namespace scalebench::trainer::model {

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names{"sgd",     "momentum", "nesterov", "adadelta",
                                              "rmsprop", "adam",     "radam"};
  return names;
}

OptimizerRecipe optimizer_recipe(const OptimizerOptions& o) {
  OptimizerRecipe r;
  r.weight_decay = static_cast<float>(o.weight_decay);
  using Kind = OptimizerRecipe::Kind;
  if (o.name == "sgd" || o.name == "momentum" || o.name == "nesterov") {
    r.kind = Kind::sgd;
    r.momentum = static_cast<float>(o.momentum);
    if (o.name != "sgd" && r.momentum == 0.0f) r.momentum = 0.9f;
    r.nesterov = o.name == "nesterov";
  } else if (o.name == "adadelta") {
    r.kind = Kind::adadelta;
    r.eps = 1e-6f;
  } else if (o.name == "rmsprop") {
    r.kind = Kind::rmsprop;
    r.eps = 1e-8f;
  } else if (o.name == "adam" || o.name == "radam") {
    r.kind = o.name == "adam" ? Kind::adam : Kind::radam;
    r.eps = 1e-8f;
  } else {
    throw UsageError(fmt::format("unknown optimizer '{}' (available: {})", o.name,
                                 fmt::join(optimizer_names(), ", ")));
  }
  return r;
}

AdamScalars adam_scalars(const OptimizerRecipe& r, int t, double lr) {
  const double b1 = double{r.beta1}, b2 = double{r.beta2};
  const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
  AdamScalars s;
  if (r.kind != OptimizerRecipe::Kind::radam) {
    s.scale = static_cast<float>(lr / bc1);
    s.adaptive_scale = static_cast<float>(1 / std::sqrt(bc2));
    return s;
  }
  const double rho_inf = 2 / (1 - b2) - 1;
  const double rho_t = rho_inf - 2 * t * std::pow(b2, t) / bc2;
  if (rho_t > 5) {
    const double rect =
        std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
    s.scale = static_cast<float>(lr * rect * std::sqrt(bc2) / bc1);
    s.adaptive_scale = 1;  // torch: √bc2 / (√v + eps)
  } else {
    s.scale = static_cast<float>(lr / bc1);
    s.adaptive = false;
  }
  return s;
}

}  // namespace scalebench::trainer::model
