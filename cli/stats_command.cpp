#include "cli/stats_command.hpp"

#include <fmt/format.h>

#include <ostream>

#include "plotting/analysis.hpp"
#include "plotting/csv_table.hpp"

namespace scalebench::cli {

int stats_command(const StatsCommand& options, std::ostream& out, std::ostream&) {
  const int sources =
      (options.csv ? 1 : 0) + (options.summary ? 1 : 0) + (options.database ? 1 : 0);
  if (sources != 1)
    throw plotting::InputError("give exactly one of --csv FILE, --summary FILE, --db PATH");
  if (!(options.confidence > 0 && options.confidence < 1))
    throw plotting::InputError(
        fmt::format("--confidence {}: expected a number between 0 and 1", options.confidence));
  plotting::StatsReport report;
  if (options.summary) {
    report = plotting::analyze_summary_file(*options.summary, options.confidence);
  } else if (options.csv) {
    if (options.response.empty()) throw plotting::InputError("--csv needs --response COLUMN");
    if (options.factors.empty())
      throw plotting::InputError("--csv needs --factor COLUMN (once or twice)");
    report = plotting::analyze_observations(
        plotting::observations_from_csv(*options.csv, options.response, options.factors),
        options.ss_type, options.confidence, !options.no_interaction);
  } else {
    report = plotting::analyze_observations(
        plotting::observations_from_database(
            *options.database,
            plotting::InstanceQuery{options.experiment, options.instances, options.pool},
            options.factors, options.unit, options.only),
        options.ss_type, options.confidence, !options.no_interaction);
  }
  if (options.base) plotting::keep_pairs_against(report, *options.base);
  out << (options.json ? plotting::render_stats_json(report) : plotting::render_stats_text(report));
  return 0;
}

}  // namespace scalebench::cli
