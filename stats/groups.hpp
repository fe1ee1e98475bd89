// Internal: per-group sums about shifted, two-pass means, shared by the ANOVA and Tukey HSD.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace scalebench::stats::detail {

// Group summaries of data shifted by one of its own values (`shift`): subtracting an observation is
// exact for observations within a factor of two of it (Sterbenz), so 1e12 + 0.1-sized effects keep
// full precision in `means`, the grand mean and the sums of squares.
struct GroupSummary {
  double shift = 0;                // the subtracted observation
  std::vector<double> means;       // mean of group i minus shift
  std::vector<std::size_t> sizes;  // n_i
  double grand_mean = 0;           // mean of all observations minus shift
  double ss_within = 0;            // sum over groups of sum (x - mean_i)^2
  double ss_between = 0;           // sum over groups of n_i (mean_i - grand_mean)^2
  std::size_t total = 0;           // N
};

// Throws StatsError, naming `method`, for fewer than `min_groups` groups, an empty group or a
// non-finite observation: the input every group-comparing method refuses.
void check_groups(const std::vector<std::vector<double>>& groups, std::string_view method,
                  std::size_t min_groups = 2);

// Throws StatsError for fewer than two groups, an empty group or a non-finite observation.
GroupSummary summarize_groups(const std::vector<std::vector<double>>& groups);

}  // namespace scalebench::stats::detail
