#include "report/export/plan_export.hpp"

#include <fmt/format.h>

#include "report/export/format.hpp"
#include "report/export/plain_table.hpp"
#include "report/export/stats_export.hpp"
#include "stats/power.hpp"

namespace scalebench::report {
namespace {

std::string runs_text(const std::optional<long long>& runs) {
  return runs ? fmt::format("{}", *runs) : fmt::format("> {}", stats::kMaxPlannedRuns);
}

std::string n_text(const std::optional<double>& n) {
  return n ? fmt::format("{:.4f}", *n) : std::string(kNotAvailable);
}

std::string percent(double fraction) { return fmt::format("{:g}%", fraction * 100); }

struct Tables {
  std::string precision_heading;
  std::vector<std::string> precision_header;
  std::vector<std::vector<std::string>> precision_rows;
  std::string pairs_heading;
  std::vector<std::string> pairs_header;
  std::vector<std::vector<std::string>> pairs_rows;
};

Tables tables_of(const Plan& plan) {
  const auto& o = plan.options;
  Tables t;
  t.precision_heading = fmt::format(
      "Runs per cell for the {} confidence interval of the mean epoch time within ±{} of it.\n"
      "Fixed sample: the smallest n >= 2 with t * SD / sqrt(n) <= {} x mean, from each cell's "
      "pilot runs\n(the experiment file's \"repetitions\" rule decides on the fly instead).",
      percent(o.confidence), percent(o.precision), percent(o.precision));
  t.precision_header = {"cell", "pilot runs", "mean (s)", "SD (s)", "CI now", "runs needed"};
  for (const auto& c : plan.cells)
    t.precision_rows.push_back(
        {c.label, fmt::format("{}", c.runs), format_measure(c.mean), fmt::format("{:#.3g}", c.sd),
         fmt::format("±{:.2f}%", c.half_width * 100), runs_text(c.runs_needed)});
  if (!o.detect) return t;
  t.pairs_heading = fmt::format(
      "Runs per cell to detect a {} difference in mean epoch time ({} s, {} of {}) with {} "
      "power at alpha {:g}.\n"
      "t: the two-sample t-test on the pair (R's power.t.test, the pair's pooled SD; n is R's "
      "fractional n).\n"
      "Tukey: Tukey-Kramer in the family of the report's table (k = {} cells, pooled SD {:#.3g} s "
      "on {:g} d.f.), exact.\n"
      "Power now: with the pair's smaller number of pilot runs.",
      percent(*o.detect), format_measure(*o.detect * plan.base_mean), percent(*o.detect), plan.base,
      percent(o.power), 1 - o.confidence, plan.family, plan.family_sd, plan.family_df);
  t.pairs_header = {"pair",        "SD (s)",  "t n",        "t runs",
                    "t power now", "Tukey n", "Tukey runs", "Tukey power now"};
  for (const auto& p : plan.pairs)
    t.pairs_rows.push_back({fmt::format("{} vs {}", p.other, p.base), fmt::format("{:#.3g}", p.sd),
                            n_text(p.t_n), runs_text(p.t_runs), format_percent(p.t_power_now),
                            n_text(p.tukey_n), runs_text(p.tukey_runs),
                            format_percent(p.tukey_power_now)});
  return t;
}

}  // namespace

std::string render_plan(const Plan& plan, const std::string& format) {
  if (format == "json") return dump_json(plan_json(plan));
  if (format != "text" && format != "markdown")
    throw ReportError(fmt::format("--format {}: expected text, markdown or json", format));
  const auto t = tables_of(plan);
  const bool md = format == "markdown";
  const auto table = [&](const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
    return md ? markdown_table(header, "l" + std::string(header.size() - 1, 'r'), rows)
              : aligned(header, rows);
  };
  std::string out =
      fmt::format("{}Plan for {} from its pilot runs\n\n", md ? "## " : "", plan.experiment);
  out += t.precision_heading + "\n\n" + table(t.precision_header, t.precision_rows);
  if (plan.options.detect)
    out += "\n" + t.pairs_heading + "\n\n" + table(t.pairs_header, t.pairs_rows);
  for (const auto& note : plan.notes) out += "\nnote: " + note + "\n";
  return out;
}

Json plan_json(const Plan& plan) {
  const auto& o = plan.options;
  const auto runs = [](const std::optional<long long>& r) { return r ? Json(*r) : Json(nullptr); };
  Json cells = Json::array();
  for (const auto& c : plan.cells)
    cells.push_back({{"cell", c.label},
                     {"pilot_runs", c.runs},
                     {"mean_epoch_seconds", c.mean},
                     {"sd_epoch_seconds", c.sd},
                     {"relative_half_width", c.half_width},
                     {"runs_needed", runs(c.runs_needed)}});
  Json pairs = Json::array();
  for (const auto& p : plan.pairs)
    pairs.push_back({{"base", p.base},
                     {"cell", p.other},
                     {"delta_seconds", p.delta},
                     {"sd_seconds", p.sd},
                     {"t_n", optional_number(p.t_n)},
                     {"t_runs", runs(p.t_runs)},
                     {"t_power_now", p.t_power_now},
                     {"tukey_n", optional_number(p.tukey_n)},
                     {"tukey_runs", runs(p.tukey_runs)},
                     {"tukey_power_now", p.tukey_power_now}});
  return Json{{"experiment", plan.experiment},
              {"base", plan.base},
              {"precision", o.precision},
              {"confidence", o.confidence},
              {"detect", optional_number(o.detect)},
              {"power", o.power},
              {"family_cells", plan.family},
              {"family_sd_seconds", plan.family_sd},
              {"family_df", plan.family_df},
              {"cells", cells},
              {"pairs", pairs},
              {"notes", plan.notes}};
}

}  // namespace scalebench::report
