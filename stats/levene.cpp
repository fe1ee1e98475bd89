#include "stats/levene.hpp"

#include <cmath>
#include <utility>

#include "stats/anova.hpp"
#include "stats/descriptive.hpp"

namespace scalebench::stats {
namespace {

template <typename Centre>
LeveneTest absolute_deviation_anova(const std::vector<std::vector<double>>& groups, Centre centre) {
  one_way_anova(groups);  // validates the groups before any centre is taken
  // Centres of values at a large offset round at the offset: take them on shifted data (the
  // deviations are differences, unchanged by the shift).
  const auto shifted = shifted_by_first(groups);
  std::vector<std::vector<double>> deviations;
  deviations.reserve(groups.size());
  for (const auto& g : shifted) {
    const double c = centre(g);
    std::vector<double> z;
    z.reserve(g.size());
    for (double x : g) z.push_back(std::abs(x - c));
    deviations.push_back(std::move(z));
  }
  // The test compares the spread of z between groups with its spread within them. Without the
  // latter it is undefined, not significant: two observations per group always have equal |x - c|
  // (R's car::leveneTest then prints F = 4.5e30, p = 1.6e-61 from rounding).
  const OneWayAnova a = one_way_anova(deviations);
  if (a.ss_within <= 1e-12 * (a.ss_within + a.ss_between) || a.ss_within + a.ss_between == 0) {
    bool pairs = true;
    for (const auto& g : groups) pairs = pairs && g.size() <= 2;
    throw StatsError(pairs ? "undefined: with at most 2 observations per group, |x - centre| is "
                             "the same for both, so there is no within-group spread to test "
                             "against (3 or more per group are needed)"
                           : "undefined: |x - centre| does not vary within any group");
  }
  return {a.f, a.df_between, a.df_within, a.p};
}

}  // namespace

// Levene (1960), "Robust tests for equality of variances", in Contributions to Probability and
// Statistics.
LeveneTest levene_test(const std::vector<std::vector<double>>& groups) {
  return absolute_deviation_anova(groups, [](const std::vector<double>& g) { return mean(g); });
}

// Brown & Forsythe (1974, JASA 69:364): Levene's test about the median.
LeveneTest brown_forsythe_test(const std::vector<std::vector<double>>& groups) {
  return absolute_deviation_anova(groups, [](const std::vector<double>& g) { return median(g); });
}

}  // namespace scalebench::stats
