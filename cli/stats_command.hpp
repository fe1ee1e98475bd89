// `scalebench stats`: ANOVA, post-hoc tests and effect sizes on raw observations (CSV or the
// results database) or on published summary statistics.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace scalebench::cli {

struct StatsCommand {
  std::optional<std::string> csv;         // raw observations
  std::optional<std::string> summary;     // group,n,mean,sd per line
  std::optional<std::string> database;    // the results database
  std::optional<std::string> experiment;  // with --db; default: the latest
  std::vector<std::int64_t> instances;    // with --db: explicit instances (pooled when several)
  bool pool = false;                      // with --db: every instance (identical specs)
  std::optional<int> skip_epochs;         // with --db: warm-up epochs left out of each run
  std::string response;                   // with --csv: the response column
  std::vector<std::string> factors;       // with --csv/--db: one or two factor columns
  int ss_type = 2;
  bool no_interaction = false;    // two factors: the additive model A + B
  std::vector<std::string> only;  // with --db: FACTOR=LEVEL filters (the crossed part of a design)
  std::string unit = "run";       // with --db: run (a run's mean epoch), nested or epoch
  double confidence = 0.95;
  std::optional<std::string> base;  // keep only the Tukey pairs against this level
  bool json = false;
  bool contrast = false;  // two factors of two levels: the interaction contrast with its CI
};

void declare_stats_options(CLI::App& app, StatsCommand& options);
int stats_command(const StatsCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
