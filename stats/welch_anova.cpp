#include "stats/welch_anova.hpp"

#include <boost/math/distributions/fisher_f.hpp>
#include <cstddef>
#include <string>

#include "stats/descriptive.hpp"

namespace scalebench::stats {

// Welch (1951, Biometrika 38:330), in the form of R's oneway.test(var.equal = FALSE).
WelchAnova welch_anova_from_summary(const std::vector<GroupSummary>& groups) {
  check_summaries(groups);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string who =
        "Welch's ANOVA: group " + std::to_string(i) + " (" + groups[i].name + ")";
    if (groups[i].n < 2)
      throw StatsError(who + " has one observation; every group needs two or more");
    if (groups[i].sd == 0) {
      throw StatsError(
          who +
          " has zero variance, so its weight n/var is infinite; "
          "check the data (a constant metric?) or use a test without variance weights");
    }
  }
  const double k = static_cast<double>(groups.size());
  // Means relative to the first group's: the weighted mean of values at a large offset would
  // round at the offset (1e9 -> 1e-7 absolute); the statistic depends only on differences.
  const double shift = groups.front().mean;
  double sum_w = 0;
  for (const auto& g : groups) sum_w += g.n / (g.sd * g.sd);
  double weighted_mean = 0;
  for (const auto& g : groups) weighted_mean += g.n / (g.sd * g.sd) * (g.mean - shift);
  weighted_mean /= sum_w;
  double between = 0;
  double tmp = 0;
  for (const auto& g : groups) {
    const double w = g.n / (g.sd * g.sd);
    const double d = (g.mean - shift) - weighted_mean;
    between += w * d * d;
    const double share = 1 - w / sum_w;
    tmp += share * share / (g.n - 1);
  }
  tmp /= k * k - 1;
  WelchAnova r;
  r.f = between / ((k - 1) * (1 + 2 * (k - 2) * tmp));
  r.df_between = k - 1;
  r.df_within = 1 / (3 * tmp);
  boost::math::fisher_f_distribution<double> dist(r.df_between, r.df_within);
  r.p = boost::math::cdf(boost::math::complement(dist, r.f));
  return r;
}

// Welch (1951) on raw groups: two-pass group means and variances, then the summary form.
WelchAnova welch_anova(const std::vector<std::vector<double>>& groups,
                       const std::vector<std::string>& names) {
  if (groups.size() < 2)
    throw StatsError("Welch's ANOVA needs at least two groups, got " +
                     std::to_string(groups.size()));
  return welch_anova_from_summary(summarize(shifted_by_first(groups), names));
}

}  // namespace scalebench::stats
