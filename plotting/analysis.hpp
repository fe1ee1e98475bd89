// Statistics assembly for `scalebench stats`: observations from a CSV file or the results
// database (one mean per run by default), the ANOVA family, post-hoc pairs and robust tests on
// them, or the same from published summary statistics; render with stats_report.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plotting/instances.hpp"
#include "plotting/stats_report.hpp"
#include "stats/interaction_contrast.hpp"

namespace scalebench::plotting {

// Raw observations: one response value and one level per factor for each.
struct Observations {
  std::string source;
  std::string response;
  std::vector<double> values;
  std::vector<std::string> factor_names;
  std::vector<std::vector<std::string>> levels;  // levels[f][i]: level of factor f for value i
  std::optional<std::string> unit;
  std::vector<std::int64_t> runs;  // the run of each value (database, units epoch and nested)
  std::vector<std::string> warnings;
  // Level order per factor where the source knows it (the experiment file's; np ascending);
  // empty: order of first appearance.
  std::vector<std::vector<std::string>> level_order = {};
};

Observations observations_from_csv(const std::string& path, const std::string& response,
                                   const std::vector<std::string>& factors);
// `only`: FACTOR=LEVEL filters; the runs left out are counted in a warning. `response`:
// "epoch_seconds" (the mean epoch time of a run, or each epoch with unit "epoch"), or
// "log_images_per_second" (unit "run" only: log(train_images x epochs / sum of epoch times) of a
// run, the scale on which speed-ups are differences).
Observations observations_from_database(const std::string& path, const InstanceQuery& query,
                                        const std::vector<std::string>& factors,
                                        const std::string& unit,
                                        const std::vector<std::string>& only = {},
                                        const std::string& response = "epoch_seconds");

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
std::string render_contrast_text(const ContrastReport& report);
nlohmann::json contrast_json(const ContrastReport& report);

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

}  // namespace scalebench::plotting
