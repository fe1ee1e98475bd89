#include "stats/descriptive.hpp"

#include <algorithm>
#include <cmath>

#include "stats/error.hpp"

namespace scalebench::stats {

// Corrected two-pass mean (Chan, Golub & LeVeque 1983): the second pass removes the first's
// rounding.
double mean(const std::vector<double>& values) {
  if (values.empty()) throw StatsError("mean of an empty sample");
  const double n = static_cast<double>(values.size());
  double sum = 0;
  for (double x : values) sum += x;
  if (!std::isfinite(sum) &&
      std::all_of(values.begin(), values.end(), [](double x) { return std::isfinite(x); })) {
    // Finite values whose sum overflows (1e308 + 1e308): the same mean from x / n.
    double scaled = 0;
    for (double x : values) scaled += x / n;
    return scaled;
  }
  const double first = sum / n;
  double correction = 0;
  for (double x : values) correction += x - first;
  return first + correction / n;
}

// Two-pass sample standard deviation with n - 1 (Chan, Golub & LeVeque 1983, eq. 1.7).
std::optional<double> sample_sd(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  const double m = mean(values);
  double ss = 0;
  double sum_d = 0;
  for (double x : values) {
    const double d = x - m;
    ss += d * d;
    sum_d += d;
  }
  const double n = static_cast<double>(values.size());
  if (!std::isfinite(ss) && std::isfinite(m)) {
    // Deviations whose squares overflow (values near 1e308): the same sd, scaled by the largest.
    double largest = 0;
    for (double x : values) largest = std::max(largest, std::abs(x - m));
    double scaled = 0;
    for (double x : values) scaled += ((x - m) / largest) * ((x - m) / largest);
    return largest * std::sqrt(scaled / (n - 1));
  }
  return std::sqrt(std::max(0.0, (ss - sum_d * sum_d / n) / (n - 1)));
}

// Median: middle order statistic, or the mean of the two middle ones (Hyndman & Fan 1996, type 7 at
// 0.5).
double median(std::vector<double> values) {
  if (values.empty()) throw StatsError("median of an empty sample");
  if (std::any_of(values.begin(), values.end(), [](double x) { return std::isnan(x); })) {
    throw StatsError("median of a sample holding NaN (NaN has no place in the order)");
  }
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  if (lower == upper) return upper;    // also keeps {inf, inf} at inf
  return lower + (upper - lower) / 2;  // no overflow for large same-signed values
}

std::vector<std::vector<double>> shifted_by_first(const std::vector<std::vector<double>>& groups) {
  double shift = 0;
  for (const auto& g : groups)
    if (!g.empty()) {
      shift = g.front();
      break;
    }
  if (!std::isfinite(shift)) return groups;  // the methods' own checks name the bad value
  auto out = groups;
  for (auto& g : out)
    for (double& x : g) x -= shift;
  return out;
}

}  // namespace scalebench::stats
