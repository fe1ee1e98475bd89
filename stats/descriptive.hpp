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
// The groups minus their first observation: exact for values within a factor of two of it
// (Sterbenz), so that means and variances of data at a large offset (1e9 + small effects) keep
// full precision; statistics that depend only on differences are unchanged. Empty input stays so.
std::vector<std::vector<double>> shifted_by_first(const std::vector<std::vector<double>>& groups);

}  // namespace scalebench::stats
