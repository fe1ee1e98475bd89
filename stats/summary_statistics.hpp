// One-way ANOVA and Tukey-Kramer from per-group summary statistics (n, mean, sd) alone, for studies
// that publish a table of means and standard deviations but not their observations.
#pragma once

#include <string>
#include <vector>

#include "stats/anova.hpp"
#include "stats/error.hpp"
#include "stats/tukey.hpp"

namespace scalebench::stats {

struct GroupSummary {
  std::string name;  // used in error messages only
  double n = 0;      // number of observations: a whole number >= 1
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1); ignored (may be NaN) when n == 1
};

// Throws StatsError for fewer than two groups, an n that is not a whole number >= 1, a non-finite
// mean, or (for n >= 2) a negative or non-finite sd.
void check_summaries(const std::vector<GroupSummary>& groups);

// The summaries of raw groups, named by `names` (else "0", "1", ...; two-pass mean and sd; sd is
// NaN for n == 1). Throws StatsError for an empty group or a non-finite observation.
std::vector<GroupSummary> summarize(const std::vector<std::vector<double>>& groups,
                                    const std::vector<std::string>& names = {});

// Fisher's one-way ANOVA: SS_within = sum (n_i - 1) sd_i^2, SS_between = sum n_i (mean_i -
// grand)^2. Same fields, edge cases (N > k required; F = inf or NaN when SS_within == 0) and p as
// one_way_anova.
OneWayAnova one_way_anova_from_summary(const std::vector<GroupSummary>& groups);

// Tukey-Kramer on all k(k-1)/2 pairs in R's order, as tukey_hsd on the raw data would give
// (diff = mean(b) - mean(a), se = sqrt(MS_within / 2 (1/n_a + 1/n_b)), p = P(Q_{k, N-k} > q)).
std::vector<TukeyPair> tukey_hsd_from_summary(const std::vector<GroupSummary>& groups,
                                              double confidence = 0.95);

}  // namespace scalebench::stats
