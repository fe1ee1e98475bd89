// `scalebench run EXPERIMENT`: every cell of an experiment matrix, run and stored as an instance
// (orchestrator/runner.hpp); --dry-run prints the matrix instead.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>

#include "cli/commands.hpp"

namespace scalebench::cli {

struct RunCommand {
  std::string experiment_path;
  std::string database = kDefaultDatabase;
  bool dry_run = false;  // print the matrix, run nothing, write nothing
  bool resume = false;   // continue the latest instance of the same spec: cells not yet ok only
  int retries = 0;       // re-runs of a cell whose run is not ok
  std::size_t max_runs = 10'000;  // refuse bigger matrices (orchestrator::kDefaultMaxRuns)
  bool quiet = false;             // no progress lines on stderr
  // --precision P: the file's precision rule with this precision (its "repetitions" an object)
  std::optional<double> precision;
};
void declare_run_options(CLI::App& app, RunCommand& options);
int run_command(const RunCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
