// What the subcommands share. Each subcommand has its own file, cli/<name>_command.cpp, with an
// options struct, a function that declares its arguments and options on a CLI::App (bound to that
// struct) and one that runs it once they are parsed; cli.cpp lists them in one table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "report/analysis/report.hpp"
#include "report/data/load_runs.hpp"

namespace CLI {
class App;
}

namespace scalebench::cli {

inline constexpr const char* kDefaultDatabase = "results/scalebench.db";

// The stored measurements a table or figure is drawn from: what report and plot share.
struct ReportSourceOptions {
  std::string database = kDefaultDatabase;
  std::optional<std::string> experiment;  // default: the latest one
  std::vector<std::int64_t> instances;    // explicit instances (pooled when several)
  bool pool = false;                      // every instance of the experiment (identical specs)
  std::optional<int> skip_epochs;         // warm-up epochs left out of each run
  std::optional<std::string> base;
  std::string unit = std::string(report::kDefaultUnit);
  std::vector<std::string> labels;  // --label KEY=TEXT, over the file's "labels"
  std::vector<std::string> only;    // --only FACTOR=LEVEL: a subset of the runs
  std::optional<std::string> condition;
};

// The options several subcommands declare, with one help text each.
void add_database_option(CLI::App& app, std::string& database);
// Which stored instances a report, figure or statistic uses (report/data/instances.hpp).
void add_instance_options(CLI::App& app, std::optional<std::string>& experiment,
                          std::vector<std::int64_t>& instances, bool& pool);
// What report, plot and stats share: what one sample is (docs/statistics.md, "Unit of analysis").
void add_unit_option(CLI::App& app, std::string& unit);
// What report, plot, stats, compare and model share: the warm-up left out (docs/metrics.md).
void add_skip_epochs_option(CLI::App& app, std::optional<int>& skip_epochs);
// --label KEY=TEXT (repeatable), and its parsing: throws ReportError naming a malformed one.
void add_label_option(CLI::App& app, std::vector<std::string>& labels);
report::Labels parse_labels(const std::vector<std::string>& arguments);
// --only FACTOR=LEVEL filters of the scaling model (model, paper --model); throws ReportError.
std::vector<std::pair<std::string, std::string>> parse_only_filters(
    const std::vector<std::string>& filters);
// What report and plot share: the database, the instances, the base group, the unit, the warm-up.
void add_report_source_options(CLI::App& app, ReportSourceOptions& options);
// --only FACTOR=LEVEL (repeatable) and --condition: the part of a study a table or figure shows
// (report::RunFilter::parse reads them).
void add_subset_options(CLI::App& app, std::vector<std::string>& only,
                        std::optional<std::string>& condition);

// The report of the instances `query` selects: report/data loads, report/analysis builds. The
// unit is checked before the database is read. `base` is a row label; with a factor (report
// --by), a label without the factor ("hvd np=1").
report::ReportTable load_report(const db::Database& database, const report::InstanceQuery& query,
                                const std::optional<std::string>& base, const std::string& unit,
                                const std::vector<std::string>& labels = {},
                                const std::string& pairwise = "auto",
                                const report::RunFilter& filter = {});
report::FactorReport load_factor_report(const db::Database& database,
                                        const report::InstanceQuery& query,
                                        const std::optional<std::string>& base,
                                        const std::string& factor, const std::string& unit,
                                        const std::vector<std::string>& labels = {},
                                        const std::string& pairwise = "auto",
                                        const report::RunFilter& filter = {});

}  // namespace scalebench::cli
