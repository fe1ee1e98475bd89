// Per-group descriptive statistics with a t-based confidence interval for the mean.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

struct ConfidenceInterval {
  double lower = 0;
  double upper = 0;
};

struct GroupDescriptives {
  std::size_t n = 0;
  double mean = 0;
  std::optional<double> sd;  // sample sd (n - 1); absent for n < 2
  std::optional<double> se;  // sd / sqrt(n); absent for n < 2
  std::optional<ConfidenceInterval>
      ci;  // mean -/+ t_{(1+confidence)/2, n-1} * se; absent for n < 2
};

// Student's t quantile, R's qt(probability, df); the normal quantile for df = +inf. Throws
// StatsError for a probability outside (0, 1) or df <= 0.
double students_t_quantile(double probability, double df);

// As R's mean, sd and t.test(x, conf.level = confidence)$conf.int. Throws StatsError for an empty
// sample, a non-finite observation, or a confidence outside (0, 1).
GroupDescriptives describe_group(const std::vector<double>& values, double confidence = 0.95);
std::vector<GroupDescriptives> describe_groups(const std::vector<std::vector<double>>& groups,
                                               double confidence = 0.95);

}  // namespace scalebench::stats
