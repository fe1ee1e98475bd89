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
  if (slower.empty()) return 0;
  std::vector<std::string> cells;
  for (const auto* row : slower)
    cells.push_back(fmt::format("{} ({:+.1f}%)", row->cell, (row->ratio - 1) * 100));
  fmt::print(err, "scalebench compare: slower by {:g}% or more (Welch p < {:g}): {}\n",
             *options.fail_if_slower_percent, 1 - options.confidence, fmt::join(cells, ", "));
  return kSlowerExit;
}

}  // namespace scalebench::cli
