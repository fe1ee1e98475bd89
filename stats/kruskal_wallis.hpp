// Kruskal-Wallis rank test: do k groups come from the same distribution?
#pragma once

#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

struct KruskalWallis {
  double h = 0;   // tie-corrected statistic
  double df = 0;  // k - 1
  double p = 1;   // P(chi2_df > h), from the complement (no underflow to 0)
};

// Kruskal & Wallis (1952), as R's kruskal.test: mid-ranks for ties and H divided by
// 1 - sum(t^3 - t) / (N^3 - N). Throws StatsError for fewer than two groups, an empty group, a
// non-finite observation, or every observation tied (H would be 0/0; R returns NaN).
KruskalWallis kruskal_wallis(const std::vector<std::vector<double>>& groups);

}  // namespace scalebench::stats
