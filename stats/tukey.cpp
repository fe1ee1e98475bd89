#include "stats/tukey.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "stats/anova.hpp"
#include "stats/groups.hpp"
#include "stats/studentized_range_family.hpp"

namespace scalebench::stats {
namespace {

// Below this many pairs one thread does it: starting threads costs more than the p-values.
constexpr std::size_t kParallelFrom = 256;

// Every field but p_adjusted, which is left NaN where q is finite and positive-or-zero: the caller
// fills those in from the family (so many pairs can share the distribution, and threads).
TukeyPair compare(const std::vector<double>& means, const std::vector<double>& sizes, std::size_t a,
                  std::size_t b, double ms_within, double critical) {
  TukeyPair pair;
  pair.a = a;
  pair.b = b;
  pair.diff = means[b] - means[a];
  const double se = std::sqrt(ms_within / 2 * (1 / sizes[a] + 1 / sizes[b]));
  if (se > 0) {
    pair.q = std::abs(pair.diff) / se;
    pair.p_adjusted = std::numeric_limits<double>::quiet_NaN();  // set by fill_p_values
    pair.lower = pair.diff - critical * se;
    pair.upper = pair.diff + critical * se;
  } else {
    // No within-group noise: a difference is certain, no difference is 0/0 (NaN, as the ANOVA's F).
    pair.q = pair.diff != 0 ? std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::quiet_NaN();
    pair.p_adjusted = pair.diff != 0 ? 0 : std::numeric_limits<double>::quiet_NaN();
    pair.lower = pair.upper = pair.diff;
  }
  return pair;
}

// P(Q > q) for the pairs with a finite se, from one distribution at (k, df): tabulated where each
// exact call would take milliseconds (studentized_range_family.hpp), in parallel for many pairs.
void fill_p_values(std::vector<TukeyPair>& pairs, const StudentizedRangeFamily& family, double df) {
  detail::parallel_for(pairs.size(), kParallelFrom, [&](std::size_t i) {
    TukeyPair& pair = pairs[i];
    if (std::isnan(pair.p_adjusted) && !std::isnan(pair.q))
      pair.p_adjusted = family.survival(pair.q, df);
  });
}

void check_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw StatsError("Tukey HSD confidence must lie in (0, 1), e.g. 0.95; got " +
                     std::to_string(confidence));
  }
}

}  // namespace

// Tukey (1953) HSD with the Tukey-Kramer standard error (Kramer 1956), as R's TukeyHSD.aov.
std::vector<TukeyPair> tukey_hsd(const std::vector<std::vector<double>>& groups,
                                 double confidence) {
  check_confidence(confidence);
  const OneWayAnova anova = one_way_anova(groups);  // validates the groups
  const detail::GroupSummary s = detail::summarize_groups(groups);
  // Means stay shifted by the same observation: every difference cancels the shift.
  return tukey_hsd_from_means(s.means, std::vector<double>(s.sizes.begin(), s.sizes.end()),
                              anova.ms_within, anova.df_within, confidence);
}

// Tukey (1953) / Kramer (1956) on given means, sizes and error term (R's TukeyHSD per factor).
std::vector<TukeyPair> tukey_hsd_from_means(const std::vector<double>& means,
                                            const std::vector<double>& sizes, double ms_within,
                                            double df_within, double confidence) {
  check_confidence(confidence);
  if (means.size() < 2 || sizes.size() != means.size())
    throw StatsError("Tukey HSD needs at least two groups, with one size per mean");
  for (const double n : sizes)
    if (!(n >= 1)) throw StatsError("Tukey HSD group sizes must be at least 1");
  if (!(ms_within >= 0) || !(df_within > 0))
    throw StatsError("Tukey HSD needs a residual mean square >= 0 and residual d.f. > 0");
  const double k = static_cast<double>(means.size());
  const double critical = studentized_range_quantile(confidence, k, df_within);
  std::vector<TukeyPair> pairs;
  pairs.reserve(means.size() * (means.size() - 1) / 2);
  for (std::size_t a = 0; a < means.size(); ++a)
    for (std::size_t b = a + 1; b < means.size(); ++b)
      pairs.push_back(compare(means, sizes, a, b, ms_within, critical));
  fill_p_values(pairs, StudentizedRangeFamily(k), df_within);
  return pairs;
}

// Tukey (1953) / Kramer (1956) all-pairs family, restricted to the pairs that hold the base group.
// Only those k - 1 pairs are computed (each p is a quadrature; all k(k-1)/2 of them made a report
// of 300 groups take minutes). Each pair is computed exactly as tukey_hsd_from_means does, on (min,
// max) of the two indices with the same critical value and the same family, then flipped, so the
// numbers are bit-identical.
std::vector<TukeyPair> tukey_vs_base(const std::vector<std::vector<double>>& groups,
                                     std::size_t base_index, double confidence) {
  if (base_index >= groups.size()) {
    throw StatsError("Tukey HSD base group " + std::to_string(base_index) +
                     " does not exist (there are " + std::to_string(groups.size()) +
                     " groups, numbered from 0)");
  }
  check_confidence(confidence);
  const OneWayAnova anova = one_way_anova(groups);  // validates the groups
  const detail::GroupSummary s = detail::summarize_groups(groups);
  const std::vector<double> sizes(s.sizes.begin(), s.sizes.end());
  const double k = static_cast<double>(groups.size());
  const double critical = studentized_range_quantile(confidence, k, anova.df_within);
  std::vector<TukeyPair> against_base;
  against_base.reserve(groups.size() - 1);
  for (std::size_t other = 0; other < groups.size(); ++other) {
    if (other == base_index) continue;
    if (base_index < other) {
      against_base.push_back(compare(s.means, sizes, base_index, other, anova.ms_within, critical));
      continue;
    }
    // R's row is "base-other" on (other, base): flip it to (base, other); diff and interval change
    // sign.
    TukeyPair pair = compare(s.means, sizes, other, base_index, anova.ms_within, critical);
    pair.a = base_index;
    pair.b = other;
    pair.diff = -pair.diff;
    const double lower = -pair.upper;
    pair.upper = -pair.lower;
    pair.lower = lower;
    against_base.push_back(pair);
  }
  fill_p_values(against_base, StudentizedRangeFamily(k), anova.df_within);
  return against_base;
}

}  // namespace scalebench::stats
