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

bool same_run(const RunRecord& a, const RunRecord& b) {
  return a.condition == b.condition && a.factors == b.factors && a.np == b.np &&
         a.repetition == b.repetition && a.attempt == b.attempt && a.started_at == b.started_at;
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
      const auto match = std::find_if(present.begin(), present.end(),
                                      [&](const RunRecord& r) { return same_run(r, run); });
      if (match == present.end()) {
        p.runs.push_back(run);
      } else if (skip_duplicates) {
        ++outcome.skipped;
      } else {
        duplicates.push_back(fmt::format("{} of {} is already {}'s run {}", describe(run),
                                         side_name, into.path(), match->id));
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
  return outcome;
}

}  // namespace scalebench::db
