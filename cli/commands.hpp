// What each subcommand does, once its options are parsed (cli.cpp parses them).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "plotting/report.hpp"

namespace scalebench::cli {

inline constexpr const char* kDefaultDatabase = "results/scalebench.db";

struct RunCommand {
  std::string experiment_path;
  std::string database = kDefaultDatabase;
  bool dry_run = false;  // print the matrix, run nothing, write nothing
  bool resume = false;   // continue the latest instance of the same spec: cells not yet ok only
  int retries = 0;       // re-runs of a cell whose run is not ok
  std::size_t max_runs = 10'000;  // refuse bigger matrices (orchestrator::kDefaultMaxRuns)
  bool quiet = false;             // no progress lines on stderr
};
int run_command(const RunCommand& options, std::ostream& out, std::ostream& err);

struct ReportCommand {
  std::string database = kDefaultDatabase;
  std::optional<std::string> experiment;  // default: the latest one
  std::vector<std::int64_t> instances;    // explicit instances (pooled when several)
  bool pool = false;                      // every instance of the experiment (identical specs)
  std::optional<int> skip_epochs;         // warm-up epochs left out of each run
  std::string format = "markdown";
  std::optional<std::string> base;
  std::optional<std::string> output;  // default: stdout
  std::optional<std::string> by;      // a factor: one column block per level (Table 2)
  std::string unit = std::string(plotting::kDefaultUnit);
};
int report_command(const ReportCommand& options, std::ostream& out, std::ostream& err);

struct PlotCommand {
  std::string database = kDefaultDatabase;
  std::optional<std::string> experiment;
  std::vector<std::int64_t> instances;
  bool pool = false;
  std::optional<int> skip_epochs;  // warm-up epochs left out of each run
  std::optional<std::string> base;
  std::optional<std::string> output_prefix;  // default: results/<experiment>-scaling
  std::optional<std::string> by;             // a factor: one curve per level (Figure 2)
  std::string unit = std::string(plotting::kDefaultUnit);
  // The scaling model's figure instead (scalebench model --plot with these settings).
  bool model = false;
  std::optional<int> fit_max_np;
  int max_np = 1024;
};
int plot_command(const PlotCommand& options, std::ostream& out, std::ostream& err);

struct QueryCommand {
  std::string database = kDefaultDatabase;
  std::string sql;
  bool csv = false;
};
int query_command(const QueryCommand& options, std::ostream& out, std::ostream& err);
// The same with limits other than the defaults (the one above runs this with db::QueryLimits{}).
// A limit error names the option that raises it.
int query_command(const QueryCommand& options, const db::QueryLimits& limits, std::ostream& out,
                  std::ostream& err);

}  // namespace scalebench::cli
