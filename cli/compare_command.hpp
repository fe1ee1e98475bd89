// `scalebench compare`: a baseline and a candidate (two experiments, two instances or two
// databases) cell by cell, on run-level statistics (report/analysis/compare.hpp).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace scalebench::cli {

struct CompareCommand {
  std::string database = kDefaultDatabase;
  std::optional<std::string> experiment;
  std::vector<std::int64_t> instances;
  std::optional<std::string> to_database;    // default: --db
  std::optional<std::string> to_experiment;  // default: --experiment
  std::vector<std::int64_t> to_instances;
  std::optional<int> skip_epochs;  // warm-up epochs left out of each run, both sides
  double threshold_percent = 2;
  double confidence = 0.95;
  std::optional<double> fail_if_slower_percent;
  bool allow_too_few = false;  // --allow-too-few: a cell too small to test passes the gate
  bool json = false;
};

// Exit status: 0, or kSlowerExit when --fail-if-slower finds a cell slower by at least that much,
// or kTooFewExit when --fail-if-slower cannot test a compared cell (fewer than two runs on a
// side: run-to-run variation unknown) and --allow-too-few is not given (errors are 1 and usage 2,
// as for every command). A gate never passes because it could not look.
inline constexpr int kSlowerExit = 3;
inline constexpr int kTooFewExit = 4;
void declare_compare_options(CLI::App& app, CompareCommand& options);
int compare_command(const CompareCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
