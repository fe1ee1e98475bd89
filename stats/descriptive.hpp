// Descriptive statistics over a sample.
#pragma once

#include <optional>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

// Mean by a corrected two-pass sum; throws StatsError on an empty sample. NaN/inf propagate.
double mean(const std::vector<double>& values);
// Sample standard deviation (n - 1), two-pass; absent for fewer than two values. NaN/inf propagate.
std::optional<double> sample_sd(const std::vector<double>& values);
// Median (mean of the two middle values for even n); throws StatsError on an empty sample or a NaN.
double median(std::vector<double> values);

}  // namespace scalebench::stats
