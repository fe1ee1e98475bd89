// `scalebench stats`: ANOVA, post-hoc tests and effect sizes on raw observations (CSV or the
// results database) or on published summary statistics.
#pragma once

#include "plotting/instances.hpp"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "plotting/stats_report.hpp"

namespace scalebench::cli {

struct StatsCommand {
  std::optional<std::string> csv;          // raw observations
  std::optional<std::string> summary;      // group,n,mean,sd per line
  std::optional<std::string> database;     // the results database
  std::optional<std::string> experiment;   // with --db; default: the latest
  std::vector<std::int64_t> instances;     // with --db: explicit instances (pooled when several)
  bool pool = false;                       // with --db: every instance (identical specs)
  std::string response;                    // with --csv: the response column
  std::vector<std::string> factors;        // with --csv/--db: one or two factor columns
  int ss_type = 2;
  std::string unit = "run";                // with --db: "run" (mean of a run's epochs) or "epoch"
  double confidence = 0.95;
  std::optional<std::string> base;         // keep only the Tukey pairs against this level
  bool json = false;
};

// Raw observations: one response value and one level per factor for each.
struct Observations {
  std::string source;
  std::string response;
  std::vector<double> values;
  std::vector<std::string> factor_names;
  std::vector<std::vector<std::string>> levels;  // levels[f][i]: level of factor f for value i
  std::optional<std::string> unit;
  std::vector<std::string> warnings;
};

Observations observations_from_csv(const std::string& path, const std::string& response,
                                   const std::vector<std::string>& factors);
Observations observations_from_database(const std::string& path,
                                        const plotting::InstanceQuery& query,
                                        const std::vector<std::string>& factors,
                                        const std::string& unit);

plotting::StatsReport analyze_observations(const Observations& data, int ss_type, double confidence);
plotting::StatsReport analyze_summary_file(const std::string& path, double confidence);

// Keeps the post-hoc pairs that involve `base`, turned to read base first (diff = mean(base) - mean(other)
// flipped to mean(other) - mean(base) with a = other). The p-values stay those of the all-pairs
// family (conservative for k - 1 comparisons). Throws InputError when no pair holds `base`.
void keep_pairs_against(plotting::StatsReport& report, const std::string& base);

int stats_command(const StatsCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
