#include "stats/anova.hpp"

#include <boost/math/distributions/fisher_f.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "stats/groups.hpp"

namespace scalebench::stats {

// Fisher's one-way ANOVA as R's aov/summary.aov computes it (Scheffe 1959, "The Analysis of
// Variance", ch. 3).
OneWayAnova one_way_anova(const std::vector<std::vector<double>>& groups) {
  const detail::GroupSummary s = detail::summarize_groups(groups);
  const double k = static_cast<double>(groups.size());
  const double n = static_cast<double>(s.total);
  if (n - k < 1) {
    throw StatsError(
        "one-way ANOVA needs more observations than groups (N=" + std::to_string(s.total) +
        ", k=" + std::to_string(groups.size()) + "); repeat some measurement");
  }
  return one_way_anova_from_sums(s.ss_between, s.ss_within, k, n);
}

// The ANOVA table from its sums of squares (Scheffe 1959, ch. 3), shared by raw and summary input.
OneWayAnova one_way_anova_from_sums(double ss_between, double ss_within, double k, double n) {
  check_sums_of_squares(ss_between, ss_within);
  OneWayAnova r;
  r.ss_between = ss_between;
  r.ss_within = ss_within;
  r.df_between = k - 1;
  r.df_within = n - k;
  r.ms_between = r.ss_between / r.df_between;
  r.ms_within = r.ss_within / r.df_within;
  if (r.ms_within > 0) {
    r.f = r.ms_between / r.ms_within;
    boost::math::fisher_f_distribution<double> dist(r.df_between, r.df_within);
    r.p = boost::math::cdf(
        boost::math::complement(dist, r.f));  // upper tail directly: 1e-258 stays 1e-258
  } else if (r.ms_between > 0) {
    r.f = std::numeric_limits<double>::infinity();  // no noise, real differences: certain
    r.p = 0;
  } else {
    // Every observation equal: 0/0 carries no evidence either way, so F and p are NaN (as in R).
    r.f = std::numeric_limits<double>::quiet_NaN();
    r.p = std::numeric_limits<double>::quiet_NaN();
  }
  return r;
}

}  // namespace scalebench::stats
