// A RunSet from the results database: the one place in report/ that reads it. Which instances
// (InstanceQuery), their ok runs with each table read once for all of them, the warm-up left
// out (the one rule, WarmupRule), notes on what was used and which runs failed, the merged
// provenance and the experiment file's order and labels. Commands call load_runs; analyses take
// the RunSet (report/data/run_set.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "report/data/instances.hpp"
#include "report/data/run_set.hpp"

namespace scalebench::report {

struct LoadOptions {
  bool allreduce_runs = false;  // also the ok allreduce benchmark runs with their rows
  bool headers = false;         // each run's scalebench-train header
  // Throw ReportError when no ok run has an epoch (naming the runs, or an allreduce benchmark's
  // query); off for an instance read for its allreduce runs only.
  bool require_epochs = true;
};

// Throws ReportError: nothing stored, an unknown name or id, instances of different names, or
// instances whose specs differ (the message names the differing instances and JSON paths).
InstanceSelection select_instances(const db::Database& database, const InstanceQuery& query);

// The rule (instances.hpp) for these instances; throws InputError for a negative `skip`.
WarmupRule warmup_rule(const db::Database& database, const InstanceSelection& selection,
                       std::optional<int> skip);

// Notes on runs that are not ok, per condition and np: conditions none of whose runs are ok would
// otherwise vanish from a table without a word.
std::vector<std::string> failure_notes(const std::vector<db::RunRecord>& runs);

// The SQL that shows an allreduce benchmark experiment: mean time and bandwidth per size.
std::string allreduce_query(const std::string& experiment);

// The runs `query` selects, without each run's warm-up (its first N epochs, N from warmup_rule;
// a run with N epochs or fewer keeps them all, said in a note), then `filter` applied
// (apply_filter). Allreduce runs are kept unless they have a filtered factor at another level.
RunSet load_runs(const db::Database& database, const InstanceQuery& query,
                 const RunFilter& filter = {}, const LoadOptions& what = {});

}  // namespace scalebench::report
