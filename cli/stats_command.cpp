#include "cli/stats_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "report/analysis/statistics.hpp"
#include "report/data/observations.hpp"
#include "report/export/stats_export.hpp"

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
    throw report::InputError("give exactly one of --csv FILE, --summary FILE, --db PATH");
  if (!(options.confidence > 0 && options.confidence < 1))
    throw report::InputError(
        fmt::format("--confidence {}: expected a number between 0 and 1", options.confidence));
  report::StatsReport report;
  std::optional<report::ContrastReport> contrast;
  if (options.contrast && options.summary)
    throw report::InputError("--contrast needs observations (--csv or --db), not --summary");
  if (options.summary) {
    report = report::analyze_summary_file(*options.summary, options.confidence);
  } else if (options.csv) {
    if (options.response.empty()) throw report::InputError("--csv needs --response COLUMN");
    if (options.factors.empty())
      throw report::InputError("--csv needs --factor COLUMN (once or twice)");
    const auto data =
        report::observations_from_csv(*options.csv, options.response, options.factors);
    report = report::analyze_observations(data, options.ss_type, options.confidence,
                                          !options.no_interaction);
    if (options.contrast) contrast = report::interaction_contrast_of(data, options.confidence);
  } else {
    const auto data = report::observations_from_database(
        *options.database,
        report::InstanceQuery{options.experiment, options.instances, options.pool,
                              options.skip_epochs},
        options.factors, options.unit, options.only,
        options.response.empty() ? "epoch_seconds" : options.response);
    report = report::analyze_observations(data, options.ss_type, options.confidence,
                                          !options.no_interaction);
    if (options.contrast) contrast = report::interaction_contrast_of(data, options.confidence);
  }
  if (options.base) report::keep_pairs_against(report, *options.base);
  if (options.json) {
    out << report::render_stats_json(report, contrast ? &*contrast : nullptr);
  } else {
    out << report::render_stats_text(report);
    if (contrast) out << report::render_contrast_text(*contrast);
  }
  return 0;
}

}  // namespace scalebench::cli
