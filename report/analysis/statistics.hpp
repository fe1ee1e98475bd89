// Statistics assembly for `scalebench stats`: the ANOVA family, post-hoc pairs and robust tests
// on observations (report/data/observations.hpp), or the same from published summary statistics;
// the result types are stats_result.hpp's, rendered by report/export/stats_export.hpp.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "report/analysis/stats_result.hpp"
#include "report/data/observations.hpp"
#include "stats/interaction_contrast.hpp"

namespace scalebench::report {

// The interaction contrast of two factors with two levels each (stats::interaction_contrast) in
// the factors' level order: c = (y[a2,b2] - y[a2,b1]) - (y[a1,b2] - y[a1,b1]). On
// log(images/s) with factors (framework, np), exp(c) is the ratio of the second framework's
// speed-up to the first's. Throws InputError unless the data have exactly that shape.
struct ContrastReport {
  std::string factor_a, factor_b;
  std::array<std::string, 2> levels_a, levels_b;
  std::array<std::array<std::size_t, 2>, 2> n{};
  std::array<std::array<double, 2>, 2> means{};
  stats::InteractionContrast contrast;
  bool log_response = false;  // exp() of the estimate and interval are ratios
  double confidence = 0.95;
};
ContrastReport interaction_contrast_of(const Observations& data, double confidence);

// The most groups (levels of a factor, or cells of two) stats compares all pairs of (Tukey,
// Games-Howell, letters): more are refused (InputError naming the limit).
inline constexpr std::size_t kMaxCompareGroups = 1000;

// With two factors, `interaction` false fits the additive model A + B (no A:B term, no per-cell
// Tukey): the answer for a design with an empty cell, such as the single condition, which has no
// np=2. An empty cell with the interaction is an InputError that names the cell and the option.
StatsReport analyze_observations(const Observations& data, int ss_type, double confidence,
                                 bool interaction = true);
StatsReport analyze_summary_file(const std::string& path, double confidence);

// Keeps the post-hoc pairs that involve `base`, turned to read base first (diff = mean(base) -
// mean(other) flipped to mean(other) - mean(base) with a = other). The p-values stay those of the
// all-pairs family (conservative for k - 1 comparisons). Throws InputError when no pair holds
// `base`.
void keep_pairs_against(StatsReport& report, const std::string& base);

}  // namespace scalebench::report
