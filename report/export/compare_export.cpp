#include "report/export/compare_export.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/export/format.hpp"
#include "report/export/stats_export.hpp"

namespace scalebench::report {

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

Json comparison_json(const Comparison& c) {
  Json rows = Json::array();
  const auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  for (const auto& r : c.rows)
    rows.push_back({{"cell", r.cell},
                    {"baseline_runs", r.baseline_runs},
                    {"baseline_mean_epoch_seconds", r.baseline_mean},
                    {"candidate_runs", r.candidate_runs},
                    {"candidate_mean_epoch_seconds", r.candidate_mean},
                    {"ratio", r.ratio},
                    {"ratio_ci",
                     r.ratio_lower ? Json::array({*r.ratio_lower, *r.ratio_upper}) : Json(nullptr)},
                    {"welch_p", optional(r.p)},
                    {"verdict", verdict_name(r.verdict)},
                    {"within_threshold", r.within_threshold}});
  Json out = {{"baseline", c.baseline},
              {"candidate", c.candidate},
              {"confidence", c.options.confidence},
              {"threshold", c.options.threshold},
              {"cells", rows},
              {"only_in_baseline", c.only_in_baseline},
              {"only_in_candidate", c.only_in_candidate},
              {"notes", c.notes}};
  return out;
}

}  // namespace scalebench::report
