// Welch's one-way ANOVA: equality of means without assuming equal variances.
#pragma once

#include <vector>

#include "stats/error.hpp"
#include "stats/summary_statistics.hpp"

namespace scalebench::stats {

struct WelchAnova {
  double f = 0;
  double df_between = 0;  // k - 1
  double df_within = 0;   // 1 / (3 * tmp), not a whole number in general
  double p = 1;           // P(F > f) from the F distribution's complement (no underflow to 0)
};

// Welch (1951), as R's oneway.test(var.equal = FALSE). Needs k >= 2 groups of n >= 2 each, and
// every group's variance > 0 (the weights are n_i / var_i): otherwise StatsError.
// Raw groups are shifted by their first observation first, so data at a large offset lose
// nothing; `names` name the groups in errors.
WelchAnova welch_anova(const std::vector<std::vector<double>>& groups,
                       const std::vector<std::string>& names = {});
WelchAnova welch_anova_from_summary(const std::vector<GroupSummary>& groups);

}  // namespace scalebench::stats
