#include "report/analysis/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/data/csv_table.hpp"
#include "stats/descriptive.hpp"
#include "stats/ratio_interval.hpp"

namespace scalebench::report {
namespace {

// The run means of each cell, in order of first appearance.
std::vector<std::pair<std::string, std::vector<double>>> cells_of(const Observations& data) {
  if (data.factor_names.size() != 1 || data.unit != std::optional<std::string>("run"))
    throw InputError("compare needs one value per run, grouped by cell");
  std::vector<std::pair<std::string, std::vector<double>>> cells;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < data.values.size(); ++i) {
    const auto& cell = data.levels[0][i];
    if (!std::isfinite(data.values[i]))
      throw InputError(fmt::format("{}: cell {}: a value that is not a finite number ({})",
                                   data.source, cell, data.values[i]));
    const auto [it, inserted] = index.try_emplace(cell, cells.size());
    if (inserted) cells.emplace_back(cell, std::vector<double>{});
    cells[it->second].second.push_back(data.values[i]);
  }
  return cells;
}

std::optional<stats::MeanWithError> estimate(const std::vector<double>& runs) {
  if (runs.size() < 2) return std::nullopt;
  const auto n = static_cast<double>(runs.size());
  // The mean's standard error, / sqrt(n) after the sd (whose square would overflow near 1e308).
  return stats::MeanWithError{stats::mean(runs), *stats::sample_sd(runs) / std::sqrt(n), n - 1};
}

}  // namespace

std::string verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Slower:
      return "slower";
    case Verdict::Faster:
      return "faster";
    case Verdict::NoDifference:
      return "no difference";
    case Verdict::TooFewRuns:
      return "too few runs";
  }
  return "?";
}

Comparison compare_observations(const Observations& baseline, const Observations& candidate,
                                const CompareOptions& options) {
  if (!(options.confidence > 0 && options.confidence < 1))
    throw InputError(
        fmt::format("--confidence {}: expected a number between 0 and 1", options.confidence));
  if (!(options.threshold >= 0 && options.threshold < 1))
    throw InputError(fmt::format("--threshold: expected a percentage in [0, 100), not {}",
                                 options.threshold * 100));
  Comparison out;
  out.baseline = baseline.source;
  out.candidate = candidate.source;
  out.options = options;
  const auto base_cells = cells_of(baseline);
  const auto cand_cells = cells_of(candidate);
  const double alpha = 1 - options.confidence;
  for (const auto& [cell, base_runs] : base_cells) {
    const auto match = std::find_if(cand_cells.begin(), cand_cells.end(),
                                    [&](const auto& c) { return c.first == cell; });
    if (match == cand_cells.end()) {
      out.only_in_baseline.push_back(cell);
      continue;
    }
    const auto& cand_runs = match->second;
    CompareRow row;
    row.cell = cell;
    row.baseline_runs = base_runs.size();
    row.candidate_runs = cand_runs.size();
    row.baseline_mean = stats::mean(base_runs);
    row.candidate_mean = stats::mean(cand_runs);
    row.ratio = row.candidate_mean / row.baseline_mean;
    const auto base_estimate = estimate(base_runs), cand_estimate = estimate(cand_runs);
    if (base_estimate && cand_estimate) {
      try {
        const auto interval =
            stats::ratio_interval(*cand_estimate, *base_estimate, options.confidence);
        row.ratio_lower = interval.ci.lower;
        row.ratio_upper = interval.ci.upper;
        // The test of the interval itself (log scale, Welch d.f.): the verdict can never
        // contradict the CI printed beside it.
        row.p = interval.p;
      } catch (const stats::StatsError& error) {
        out.notes.push_back(fmt::format("{}: no interval or test: {}", cell, error.what()));
      }
    }
    const double low = 1 - options.threshold, high = 1 + options.threshold;
    if (!row.ratio_lower) {
      row.verdict = Verdict::TooFewRuns;
    } else if (*row.p < alpha && row.ratio > high) {
      row.verdict = Verdict::Slower;
    } else if (*row.p < alpha && row.ratio < low) {
      row.verdict = Verdict::Faster;
    } else {
      row.verdict = Verdict::NoDifference;
      row.within_threshold = *row.ratio_lower >= low && *row.ratio_upper <= high;
    }
    out.rows.push_back(row);
  }
  for (const auto& [cell, runs] : cand_cells)
    if (std::none_of(base_cells.begin(), base_cells.end(),
                     [&](const auto& c) { return c.first == cell; }))
      out.only_in_candidate.push_back(cell);
  if (out.rows.empty())
    throw InputError(fmt::format(
        "the two sides share no cell (condition, factor levels and np): baseline has {}, "
        "candidate has {}",
        fmt::join(out.only_in_baseline, ", "), fmt::join(out.only_in_candidate, ", ")));
  const bool too_few = std::any_of(out.rows.begin(), out.rows.end(), [](const CompareRow& r) {
    return r.verdict == Verdict::TooFewRuns;
  });
  if (too_few)
    out.notes.push_back(
        "\"too few runs\": a side has one run in the cell, so run-to-run variation is unknown "
        "and no difference can be told from noise; repeat the runs (\"repetitions\" >= 3)");
  return out;
}

std::vector<const CompareRow*> slower_than(const Comparison& comparison, double fraction) {
  std::vector<const CompareRow*> out;
  for (const auto& row : comparison.rows)
    if (row.verdict == Verdict::Slower && row.ratio - 1 >= fraction) out.push_back(&row);
  return out;
}

}  // namespace scalebench::report
