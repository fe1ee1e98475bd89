#include "cli/compare_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "report/analysis/compare.hpp"
#include "report/data/observations.hpp"
#include "report/export/compare_export.hpp"

namespace scalebench::cli {

void declare_compare_options(CLI::App& app, CompareCommand& options) {
  app.add_option("--db", options.database, "The baseline's results database")
      ->capture_default_str();
  app.add_option("--experiment", options.experiment,
                 "The baseline experiment (default: the latest instance's)");
  app.add_option("--instance", options.instances,
                 "The baseline's instance ids (repeat to pool identical specs)");
  app.add_option("--to-db", options.to_database, "The candidate's database (default: --db)");
  app.add_option("--to-experiment", options.to_experiment,
                 "The candidate experiment (default: --experiment)");
  app.add_option("--to-instance", options.to_instances, "The candidate's instance ids");
  add_skip_epochs_option(app, options.skip_epochs);
  app.add_option("--threshold", options.threshold_percent,
                 "Slower or faster only beyond PCT percent; 'no difference' is marked 'CI "
                 "within +-PCT' when the whole interval is inside")
      ->transform(real_in({0, 100, false, true}))
      ->capture_default_str();
  app.add_option("--confidence", options.confidence, "Of the intervals and the tests")
      ->transform(real_in({0, 1, true, true}))
      ->capture_default_str();
  app.add_option("--fail-if-slower", options.fail_if_slower_percent,
                 "Exit 3 when a cell is significantly slower by PCT percent or more (a CI "
                 "gate); exit 4 when a compared cell has too few runs to test")
      ->transform(real_in({0, 1e6}));
  app.add_flag("--allow-too-few", options.allow_too_few,
               "With --fail-if-slower: let cells with too few runs to test pass (exit 0 "
               "instead of 4)");
  app.add_flag("--json", options.json, "JSON output");
}

int compare_command(const CompareCommand& options, std::ostream& out, std::ostream& err) {
  const report::InstanceQuery baseline{options.experiment, options.instances, false,
                                       options.skip_epochs};
  const report::InstanceQuery candidate{
      options.to_experiment ? options.to_experiment : options.experiment, options.to_instances,
      false, options.skip_epochs};
  const std::string to_database = options.to_database.value_or(options.database);
  if (to_database == options.database && candidate.experiment == baseline.experiment &&
      candidate.instances == baseline.instances)
    throw report::InputError(
        "compare needs two different things: --to-experiment NAME, --to-instance ID or "
        "--to-db FILE (e.g. --instance 1 --to-instance 2)");
  if (options.fail_if_slower_percent && !(*options.fail_if_slower_percent >= 0))
    throw report::InputError(fmt::format("--fail-if-slower {}: expected a percentage >= 0",
                                         *options.fail_if_slower_percent));
  const auto load = [](const std::string& path, const report::InstanceQuery& query) {
    return report::observations_from_database(path, query, {"group"}, "run");
  };
  const auto comparison =
      report::compare_observations(load(options.database, baseline), load(to_database, candidate),
                                   {options.confidence, options.threshold_percent / 100});
  if (options.json)
    out << report::dump_json(report::comparison_json(comparison));
  else
    out << report::render_comparison_text(comparison);
  if (!options.fail_if_slower_percent) return 0;
  const auto slower = report::slower_than(comparison, *options.fail_if_slower_percent / 100);
  if (!slower.empty()) {
    std::vector<std::string> cells;
    for (const auto* row : slower)
      cells.push_back(fmt::format("{} ({:+.1f}%)", row->cell, (row->ratio - 1) * 100));
    fmt::print(err, "scalebench compare: slower by {:g}% or more (Welch p < {:g}): {}\n",
               *options.fail_if_slower_percent, 1 - options.confidence, fmt::join(cells, ", "));
    return kSlowerExit;
  }
  // A cell the test cannot judge (one run on a side: no run-to-run variation) would pass the
  // gate by default, however much slower it is: that is its own failure unless allowed.
  std::vector<std::string> untested;
  for (const auto& row : comparison.rows)
    if (row.verdict == report::Verdict::TooFewRuns)
      untested.push_back(fmt::format("{} (baseline {} run{}, candidate {} run{})", row.cell,
                                     row.baseline_runs, row.baseline_runs == 1 ? "" : "s",
                                     row.candidate_runs, row.candidate_runs == 1 ? "" : "s"));
  if (untested.empty()) return 0;
  if (options.allow_too_few) {
    fmt::print(err,
               "scalebench compare: --allow-too-few: not tested (too few runs), passed anyway: "
               "{}\n",
               fmt::join(untested, ", "));
    return 0;
  }
  fmt::print(err,
             "scalebench compare: --fail-if-slower cannot test {} cell{} (at least 2 ok runs per "
             "side are needed; more for small slowdowns, docs/statistics.md): {}; run more "
             "repetitions, or pass --allow-too-few to let such cells pass\n",
             untested.size(), untested.size() == 1 ? "" : "s", fmt::join(untested, ", "));
  return kTooFewExit;
}

}  // namespace scalebench::cli
