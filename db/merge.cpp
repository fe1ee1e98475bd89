#include "db/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace scalebench::db {
namespace {

// The target's copy of `instance` (the same invocation: spec hash, start time, host), if any.
std::optional<std::int64_t> same_instance(const Database& into, const ExperimentRecord& instance) {
  for (const auto& candidate : into.instances(instance.name)) {
    if (candidate.spec_hash == instance.spec_hash && candidate.started_at == instance.started_at &&
        candidate.host == instance.host)
      return candidate.id;
  }
  return std::nullopt;
}

bool same_cell(const RunRecord& a, const RunRecord& b) {
  return a.condition == b.condition && a.factors == b.factors && a.np == b.np &&
         a.repetition == b.repetition;
}

// Why `into` already has `run`'s place in the matrix, if it does: the same attempt of the same
// repetition of the cell (whatever its start time: `run --resume` re-runs a cell whose run went
// to a side file), or an ok run of it when this one is ok too (a cell counts one ok run).
std::optional<std::string> taken_by(const std::vector<RunRecord>& present, const RunRecord& run) {
  for (const auto& r : present) {
    if (!same_cell(r, run)) continue;
    if (r.attempt == run.attempt)
      return fmt::format("run {} holds that repetition's attempt {}", r.id, r.attempt);
    if (r.status == RunStatus::Ok && run.status == RunStatus::Ok)
      return fmt::format("run {} (attempt {}) is already an ok run of that repetition", r.id,
                         r.attempt);
  }
  return std::nullopt;
}

std::string describe(const RunRecord& run) {
  return fmt::format("run {} ({} np={} repetition {} attempt {}, started {})", run.id,
                     run.condition, run.np, run.repetition, run.attempt, run.started_at);
}

// The run as insert_run takes it: everything the side holds about it, under `instance_id`.
RunBundle bundle_of(const Database& side, const RunRecord& run, std::int64_t instance_id) {
  RunBundle bundle;
  bundle.run = run;
  bundle.run.id = 0;
  bundle.run.experiment_id = instance_id;
  bundle.run.provenance = side.own_provenance(run.id);
  bundle.epochs = side.epochs(run.id);
  bundle.lines = side.lines(run.id);
  bundle.allreduce = side.allreduce_results(run.id);
  return bundle;
}

}  // namespace

MergeOutcome merge_database(Database& into, const Database& side, const std::string& side_name,
                            bool skip_duplicates) {
  struct Planned {
    ExperimentRecord instance;
    std::optional<std::int64_t> target;  // the target's copy of the instance, if it has one
    std::vector<RunRecord> runs;         // to write
  };
  std::vector<Planned> plan;
  std::vector<std::string> duplicates;
  MergeOutcome outcome;
  // Everything is checked before anything is written.
  for (const auto& instance : side.experiments()) {
    Planned p{instance, same_instance(into, instance), {}};
    const std::vector<RunRecord> present =
        p.target ? into.runs_of_instances({*p.target}) : std::vector<RunRecord>{};
    for (const auto& run : side.runs_of_instances({instance.id})) {
      const auto taken = taken_by(present, run);
      if (!taken) {
        p.runs.push_back(run);
      } else if (skip_duplicates) {
        outcome.skipped.push_back(fmt::format("{} of {} skipped: {}'s {}", describe(run), side_name,
                                              into.path(), *taken));
      } else {
        duplicates.push_back(
            fmt::format("{} of {}: {}'s {}", describe(run), side_name, into.path(), *taken));
      }
    }
    plan.push_back(std::move(p));
  }
  if (!duplicates.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < duplicates.size() && i < 5; ++i) listed += "; " + duplicates[i];
    throw DuplicateRunError(fmt::format(
        "{}: {} already merged, nothing written{}{} (--skip-duplicates merges the rest)", side_name,
        duplicates.size() == 1 ? std::string("1 run is")
                               : fmt::format("{} runs are", duplicates.size()),
        listed, duplicates.size() > 5 ? "; ..." : ""));
  }
  // One transaction: a side file that cannot be read half-way (corrupt, truncated) leaves the
  // target as it was, never an instance without its runs.
  auto batch = into.begin_batch();
  for (auto& p : plan) {
    if (p.runs.empty()) continue;  // an instance is brought over with its runs, never empty
    std::int64_t target_id = 0;
    if (p.target) {
      target_id = *p.target;
    } else {
      ExperimentRecord copy = p.instance;
      copy.provenance = side.instance_provenance(p.instance.id);
      copy.id = 0;
      target_id = into.insert_experiment(copy);
      ++outcome.instances_created;
    }
    for (const auto& run : p.runs) {
      into.insert_run(bundle_of(side, run, target_id));
      ++outcome.runs;
    }
  }
  batch.commit();
  return outcome;
}

}  // namespace scalebench::db
