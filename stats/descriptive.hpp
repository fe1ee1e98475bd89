// Descriptive statistics over a sample.
#pragma once

#include <optional>
#include <vector>

namespace scalebench::stats {

double mean(const std::vector<double>& values);  // throws StatsError on an empty sample
// Sample standard deviation (n - 1); absent for fewer than two values.
std::optional<double> sample_sd(const std::vector<double>& values);
double median(std::vector<double> values);       // throws StatsError on an empty sample

}  // namespace scalebench::stats
