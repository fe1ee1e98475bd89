#include "cli/commands.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <set>

#include "cli/numeric_flags.hpp"
#include "report/analysis/report_assembly.hpp"
#include "report/data/load_runs.hpp"
#include "util/label_keys.hpp"
#include "util/text.hpp"

namespace scalebench::cli {

void add_database_option(CLI::App& app, std::string& database) {
  app.add_option("--db", database, "Results database (SQLite)")->capture_default_str();
}

void add_instance_options(CLI::App& app, std::optional<std::string>& experiment,
                          std::vector<std::int64_t>& instances, bool& pool) {
  app.add_option("--experiment", experiment,
                 "Experiment name (default: the latest instance's); its latest instance is used");
  app.add_option("--instance", instances,
                 "An instance id (experiments.id); repeat to pool instances with identical specs");
  app.add_flag("--pool", pool,
               "Pool every instance of the experiment (refused unless their specs are identical)");
}

void add_unit_option(CLI::App& app, std::string& unit) {
  app.add_option("--unit", unit,
                 "What one sample is: run (its mean epoch time), nested (epochs within runs, a "
                 "mixed model) or epoch (as the reference papers; p-values too small)")
      ->check(CLI::IsMember(report::unit_names()))
      ->capture_default_str();
}

void add_skip_epochs_option(CLI::App& app, std::optional<int>& skip_epochs) {
  app.add_option("--skip-epochs", skip_epochs,
                 "Leave out each run's first N epochs (warm-up) [the experiment file's "
                 "\"warmup_epochs\", else 0]")
      ->transform(integer_in(0, 100000));
}

void add_report_source_options(CLI::App& app, ReportSourceOptions& options) {
  add_database_option(app, options.database);
  add_instance_options(app, options.experiment, options.instances, options.pool);
  app.add_option("--base", options.base, "Base condition label for Tukey and speed-up");
  add_unit_option(app, options.unit);
  add_skip_epochs_option(app, options.skip_epochs);
  add_label_option(app, options.labels);
  add_subset_options(app, options.only, options.condition);
}

void add_subset_options(CLI::App& app, std::vector<std::string>& only,
                        std::optional<std::string>& condition) {
  app.add_option("--only", only,
                 "FACTOR=LEVEL: only the runs at this level (repeatable; a factor of the "
                 "experiment file, or condition, launcher, np)");
  app.add_option("--condition", condition, "Only the runs of this condition");
}

void add_label_option(CLI::App& app, std::vector<std::string>& labels) {
  app.add_option("--label", labels,
                 "KEY=TEXT: what readers see for a condition, factor, factor=level, np or column "
                 "(repeatable; over the experiment file's \"labels\"; docs/paper.md)");
}

report::Labels parse_labels(const std::vector<std::string>& arguments) {
  report::Labels labels;
  for (const auto& argument : arguments) report::add_label_argument(labels, argument);
  return labels;
}

std::vector<std::pair<std::string, std::string>> parse_only_filters(
    const std::vector<std::string>& filters) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& filter : filters) {
    const auto eq = filter.find('=');
    if (eq == std::string::npos || eq == 0)
      throw report::ReportError(fmt::format("--only '{}' is not FACTOR=LEVEL", filter));
    out.emplace_back(filter.substr(0, eq), filter.substr(eq + 1));
  }
  return out;
}

namespace {

// The names a --label may give for these rows: their conditions, launchers, factors and levels
// (bare and as factor=level), np and the columns (as the experiment reader's "labels").
void add_row_keys(const std::vector<report::ReportRow>& rows, std::set<std::string>& keys) {
  for (const auto& row : rows) {
    keys.insert(row.condition);
    keys.insert(row.launcher);
    for (const auto& [factor, level] : row.levels) {
      keys.insert(factor);
      keys.insert(level);
      keys.insert(factor + "=" + level);
    }
  }
}

// A --label whose key names nothing here would silently do nothing: refused, with a suggestion.
void check_label_keys(const report::Labels& overrides, std::set<std::string> keys) {
  keys.insert("np");
  for (const auto column : util::kLabelColumns) keys.emplace(column);
  const std::vector<std::string> known(keys.begin(), keys.end());
  for (const auto& [key, text] : overrides.text) {
    if (keys.count(key)) continue;
    const auto near = util::closest_match(key, known);
    throw report::ReportError(fmt::format(
        "--label '{}={}': '{}' names no experiment, condition, launcher, factor, level, np or "
        "column of this experiment{}",
        key, text, key, near ? fmt::format(" (did you mean '{}'?)", *near) : ""));
  }
}

}  // namespace

report::ReportTable load_report(const db::Database& database, const report::InstanceQuery& query,
                                const std::optional<std::string>& base, const std::string& unit,
                                const std::vector<std::string>& labels, const std::string& pairwise,
                                const report::RunFilter& filter) {
  report::check_unit(unit);
  const auto overrides = parse_labels(labels);
  auto set = report::load_runs(database, query, filter);
  for (const auto& [key, text] : overrides.text) set.labels.text[key] = text;
  auto table = report::report_of(set, base, unit, pairwise);
  std::set<std::string> keys = {table.experiment};
  add_row_keys(table.rows, keys);
  check_label_keys(overrides, keys);
  return table;
}

report::FactorReport load_factor_report(const db::Database& database,
                                        const report::InstanceQuery& query,
                                        const std::optional<std::string>& base,
                                        const std::string& factor, const std::string& unit,
                                        const std::vector<std::string>& labels,
                                        const std::string& pairwise,
                                        const report::RunFilter& filter) {
  report::check_unit(unit);
  const auto overrides = parse_labels(labels);
  auto set = report::load_runs(database, query, filter, {.allreduce_runs = true});
  for (const auto& [key, text] : overrides.text) set.labels.text[key] = text;
  auto report = report::factor_report_of(set, factor, base, unit, pairwise);
  std::set<std::string> keys = {factor, report.experiment};
  for (const auto& level : report.levels) {
    keys.insert(level);
    keys.insert(factor + "=" + level);
  }
  for (const auto& block : report.blocks) add_row_keys(block.rows, keys);
  check_label_keys(overrides, keys);
  return report;
}

}  // namespace scalebench::cli
