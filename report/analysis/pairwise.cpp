#include "report/analysis/pairwise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/descriptive.hpp"

namespace scalebench::report {

std::optional<double> variance_ratio(const std::vector<std::vector<double>>& groups) {
  std::vector<double> variances;
  for (const auto& group : groups)
    if (group.size() >= 2)
      if (const auto sd = stats::sample_sd(group)) variances.push_back(*sd * *sd);
  if (variances.size() < 2) return std::nullopt;
  const auto [smallest, largest] = std::minmax_element(variances.begin(), variances.end());
  if (*largest == 0) return 1.0;  // all equal: nothing differs
  if (*smallest == 0) return std::numeric_limits<double>::infinity();
  return *largest / *smallest;
}

PairwiseChoice choose_pairwise(const std::vector<std::vector<double>>& groups,
                               const std::string& unit, std::size_t max_groups) {
  PairwiseChoice choice;
  choice.ratio = variance_ratio(groups);
  if (!choice.ratio || *choice.ratio <= kMaxPooledVarianceRatio) return choice;
  const auto ratio_text = std::isfinite(*choice.ratio)
                              ? fmt::format("{:.3g}-fold", *choice.ratio)
                              : std::string("infinitely (a group without spread)");
  const bool all_have_two = std::all_of(groups.begin(), groups.end(),
                                        [](const auto& group) { return group.size() >= 2; });
  if (!all_have_two || groups.size() > max_groups) {
    choice.note = fmt::format(
        "Group variances differ {} (largest over smallest; pooling assumes at most {}), but "
        "Games-Howell needs {}: the p-values and letters are Tukey's, on the pooled variance, "
        "and may disagree with the rows' own intervals.",
        ratio_text, kMaxPooledVarianceRatio,
        all_have_two ? fmt::format("all pairs of at most {} groups", max_groups)
                     : fmt::format("two {}s in every group", unit));
    return choice;
  }
  choice.games_howell = true;
  choice.note = fmt::format(
      "Group variances differ {} (largest over smallest; pooling assumes at most {}): the "
      "p-values and letters are Games-Howell's and the F test is Welch's, which, like the rows' "
      "intervals, use each group's own variance (docs/statistics.md, \"Pooled or per-row\").",
      ratio_text, kMaxPooledVarianceRatio);
  return choice;
}

}  // namespace scalebench::report
