#include "cli/stats_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "plotting/analysis.hpp"
#include "plotting/csv_table.hpp"

namespace scalebench::cli {

void declare_stats_options(CLI::App& app, StatsCommand& options) {
  app.add_option("--csv", options.csv, "Raw observations, one per line (with a header)");
  app.add_option("--summary", options.summary, "Summary statistics: columns group,n,mean,sd");
  app.add_option("--db", options.database, "Results database (epoch times of ok runs)");
  add_instance_options(app, options.experiment, options.instances, options.pool);
  add_skip_epochs_option(app, options.skip_epochs);
  app.add_option("--response", options.response,
                 "With --csv: the response column; with --db: epoch_seconds (default) or "
                 "log_images_per_second (per run: speed-ups become differences)");
  app.add_option("--factor", options.factors,
                 "Factor column, once or twice (with --db: group, condition, launcher, np)");
  app.add_option("--ss-type", options.ss_type, "Sums of squares for two factors: 1, 2 or 3")
      ->transform(integer_in(1, 3))
      ->capture_default_str();
  app.add_option("--only", options.only,
                 "With --db: keep the runs whose FACTOR has LEVEL (FACTOR=LEVEL, repeatable; "
                 "e.g. condition=mpirun for the part of a design crossed with np)");
  app.add_flag("--no-interaction", options.no_interaction,
               "Two factors: fit the additive model A + B (for a design with an empty cell, "
               "e.g. the single condition at np=2)");
  add_unit_option(app, options.unit);
  app.add_option("--confidence", options.confidence, "Family-wise confidence level")
      ->transform(real_in({0, 1, true, true}))
      ->capture_default_str();
  app.add_option("--base", options.base, "Only the post-hoc pairs against this level");
  app.add_flag("--json", options.json, "JSON output (a stable contract, docs/statistics.md)");
  app.add_flag("--contrast", options.contrast,
               "Two factors of two levels: the interaction contrast with its confidence "
               "interval (on log_images_per_second: the ratio of the two speed-ups)");
}

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
