#include "plotting/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "plotting/csv_table.hpp"
#include "plotting/format.hpp"
#include "plotting/stats_report.hpp"
#include "stats/descriptive.hpp"
#include "stats/ratio_interval.hpp"

namespace scalebench::plotting {
namespace {

// The run means of each cell, in order of first appearance.
std::vector<std::pair<std::string, std::vector<double>>> cells_of(const Observations& data) {
  if (data.factor_names.size() != 1 || data.unit != std::optional<std::string>("run"))
    throw InputError("compare needs one value per run, grouped by cell");
  std::vector<std::pair<std::string, std::vector<double>>> cells;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < data.values.size(); ++i) {
    const auto& cell = data.levels[0][i];
    const auto [it, inserted] = index.try_emplace(cell, cells.size());
    if (inserted) cells.emplace_back(cell, std::vector<double>{});
    cells[it->second].second.push_back(data.values[i]);
  }
  return cells;
}

std::optional<stats::MeanWithError> estimate(const std::vector<double>& runs) {
  if (runs.size() < 2) return std::nullopt;
  const auto n = static_cast<double>(runs.size());
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

std::string render_comparison_text(const Comparison& c) {
  std::string out = fmt::format("baseline:  {}\ncandidate: {}\n", c.baseline, c.candidate);
  out += fmt::format(
      "Per cell: mean of the runs' mean epoch times; ratio = candidate / baseline (above 1 is "
      "slower) with its {:g}% CI; Welch's t test of the log ratio (the CI's own test); slower or "
      "faster when "
      "significant and beyond a threshold of {:g}%\n\n",
      c.options.confidence * 100, c.options.threshold * 100);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows)
    rows.push_back(
        {r.cell, fmt::format("{}", r.baseline_runs), format_measure(r.baseline_mean),
         fmt::format("{}", r.candidate_runs), format_measure(r.candidate_mean),
         fmt::format("{:.3f}", r.ratio),
         r.ratio_lower ? fmt::format("[{:.3f}, {:.3f}]", *r.ratio_lower, *r.ratio_upper)
                       : std::string(kNotAvailable),
         r.p ? format_p_value(*r.p) : std::string(kNotAvailable),
         verdict_name(r.verdict) +
             (r.within_threshold ? fmt::format(" (CI within ±{:g}%)", c.options.threshold * 100)
                                 : "")});
  const std::vector<std::string> header = {
      "cell", "runs", "baseline (s)", "runs", "candidate (s)", "ratio", "CI", "Welch", "verdict"};
  out += aligned(header, rows);
  if (!c.only_in_baseline.empty())
    out += fmt::format("\nonly in the baseline (not compared): {}\n",
                       fmt::join(c.only_in_baseline, ", "));
  if (!c.only_in_candidate.empty())
    out += fmt::format("\nonly in the candidate (not compared): {}\n",
                       fmt::join(c.only_in_candidate, ", "));
  for (const auto& note : c.notes) out += "\nnote: " + note + "\n";
  return out;
}

nlohmann::ordered_json comparison_json(const Comparison& c) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const auto optional = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  for (const auto& r : c.rows)
    rows.push_back({{"cell", r.cell},
                    {"baseline_runs", r.baseline_runs},
                    {"baseline_mean_epoch_seconds", r.baseline_mean},
                    {"candidate_runs", r.candidate_runs},
                    {"candidate_mean_epoch_seconds", r.candidate_mean},
                    {"ratio", r.ratio},
                    {"ratio_ci",
                     r.ratio_lower ? nlohmann::ordered_json::array({*r.ratio_lower, *r.ratio_upper})
                                   : nlohmann::ordered_json(nullptr)},
                    {"welch_p", optional(r.p)},
                    {"verdict", verdict_name(r.verdict)},
                    {"within_threshold", r.within_threshold}});
  nlohmann::ordered_json out = {{"baseline", c.baseline},
                                {"candidate", c.candidate},
                                {"confidence", c.options.confidence},
                                {"threshold", c.options.threshold},
                                {"cells", rows},
                                {"only_in_baseline", c.only_in_baseline},
                                {"only_in_candidate", c.only_in_candidate},
                                {"notes", c.notes}};
  return out;
}

}  // namespace scalebench::plotting
