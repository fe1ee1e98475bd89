#include "stats/summary_statistics.hpp"

#include <boost/math/distributions/fisher_f.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include "stats/descriptive.hpp"
#include "stats/groups.hpp"

namespace scalebench::stats {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string label(const GroupSummary& g, std::size_t i) {
  return "group " + std::to_string(i) + (g.name.empty() ? "" : " (" + g.name + ")");
}

// sum n_i mean_i / N, two-pass: the second pass removes the first's rounding (Chan, Golub & LeVeque
// 1983).
double grand_mean(const std::vector<GroupSummary>& groups, double total) {
  double sum = 0;
  for (const auto& g : groups) sum += g.n * g.mean;
  const double first = sum / total;
  double correction = 0;
  for (const auto& g : groups) correction += g.n * (g.mean - first);
  return first + correction / total;
}

}  // namespace

// Input checks for summary-statistics methods (the conditions under which a table of n/mean/sd is
// one).
void check_summaries(const std::vector<GroupSummary>& groups) {
  if (groups.size() < 2) {
    throw StatsError("a one-way comparison needs at least two groups, got " +
                     std::to_string(groups.size()));
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupSummary& g = groups[i];
    if (!(g.n >= 1) || std::floor(g.n) != g.n || std::isinf(g.n)) {
      throw StatsError(label(g, i) + ": n must be a whole number >= 1, got " + std::to_string(g.n));
    }
    if (!std::isfinite(g.mean)) throw StatsError(label(g, i) + ": the mean is not finite");
    if (g.n >= 2 && !(std::isfinite(g.sd) && g.sd >= 0)) {
      throw StatsError(label(g, i) + ": the sd must be finite and >= 0, got " +
                       std::to_string(g.sd));
    }
  }
}

// Two-pass mean and sample sd per group (Chan, Golub & LeVeque 1983).
std::vector<GroupSummary> summarize(const std::vector<std::vector<double>>& groups,
                                    const std::vector<std::string>& names) {
  detail::check_groups(groups, "summarize", 0);
  std::vector<GroupSummary> out;
  out.reserve(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    out.push_back({i < names.size() ? names[i] : std::to_string(i),
                   static_cast<double>(groups[i].size()), mean(groups[i]),
                   sample_sd(groups[i]).value_or(kNaN)});
  }
  return out;
}

// Fisher's one-way ANOVA from group summaries (Scheffe 1959, "The Analysis of Variance", ch. 3;
// Larson 1992, Am. Stat. 46:151).
OneWayAnova one_way_anova_from_summary(const std::vector<GroupSummary>& groups) {
  check_summaries(groups);
  const double k = static_cast<double>(groups.size());
  double n = 0;
  for (const auto& g : groups) n += g.n;
  if (n - k < 1) {
    throw StatsError("one-way ANOVA needs more observations than groups (N=" + std::to_string(n) +
                     ", k=" + std::to_string(groups.size()) + ")");
  }
  const double grand = grand_mean(groups, n);
  double ss_between = 0, ss_within = 0;
  for (const auto& g : groups) {
    if (g.n >= 2) ss_within += (g.n - 1) * g.sd * g.sd;
    ss_between += g.n * (g.mean - grand) * (g.mean - grand);
  }
  return one_way_anova_from_sums(ss_between, ss_within, k, n);
}

// Tukey (1953) HSD with the Tukey-Kramer standard error (Kramer 1956), as R's TukeyHSD.aov.
std::vector<TukeyPair> tukey_hsd_from_summary(const std::vector<GroupSummary>& groups,
                                              double confidence) {
  const OneWayAnova anova = one_way_anova_from_summary(groups);  // validates the summaries
  std::vector<double> means, sizes;
  for (const auto& g : groups) {
    means.push_back(g.mean);
    sizes.push_back(g.n);
  }
  return tukey_hsd_from_means(means, sizes, anova.ms_within, anova.df_within, confidence);
}

}  // namespace scalebench::stats
