// The interaction contrast of a 2 x 2 design with its t confidence interval: for scaling, "is
// one framework's speed-up larger than the other's?" on the log of each run's images/s.
#pragma once

#include <array>
#include <vector>

#include "stats/error.hpp"
#include "stats/group_descriptives.hpp"

namespace scalebench::stats {

struct InteractionContrast {
  // c = (mean[1][1] - mean[1][0]) - (mean[0][1] - mean[0][0]) of the cell means.
  double estimate = 0;
  double se = 0;          // sqrt(MSE x sum over cells of 1 / n)
  double df = 0;          // N - 4
  double t = 0;           // estimate / se
  double p = 1;           // two-sided
  ConfidenceInterval ci;  // estimate -/+ t_{(1+confidence)/2, df} x se
};

// cells[a][b]: the observations of level a of the first factor and level b of the second, e.g.
// cells[framework][np] of log(images/s) per run. The pooled residual variance of the full
// (cell means) model is the error term, as in the interaction coefficient of
// lm(y ~ A * B) with treatment contrasts (Kutner et al., Applied Linear Statistical Models,
// 5th ed., section 19.9). Needs two observations in one cell at least, one in each, and a
// non-zero residual variance unless every cell's observations are equal (then se = 0 and the
// interval is the point; t and p follow the sign of the estimate).
InteractionContrast interaction_contrast(
    const std::array<std::array<std::vector<double>, 2>, 2>& cells, double confidence = 0.95);

}  // namespace scalebench::stats
