#include "stats/tukey.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "stats/anova.hpp"
#include "stats/groups.hpp"

namespace scalebench::stats {
namespace {

TukeyPair compare(const detail::GroupSummary& s, std::size_t a, std::size_t b, double ms_within, double k,
                  double df, double critical) {
  TukeyPair pair;
  pair.a = a;
  pair.b = b;
  pair.diff = s.means[b] - s.means[a];  // both shifted by the same observation: the shift cancels
  const double se = std::sqrt(ms_within / 2 *
                              (1 / static_cast<double>(s.sizes[a]) + 1 / static_cast<double>(s.sizes[b])));
  if (se > 0) {
    pair.q = std::abs(pair.diff) / se;
    pair.p_adjusted = studentized_range_survival(pair.q, k, df);
    pair.lower = pair.diff - critical * se;
    pair.upper = pair.diff + critical * se;
  } else {
    // No within-group noise: a difference is certain, no difference is 0/0 (NaN, as the ANOVA's F).
    pair.q = pair.diff != 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    pair.p_adjusted = pair.diff != 0 ? 0 : std::numeric_limits<double>::quiet_NaN();
    pair.lower = pair.upper = pair.diff;
  }
  return pair;
}

}  // namespace

// Tukey (1953) HSD with the Tukey-Kramer standard error (Kramer 1956), as R's TukeyHSD.aov.
std::vector<TukeyPair> tukey_hsd(const std::vector<std::vector<double>>& groups, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw StatsError("Tukey HSD confidence must lie in (0, 1), e.g. 0.95; got " + std::to_string(confidence));
  }
  const OneWayAnova anova = one_way_anova(groups);  // validates the groups
  const detail::GroupSummary s = detail::summarize_groups(groups);
  const double k = static_cast<double>(groups.size());
  const double critical = studentized_range_quantile(confidence, k, anova.df_within);
  std::vector<TukeyPair> pairs;
  pairs.reserve(groups.size() * (groups.size() - 1) / 2);
  for (std::size_t a = 0; a < groups.size(); ++a) {
    for (std::size_t b = a + 1; b < groups.size(); ++b) {
      pairs.push_back(compare(s, a, b, anova.ms_within, k, anova.df_within, critical));
    }
  }
  return pairs;
}

// Tukey (1953) / Kramer (1956) all-pairs family, restricted to the pairs that hold the base group.
std::vector<TukeyPair> tukey_vs_base(const std::vector<std::vector<double>>& groups, std::size_t base_index,
                                     double confidence) {
  if (base_index >= groups.size()) {
    throw StatsError("Tukey HSD base group " + std::to_string(base_index) + " does not exist (there are " +
                     std::to_string(groups.size()) + " groups, numbered from 0)");
  }
  std::vector<TukeyPair> against_base;
  for (TukeyPair pair : tukey_hsd(groups, confidence)) {
    if (pair.a == base_index) {
      against_base.push_back(pair);
    } else if (pair.b == base_index) {  // flip (other, base) to (base, other): diff and interval change sign
      pair.b = pair.a;
      pair.a = base_index;
      pair.diff = -pair.diff;
      const double lower = -pair.upper;
      pair.upper = -pair.lower;
      pair.lower = lower;
      against_base.push_back(pair);
    }
  }
  return against_base;
}

}  // namespace scalebench::stats
