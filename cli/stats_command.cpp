#include "cli/stats_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
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
  std::optional<plotting::ContrastReport> contrast;
  if (options.contrast && options.summary)
    throw plotting::InputError("--contrast needs observations (--csv or --db), not --summary");
  if (options.summary) {
    report = plotting::analyze_summary_file(*options.summary, options.confidence);
  } else if (options.csv) {
    if (options.response.empty()) throw plotting::InputError("--csv needs --response COLUMN");
    if (options.factors.empty())
      throw plotting::InputError("--csv needs --factor COLUMN (once or twice)");
    const auto data =
        plotting::observations_from_csv(*options.csv, options.response, options.factors);
    report = plotting::analyze_observations(data, options.ss_type, options.confidence,
                                            !options.no_interaction);
    if (options.contrast) contrast = plotting::interaction_contrast_of(data, options.confidence);
  } else {
    const auto data = plotting::observations_from_database(
        *options.database,
        plotting::InstanceQuery{options.experiment, options.instances, options.pool,
                                options.skip_epochs},
        options.factors, options.unit, options.only,
        options.response.empty() ? "epoch_seconds" : options.response);
    report = plotting::analyze_observations(data, options.ss_type, options.confidence,
                                            !options.no_interaction);
    if (options.contrast) contrast = plotting::interaction_contrast_of(data, options.confidence);
  }
  if (options.base) plotting::keep_pairs_against(report, *options.base);
  if (options.json) {
    auto json = nlohmann::json::parse(plotting::render_stats_json(report));
    if (contrast) json["interaction_contrast"] = plotting::contrast_json(*contrast);
    out << (contrast ? json.dump(2) + "\n" : plotting::render_stats_json(report));
  } else {
    out << plotting::render_stats_text(report);
    if (contrast) out << plotting::render_contrast_text(*contrast);
  }
  return 0;
}

}  // namespace scalebench::cli
