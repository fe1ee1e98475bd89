#include "stats/group_descriptives.hpp"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <string>

#include "stats/descriptive.hpp"

namespace scalebench::stats {

// Student (1908) t interval for a mean, as R's t.test: mean -/+ qt((1 + confidence) / 2, n - 1) *
// sd / sqrt(n).
double students_t_quantile(double probability, double df) {
  if (!(probability > 0 && probability < 1))
    throw StatsError("a quantile needs a probability in (0, 1), not " +
                     std::to_string(probability));
  if (!(df > 0)) throw StatsError("a t quantile needs d.f. > 0, not " + std::to_string(df));
  if (std::isinf(df)) return boost::math::quantile(boost::math::normal(), probability);
  return boost::math::quantile(boost::math::students_t(df), probability);
}

GroupDescriptives describe_group(const std::vector<double>& values, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw StatsError("confidence must lie in (0, 1), e.g. 0.95; got " + std::to_string(confidence));
  }
  if (values.empty())
    throw StatsError("descriptives of an empty group (every group needs an observation)");
  for (double x : values) {
    if (!std::isfinite(x)) throw StatsError("a group holds a non-finite observation (NaN or inf)");
  }
  GroupDescriptives d;
  d.n = values.size();
  d.mean = mean(values);
  d.sd = sample_sd(values);
  if (!d.sd) return d;  // one observation: no spread, no interval
  const double n = static_cast<double>(d.n);
  d.se = *d.sd / std::sqrt(n);
  const boost::math::students_t_distribution<double> t(n - 1);
  const double half_width =
      boost::math::quantile(boost::math::complement(t, (1 - confidence) / 2)) * *d.se;
  d.ci = ConfidenceInterval{d.mean - half_width, d.mean + half_width};
  return d;
}

// describe_group over each group, in order.
std::vector<GroupDescriptives> describe_groups(const std::vector<std::vector<double>>& groups,
                                               double confidence) {
  std::vector<GroupDescriptives> out;
  out.reserve(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    try {
      out.push_back(describe_group(groups[i], confidence));
    } catch (const StatsError& e) {
      throw StatsError("group " + std::to_string(i) + ": " + e.what());
    }
  }
  return out;
}

}  // namespace scalebench::stats
