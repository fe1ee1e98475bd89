#include "stats/groups.hpp"

#include <cmath>
#include <string>

#include "stats/error.hpp"

namespace scalebench::stats::detail {
namespace {

// Two-pass mean of (x - shift): the second pass adds back the rounding error of the first
// (Chan, Golub & LeVeque 1983, "Algorithms for computing the sample variance", corrected two-pass).
double shifted_mean(const std::vector<double>& values, double shift) {
  double sum = 0;
  for (double x : values) sum += x - shift;
  const double n = static_cast<double>(values.size());
  const double first = sum / n;
  double correction = 0;
  for (double x : values) correction += (x - shift) - first;
  return first + correction / n;
}

}  // namespace

void check_groups(const std::vector<std::vector<double>>& groups, std::string_view method,
                  std::size_t min_groups) {
  if (groups.size() < min_groups) {
    throw StatsError(std::string(method) + " needs at least " + std::to_string(min_groups) +
                     " groups, got " + std::to_string(groups.size()) +
                     " (compare at least two configurations)");
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].empty()) {
      throw StatsError("group " + std::to_string(i) +
                       " is empty (every group needs an observation)");
    }
    for (double x : groups[i]) {
      if (!std::isfinite(x)) {
        throw StatsError("group " + std::to_string(i) +
                         " holds a non-finite observation (NaN or inf)");
      }
    }
  }
}

GroupSummary summarize_groups(const std::vector<std::vector<double>>& groups) {
  check_groups(groups, "one-way ANOVA");
  GroupSummary s;
  s.shift = groups.front().front();
  double all_sum = 0;
  for (const auto& g : groups) {
    s.means.push_back(shifted_mean(g, s.shift));
    s.sizes.push_back(g.size());
    s.total += g.size();
    for (double x : g) all_sum += x - s.shift;
  }
  // Grand mean, two-pass over every observation.
  const double n = static_cast<double>(s.total);
  const double first = all_sum / n;
  double correction = 0;
  for (const auto& g : groups) {
    for (double x : g) correction += (x - s.shift) - first;
  }
  s.grand_mean = first + correction / n;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (double x : groups[i]) {
      const double d = (x - s.shift) - s.means[i];
      s.ss_within += d * d;
    }
    const double d = s.means[i] - s.grand_mean;
    s.ss_between += static_cast<double>(s.sizes[i]) * d * d;
  }
  return s;
}

}  // namespace scalebench::stats::detail
