#include "cli/compare_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <ostream>

#include "plotting/compare.hpp"
#include "plotting/csv_table.hpp"

namespace scalebench::cli {

int compare_command(const CompareCommand& options, std::ostream& out, std::ostream& err) {
  const plotting::InstanceQuery baseline{options.experiment, options.instances, false,
                                         options.skip_epochs};
  const plotting::InstanceQuery candidate{
      options.to_experiment ? options.to_experiment : options.experiment, options.to_instances,
      false, options.skip_epochs};
  const std::string to_database = options.to_database.value_or(options.database);
  if (to_database == options.database && candidate.experiment == baseline.experiment &&
      candidate.instances == baseline.instances)
    throw plotting::InputError(
        "compare needs two different things: --to-experiment NAME, --to-instance ID or "
        "--to-db FILE (e.g. --instance 1 --to-instance 2)");
  if (options.fail_if_slower_percent && !(*options.fail_if_slower_percent >= 0))
    throw plotting::InputError(fmt::format("--fail-if-slower {}: expected a percentage >= 0",
                                           *options.fail_if_slower_percent));
  const auto load = [](const std::string& path, const plotting::InstanceQuery& query) {
    return plotting::observations_from_database(path, query, {"group"}, "run");
  };
  const auto comparison =
      plotting::compare_observations(load(options.database, baseline), load(to_database, candidate),
                                     {options.confidence, options.threshold_percent / 100});
  if (options.json)
    out << plotting::comparison_json(comparison).dump(2) << "\n";
  else
    out << plotting::render_comparison_text(comparison);
  if (!options.fail_if_slower_percent) return 0;
  const auto slower = plotting::slower_than(comparison, *options.fail_if_slower_percent / 100);
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
    if (row.verdict == plotting::Verdict::TooFewRuns)
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
