// report --by FACTOR (report.hpp, build_factor_report): one block per level with its one-way
// table, and the two-way ANOVA FACTOR x np per launched condition; and the rows' display labels.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/analysis/report.hpp"
#include "report/analysis/report_support.hpp"
#include "stats/factorial_anova.hpp"
#include "util/text.hpp"

namespace scalebench::report {

using detail::join;
using detail::kSingleLauncher;
using detail::rank_of;
namespace {

std::optional<double> finite(double value) {
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

std::string level_of(const Run& run, const std::string& factor) {
  for (const auto& [name, level] : run.levels)
    if (name == factor) return level;
  return {};
}

// FACTOR x np on the epochs of one launched condition: with the interaction when every cell is
// measured, else the additive model (and the notes say so).
std::optional<TwoWayTable> two_way_of(const std::vector<Run>& runs, const std::string& factor,
                                      const std::string& condition, const std::string& unit,
                                      std::vector<std::string>& notes) {
  std::vector<double> values;
  std::vector<std::vector<std::string>> levels(2);
  // One value per run (its mean epoch time) unless the unit is the epoch.
  const auto add = [&](const Run& run, double value) {
    values.push_back(value);
    levels[0].push_back(level_of(run, factor));
    levels[1].push_back(std::to_string(run.np));
  };
  for (const auto& run : runs) {
    if (run.condition != condition || run.launcher == kSingleLauncher || run.epochs.empty())
      continue;
    if (unit != "epoch")
      add(run, run.mean_epoch_seconds());
    else
      for (const auto& epoch : run.epochs) add(run, epoch.seconds);
  }
  const std::string scope = fmt::format("condition {}", condition);
  const auto fit = [&](bool interaction) {
    return stats::factorial_anova(values, levels, {factor, "np"}, stats::SsType::II, interaction);
  };
  stats::FactorialAnova anova;
  bool interaction = true;
  try {
    try {
      anova = fit(true);
    } catch (const stats::EmptyCellError& error) {
      interaction = false;
      anova = fit(false);
      notes.push_back(fmt::format(
          "Two-way ANOVA of {}: {}; fitted without the interaction ({} + np), which assumes the "
          "effect of np is the same for every {}.",
          scope, error.what(), factor, factor));
    }
  } catch (const stats::StatsError& error) {
    notes.push_back(fmt::format("No two-way ANOVA of {}: {}.", scope, error.what()));
    return std::nullopt;
  }
  TwoWayTable table;
  table.scope = scope;
  table.model = interaction ? fmt::format("{} * np", factor) : fmt::format("{} + np", factor);
  table.observations = values.size();
  for (const auto& term : anova.terms) {
    AnovaRow row{term.term, term.df, term.ss, term.ms};
    if (term.term != "Residuals") {
      row.f = finite(term.f);
      row.p = finite(term.p);
      row.partial_eta_sq = finite(term.partial_eta_sq);
    }
    table.terms.push_back(row);
  }
  return table;
}

}  // namespace

FactorReport build_factor_report(std::string experiment, const std::vector<Run>& runs,
                                 const std::string& factor, const ReportOptions& options) {
  check_unit(options.unit);
  FactorReport report;
  report.experiment = experiment;
  report.factor = factor;
  report.unit = options.unit;
  report.labels = options.labels;
  std::vector<std::string> known;
  std::vector<std::string> seen_levels;
  for (const auto& run : runs) {
    if (run.experiment != experiment || run.epochs.empty()) continue;
    for (const auto& [name, level] : run.levels)
      if (std::find(known.begin(), known.end(), name) == known.end()) known.push_back(name);
    const auto level = level_of(run, factor);
    if (!level.empty() &&
        std::find(seen_levels.begin(), seen_levels.end(), level) == seen_levels.end())
      seen_levels.push_back(level);
  }
  if (std::find(known.begin(), known.end(), factor) == known.end())
    throw ReportError(
        known.empty()
            ? fmt::format("--by {}: experiment \"{}\" has no factors (its file has no \"factors\" "
                          "object; docs/experiment-file.md, \"Factors\")",
                          factor, experiment)
            : fmt::format(
                  "--by {}: experiment \"{}\" has no such factor{}; its factors: {}", factor,
                  experiment,
                  [&]() -> std::string {
                    const auto close = util::closest_match(factor, known);
                    return close ? fmt::format(" (did you mean {}?)", *close) : "";
                  }(),
                  fmt::join(known, ", ")));
  // Blocks in the file's level order; levels not in it (pooled older instances) after.
  for (const auto& [name, order] : options.level_order)
    if (name == factor)
      for (const auto& level : order)
        if (std::find(seen_levels.begin(), seen_levels.end(), level) != seen_levels.end())
          report.levels.push_back(level);
  for (const auto& level : seen_levels)
    if (std::find(report.levels.begin(), report.levels.end(), level) == report.levels.end())
      report.levels.push_back(level);

  ReportOptions block_options = options;
  block_options.omit_factor = factor;
  for (const auto& level : report.levels) {
    std::vector<Run> subset;
    for (const auto& run : runs)
      if (run.experiment == experiment && level_of(run, factor) == level) subset.push_back(run);
    auto block = build_report(experiment, subset, block_options);
    for (const auto& row : block.rows)
      if (std::find(report.row_keys.begin(), report.row_keys.end(), row.label) ==
          report.row_keys.end())
        report.row_keys.push_back(row.label);
    report.blocks.push_back(std::move(block));
  }
  report.weak_scaling = !report.blocks.empty() &&
                        std::all_of(report.blocks.begin(), report.blocks.end(),
                                    [](const ReportTable& block) { return block.weak_scaling; });
  report.notes.push_back(describe_unit(report.unit));
  if (report.weak_scaling) report.notes.push_back(std::string(kWeakScalingNote));
  if (report.unit == "nested")
    report.notes.push_back(
        "The two-way ANOVA is fitted on the runs' mean epoch times (the nested model is one-way "
        "per block); for a balanced design the two agree.");

  // One two-way ANOVA per launched condition: single has np = 1 only, so it cannot be crossed.
  std::vector<std::string> launched, single;
  std::size_t single_runs = 0;
  std::set<std::int64_t> single_ids;
  for (const auto& run : runs) {
    if (run.experiment != experiment || run.epochs.empty()) continue;
    auto& list = run.launcher == kSingleLauncher ? single : launched;
    if (std::find(list.begin(), list.end(), run.condition) == list.end())
      list.push_back(run.condition);
    if (run.launcher == kSingleLauncher) single_ids.insert(run.id);
  }
  single_runs = single_ids.size();
  std::stable_sort(launched.begin(), launched.end(), [&](const auto& a, const auto& b) {
    return rank_of(options.condition_order, a) < rank_of(options.condition_order, b);
  });
  for (const auto& condition : launched)
    if (auto table = two_way_of(runs, factor, condition, report.unit, report.notes))
      report.two_way.push_back(std::move(*table));
  if (!single.empty()) {
    std::vector<std::string> shown;
    for (const auto& condition : single) shown.push_back(options.labels.of(condition, condition));
    report.notes.push_back(fmt::format(
        "The {} rows ({} runs) are not in the two-way ANOVA: one plain process has no np to cross "
        "with {}.",
        fmt::join(shown, ", "), single_runs, options.labels.factor(factor)));
  }
  if (known.size() > 1)
    report.notes.push_back(fmt::format(
        "The two-way ANOVA pools the other factors ({}) within each {} x np cell.",
        [&] {
          std::vector<std::string> others;
          for (const auto& name : known)
            if (name != factor) others.push_back(name);
          return fmt::format("{}", fmt::join(others, ", "));
        }(),
        factor));
  return report;
}

std::string display_label(const ReportRow& row, const Labels& labels) {
  if (labels.empty()) return row.label;
  std::vector<std::string> parts = {labels.of(row.condition, row.condition)};
  for (const auto& [factor, level] : row.levels)
    parts.push_back(labels.level_with_factor(factor, level));
  if (row.label.find(" [") != std::string::npos)
    parts.push_back(labels.of(row.launcher, row.launcher));
  if (row.launcher != kSingleLauncher)
    parts.push_back(fmt::format("{} = {}", labels.of("np", "np"), row.np));
  return join(parts);
}

}  // namespace scalebench::report
