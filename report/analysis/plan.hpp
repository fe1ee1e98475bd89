// Planning from a pilot (`scalebench plan`): from the report's table of a finished instance (one
// row per cell, the run as the unit), the runs each cell needs for a precision of its mean, and
// the runs per cell needed to detect a difference from the base row, under the two-sample t-test
// (R's power.t.test) and under the Tukey-Kramer family of the report's table. The statistics are
// stats/power.hpp's; formulas and limits: docs/statistics.md, "Planning from a pilot".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "report/analysis/report.hpp"

namespace scalebench::report {

struct PlanOptions {
  double precision = 0.02;  // the CI's half-width as a fraction of the mean, in (0, 1)
  // The difference to detect as a fraction of the base row's mean (> 0); absent: no pairs.
  std::optional<double> detect = std::nullopt;
  double power = 0.8;        // in (0, 1)
  double confidence = 0.95;  // of the intervals; the tests' alpha is 1 - confidence
};

// One cell (a row of the report's table) with its pilot runs.
struct PlanCell {
  std::string label;  // the report's row label
  std::size_t runs = 0;
  double mean = 0;                       // of the runs' mean epoch times (s)
  double sd = 0;                         // their sample SD (n - 1)
  double half_width = 0;                 // the CI's half-width now, a fraction of the mean
  std::optional<long long> runs_needed;  // absent beyond stats::kMaxPlannedRuns
};

// The base row against one other row.
struct PlanPair {
  std::string base;
  std::string other;
  double delta = 0;  // detect x the base's mean (s)
  double sd = 0;     // the two cells' pooled SD (the two-sample t-test's)
  // R's power.t.test(delta, sd, power)$n (strict = FALSE) and the integer runs per cell.
  std::optional<double> t_n;
  std::optional<long long> t_runs;
  // The Tukey-Kramer family of the whole table (Plan::family cells, Plan::family_sd).
  std::optional<double> tukey_n;
  std::optional<long long> tukey_runs;
  // The power each test has now, with the pilot's runs per cell (the smaller of the two cells').
  double t_power_now = 0;
  double tukey_power_now = 0;
};

struct Plan {
  std::string experiment;
  std::string base;  // the base row's label (pairs are against it)
  double base_mean = 0;
  PlanOptions options;
  std::vector<PlanCell> cells;  // in the report's row order
  std::vector<PlanPair> pairs;  // with options.detect: every other row against the base
  std::size_t family = 0;       // k: the cells of the Tukey family (the table's rows)
  double family_sd = 0;         // the pooled SD of all cells: sqrt(MS_within)
  double family_df = 0;         // its degrees of freedom, N - k
  std::vector<std::string> notes;
};

// Throws ReportError naming the option (--precision, --detect, --power, --confidence) outside its
// range.
void check_plan_options(const PlanOptions& options);

// Throws ReportError (one line): an option outside its range (naming it), or a cell with fewer
// than two runs (naming the cell: its SD is unknown). The table's unit must be "run".
Plan plan_of(const ReportTable& table, const PlanOptions& options);

}  // namespace scalebench::report
