// Per-run observations for the statistics: from a CSV file, or from the results database (which
// instances, warm-up left out, --only filters, the factors' levels in the file's order, the unit
// of analysis: one mean per run by default). Used by stats and compare.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/data/instances.hpp"
#include "report/data/run_set.hpp"

namespace scalebench::report {

// Raw observations: one response value and one level per factor for each.
struct Observations {
  std::string source;
  std::string response;
  std::vector<double> values;
  std::vector<std::string> factor_names;
  std::vector<std::vector<std::string>> levels;  // levels[f][i]: level of factor f for value i
  std::optional<std::string> unit;
  std::vector<std::int64_t> runs;  // the run of each value (database, units epoch and nested)
  std::vector<std::string> warnings;
  // Level order per factor where the source knows it (the experiment file's; np ascending);
  // empty: order of first appearance.
  std::vector<std::vector<std::string>> level_order = {};
};

Observations observations_from_csv(const std::string& path, const std::string& response,
                                   const std::vector<std::string>& factors);
// `only`: FACTOR=LEVEL filters; the runs left out are counted in a warning. `response`:
// "epoch_seconds" (the mean epoch time of a run, or each epoch with unit "epoch"), or
// "log_images_per_second" (unit "run" only: log(train_images x epochs / sum of epoch times) of a
// run, the scale on which speed-ups are differences).
// The same from loaded runs (pure): `factors` from set.factors() or "group", the file's level
// order, the set's failures, warm-up and filter said in the warnings. `source` names the data.
Observations observations_from_runs(const RunSet& set, const std::vector<std::string>& factors,
                                    const std::string& unit,
                                    const std::string& response = "epoch_seconds",
                                    const std::string& source = "");
// Loads the runs (report/data/load_runs.hpp) and calls observations_from_runs.
Observations observations_from_database(const std::string& path, const InstanceQuery& query,
                                        const std::vector<std::string>& factors,
                                        const std::string& unit,
                                        const std::vector<std::string>& only = {},
                                        const std::string& response = "epoch_seconds");

}  // namespace scalebench::report
