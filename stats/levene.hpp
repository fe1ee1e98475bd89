// Levene's and Brown-Forsythe's tests for equal variances across k groups.
#pragma once

#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

struct LeveneTest {
  double f = 0;
  double df_between = 0;  // k - 1
  double df_within = 0;   // N - k
  double p = 1;           // P(F > f) from the complement
};

// The one-way ANOVA F of z_ij = |x_ij - centre_i|: centre = group mean (Levene 1960;
// car::leveneTest center = mean) or group median (Brown & Forsythe 1974; car::leveneTest's default
// center = median, robust to skew and heavy tails). Throws StatsError where one_way_anova does
// (fewer than two groups, an empty group, a non-finite observation, N <= k), and when z does not
// vary within any group (always so with at most 2 observations per group): the test is then
// undefined, where R prints F = NaN, or F = 4.5e30 and p = 1.6e-61 from rounding.
LeveneTest levene_test(const std::vector<std::vector<double>>& groups);
LeveneTest brown_forsythe_test(const std::vector<std::vector<double>>& groups);

}  // namespace scalebench::stats
