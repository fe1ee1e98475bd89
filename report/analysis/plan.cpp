#include "report/analysis/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/descriptive.hpp"
#include "stats/power.hpp"

namespace scalebench::report {
namespace {

void check_fraction(double value, const char* option, bool below_one) {
  if (!std::isfinite(value) || !(value > 0) || (below_one && !(value < 1)))
    throw ReportError(fmt::format("{} {}: expected a fraction {}", option, value,
                                  below_one ? "in (0, 1), e.g. 0.02 or 2%" : "> 0, e.g. 5%"));
}

double sum_of_squares(const std::vector<double>& x) {
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return ss;
}

PlanCell cell_of(const ReportRow& row, const PlanOptions& options) {
  const auto& x = row.run_epoch_seconds;
  if (x.size() < 2)
    throw ReportError(fmt::format(
        "cell '{}' has {} ok run{}: planning needs at least 2 per cell (their SD); run more "
        "repetitions first",
        row.label, x.size(), x.size() == 1 ? "" : "s"));
  PlanCell cell;
  cell.label = row.label;
  cell.runs = x.size();
  cell.mean = stats::mean(x);
  cell.sd = *stats::sample_sd(x);  // as the report's SD column
  if (!(cell.mean > 0))
    throw ReportError(fmt::format("cell '{}' has a mean epoch time of {} s: nothing to plan",
                                  row.label, cell.mean));
  cell.half_width = stats::relative_half_width(cell.mean, cell.sd, static_cast<double>(cell.runs),
                                               options.confidence);
  cell.runs_needed =
      stats::runs_for_precision(cell.mean, cell.sd, options.precision, options.confidence);
  return cell;
}

}  // namespace

void check_plan_options(const PlanOptions& options) {
  check_fraction(options.precision, "--precision", true);
  check_fraction(options.power, "--power", true);
  check_fraction(options.confidence, "--confidence", true);
  if (options.detect) check_fraction(*options.detect, "--detect", false);
}

Plan plan_of(const ReportTable& table, const PlanOptions& options) {
  check_plan_options(options);
  if (table.unit != "run")
    throw ReportError(fmt::format("plan needs the run as the unit, not {}", table.unit));
  Plan plan;
  plan.experiment = table.experiment;
  plan.base = table.base_label;
  plan.options = options;
  double ss_within = 0;
  std::size_t total = 0;
  for (const auto& row : table.rows) {
    plan.cells.push_back(cell_of(row, options));
    ss_within += sum_of_squares(row.run_epoch_seconds);
    total += row.run_epoch_seconds.size();
  }
  plan.family = table.rows.size();
  plan.family_df = static_cast<double>(total - plan.family);
  plan.family_sd = std::sqrt(ss_within / plan.family_df);
  if (!options.detect) return plan;
  if (plan.family < 2)
    throw ReportError(
        fmt::format("--detect needs two cells or more; the table has only '{}'", plan.base));
  const auto base = std::find_if(table.rows.begin(), table.rows.end(),
                                 [](const ReportRow& row) { return row.is_base; });
  const auto& base_cell = plan.cells[static_cast<std::size_t>(base - table.rows.begin())];
  plan.base_mean = base_cell.mean;
  const double alpha = 1 - options.confidence;
  const double k = static_cast<double>(plan.family);
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    if (table.rows[i].is_base) continue;
    const auto& row = table.rows[i];
    PlanPair pair;
    pair.base = base_cell.label;
    pair.other = row.label;
    pair.delta = *options.detect * base_cell.mean;
    pair.sd = std::sqrt(
        (sum_of_squares(base->run_epoch_seconds) + sum_of_squares(row.run_epoch_seconds)) /
        static_cast<double>(base_cell.runs + plan.cells[i].runs - 2));
    pair.t_n = stats::two_sample_t_n(pair.delta, pair.sd, options.power, alpha);
    pair.t_runs = stats::two_sample_t_runs(pair.delta, pair.sd, options.power, alpha);
    pair.tukey_n = stats::tukey_pair_n(k, pair.delta, plan.family_sd, options.power, alpha);
    pair.tukey_runs = stats::tukey_pair_runs(k, pair.delta, plan.family_sd, options.power, alpha);
    const double now = static_cast<double>(std::min(base_cell.runs, plan.cells[i].runs));
    pair.t_power_now = stats::two_sample_t_power(now, pair.delta, pair.sd, alpha);
    pair.tukey_power_now = stats::tukey_pair_power(now, k, pair.delta, plan.family_sd, alpha);
    plan.pairs.push_back(std::move(pair));
  }
  return plan;
}

}  // namespace scalebench::report
