#include "report/data/load_runs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "report/error.hpp"
#include "util/text.hpp"

namespace scalebench::report {
namespace {

// "finished", "interrupted", or why there is no end.
std::string how_it_ended(const db::ExperimentRecord& instance) {
  if (instance.end_reason) return *instance.end_reason;
  if (instance.ended_at) return "ended (scalebench before schema 3 did not record how)";
  return "no end recorded: still running, or scalebench was killed";
}

std::string describe(const db::ExperimentRecord& instance, const std::vector<db::RunRecord>& runs) {
  std::size_t ok = 0, count = 0;
  for (const auto& run : runs) {
    if (run.experiment_id != instance.id) continue;
    ++count;
    if (run.status == db::RunStatus::Ok) ++ok;
  }
  return fmt::format(
      "instance {} (started {}, {}; {} of {} runs ok{})", instance.id, instance.started_at,
      how_it_ended(instance), ok, count,
      instance.cells ? ", matrix of " + util::count_of(*instance.cells, "cell") : "");
}

// A spec without its "labels": labels say how results read, not how they were measured, so
// instances that differ only there pool (the first instance's labels are used).
std::string without_labels(const std::string& spec_json) {
  auto spec = nlohmann::json::parse(spec_json, nullptr, /*allow_exceptions=*/false);
  if (spec.is_object()) spec.erase("labels");
  return spec.dump();
}

// The JSON paths at which two specs differ (RFC 6902 patch from `a` to `b`), a few of them.
std::string spec_differences(const std::string& a, const std::string& b) {
  const auto parse = [](const std::string& text) {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  };
  const auto patch = nlohmann::json::diff(parse(a), parse(b));
  std::vector<std::string> paths;
  for (const auto& op : patch) {
    if (paths.size() == 5) {
      paths.push_back(fmt::format("{} more", patch.size() - 5));
      break;
    }
    paths.push_back(fmt::format("{} {}", op.value("op", "?"), op.value("path", "?")));
  }
  return paths.empty() ? "their spec texts differ" : fmt::format("{}", fmt::join(paths, ", "));
}

}  // namespace

InstanceSelection select_instances(const db::Database& database, const InstanceQuery& query) {
  InstanceSelection selection;
  std::vector<db::ExperimentRecord> chosen;
  if (!query.instances.empty()) {
    for (const auto id : query.instances) {
      auto instance = database.experiment(id);
      if (!instance)
        throw ReportError(
            fmt::format("{}: no experiment instance {} (see `scalebench query "
                        "\"SELECT id, name, started_at FROM experiments\"`)",
                        database.path(), id));
      if (query.experiment && instance->name != *query.experiment)
        throw ReportError(fmt::format("{}: instance {} belongs to experiment \"{}\", not \"{}\"",
                                      database.path(), id, instance->name, *query.experiment));
      chosen.push_back(std::move(*instance));
    }
  } else {
    const auto latest = database.latest_instance(query.experiment);
    if (!latest) {
      if (query.experiment)
        throw ReportError(
            fmt::format("{}: no experiment named \"{}\"", database.path(), *query.experiment));
      throw ReportError(
          fmt::format("{}: no experiment stored yet: run `scalebench run EXPERIMENT.json` first",
                      database.path()));
    }
    if (query.pool)
      chosen = database.instances(latest->name);
    else
      chosen.push_back(*latest);
  }
  std::sort(chosen.begin(), chosen.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  chosen.erase(std::unique(chosen.begin(), chosen.end(),
                           [](const auto& a, const auto& b) { return a.id == b.id; }),
               chosen.end());

  const auto& first = chosen.front();
  for (const auto& other : chosen) {
    if (other.name != first.name)
      throw ReportError(
          fmt::format("{}: instances {} (\"{}\") and {} (\"{}\") belong to different "
                      "experiments; pool instances of one experiment only",
                      database.path(), first.id, first.name, other.id, other.name));
    if (other.spec_json != first.spec_json &&
        without_labels(other.spec_json) != without_labels(first.spec_json))
      throw ReportError(fmt::format(
          "{}: instances {} and {} of \"{}\" have different specs ({}); they are not pooled. "
          "Pick one with --instance",
          database.path(), first.id, other.id, first.name,
          spec_differences(first.spec_json, other.spec_json)));
  }

  selection.experiment = first.name;
  std::vector<std::int64_t> ids;
  for (const auto& instance : chosen) ids.push_back(instance.id);
  const auto runs = database.runs_of_instances(ids);
  if (chosen.size() == 1) {
    selection.notes.push_back(fmt::format("Measured in {}.", describe(first, runs)));
    const auto all = database.instances(first.name);
    if (all.size() > 1 && query.instances.empty())
      selection.notes.push_back(fmt::format(
          "The database holds {} instances of \"{}\"; this table uses the latest only (--pool "
          "pools those with an identical spec, --instance ID picks one).",
          all.size(), first.name));
  } else {
    std::vector<std::string> parts;
    for (const auto& instance : chosen) parts.push_back(describe(instance, runs));
    selection.notes.push_back(fmt::format("Pooled {} instances with an identical spec ({}): {}.",
                                          chosen.size(), first.spec_hash, fmt::join(parts, "; ")));
  }
  selection.ids = std::move(ids);
  return selection;
}

std::vector<std::string> failure_notes(const std::vector<db::RunRecord>& runs) {
  struct Counts {
    std::size_t total = 0, ok = 0;
    std::map<std::string, std::size_t> by_status;
  };
  std::vector<std::pair<std::string, Counts>> groups;  // in order of first appearance
  for (const auto& run : runs) {
    const auto label = group_label(run.condition, run.launcher, run.np, run.factors);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == label; });
    if (it == groups.end()) it = groups.insert(groups.end(), {label, Counts{}});
    ++it->second.total;
    if (run.status == db::RunStatus::Ok)
      ++it->second.ok;
    else
      ++it->second.by_status[std::string(db::to_string(run.status))];
  }
  std::vector<std::string> notes;
  for (const auto& [label, counts] : groups) {
    if (counts.ok == counts.total) continue;
    std::vector<std::string> parts;
    for (const auto& [status, n] : counts.by_status)
      parts.push_back(fmt::format("{} {}", n, status));
    notes.push_back(fmt::format(
        "{}: {} of {} runs ok ({}){}.", label, counts.ok, counts.total, fmt::join(parts, ", "),
        counts.ok == 0 ? "; not in the table: no run finished ok (see runs.error)"
                       : "; the table uses the ok runs only"));
  }
  return notes;
}

namespace {

// The experiment file's "warmup_epochs" of the (first) selected instance, if it has one.
std::optional<int> warmup_epochs_of(const db::Database& database,
                                    const InstanceSelection& selection) {
  if (selection.ids.empty()) return std::nullopt;
  const auto record = database.experiment(selection.ids.front());
  if (!record) return std::nullopt;
  const auto spec = nlohmann::json::parse(record->spec_json, nullptr, false);
  if (!spec.is_object() || !spec.contains("warmup_epochs") ||
      !spec["warmup_epochs"].is_number_integer())
    return std::nullopt;
  return std::max(0, spec["warmup_epochs"].get<int>());
}

}  // namespace

WarmupRule warmup_rule(const db::Database& database, const InstanceSelection& selection,
                       std::optional<int> skip) {
  if (skip) {
    if (*skip < 0) throw InputError(fmt::format("--skip-epochs {}: expected 0 or more", *skip));
    return {*skip, "--skip-epochs"};
  }
  if (const auto file = warmup_epochs_of(database, selection))
    return {*file, "the experiment file's \"warmup_epochs\""};
  return {kDefaultWarmupEpochs, "the default"};
}

// The query that shows an allreduce benchmark experiment: mean time and bandwidth per size.
// Experiment names hold no quotes (orchestrator/experiment.cpp), so it can go in double quotes.
std::string allreduce_query(const std::string& experiment) {
  return fmt::format(
      "SELECT condition, np, bytes, round(avg(time_us), 3) AS time_us, "
      "round(avg(algbw_gbs), 4) AS algbw_gbs, round(avg(busbw_gbs), 4) AS busbw_gbs, "
      "sum(wrong) AS wrong FROM allreduce_times WHERE experiment = '{}' AND status = 'ok' "
      "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
      experiment);
}

namespace {

// The selected instances' provenance, a value per key (distinct values joined by "; "), and the
// distinct hosts of their runs. Keys in the order a reader wants them: the machine, the
// software, the experiment file, the runs' hosts, then the environment.
Provenance merged_provenance(const db::Database& database, const std::vector<std::int64_t>& ids) {
  std::map<std::string, std::vector<std::string>> values;
  const auto add = [&](const std::string& key, const std::string& value) {
    auto& list = values[key];
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
  };
  for (const auto id : ids)
    for (const auto& [key, value] : database.instance_provenance(id)) add(key, value);
  for (const auto& [run, hosts] : database.run_provenance_of_instances(ids, "hosts"))
    add("hosts", hosts);
  static constexpr std::string_view kOrder[] = {
      "host",       "cpu_model", "cpu_count", "memory_bytes", "os",    "gpus", "mpi",
      "slurm",      "python",    "torch",     "cuda",         "cudnn", "nccl", "scalebench_version",
      "git_commit", "hosts"};
  Provenance out;
  const auto emit = [&](const std::string& key) {
    const auto it = values.find(key);
    if (it == values.end()) return;
    out.emplace_back(key, fmt::format("{}", fmt::join(it->second, "; ")));
    values.erase(it);
  };
  for (const auto key : kOrder) emit(std::string(key));
  while (!values.empty()) emit(values.begin()->first);  // env.* and any newer keys, by name
  return out;
}

// The file's order of conditions and levels and its labels, from the (first) instance's record.
void add_file_order(const db::ExperimentRecord& record, RunSet& set) {
  set.labels = labels_of_spec(record.spec_json);
  set.spec_json = record.spec_json;
  try {
    const auto spec = nlohmann::json::parse(record.spec_json);
    if (spec.contains("repetitions") && spec["repetitions"].is_object()) {
      const auto& r = spec["repetitions"];
      set.repetition_rule = RepetitionRule{r.at("min").get<int>(), r.at("max").get<int>(),
                                           r.at("precision").get<double>()};
    }
    if (spec.contains("conditions") && spec["conditions"].is_array())
      for (const auto& condition : spec["conditions"])
        if (condition.contains("name") && condition["name"].is_string())
          set.condition_order.push_back(condition["name"].get<std::string>());
    for (const auto& factor : nlohmann::json::parse(record.factors_json)) {
      std::vector<std::string> levels;
      for (const auto& level : factor.at("levels")) levels.push_back(level.get<std::string>());
      set.level_order.emplace_back(factor.at("name").get<std::string>(), std::move(levels));
    }
  } catch (const nlohmann::json::exception&) {
    // An unreadable record only costs the order: groups keep their order of appearance.
  }
}

// The ok runs' epochs (each run's rows come together, in epoch order) as runs.
std::vector<Run> runs_of_epochs(std::vector<db::EpochSample> samples) {
  std::vector<Run> runs;
  for (auto& s : samples) {
    if (runs.empty() || runs.back().id != s.run_id) {
      Run run;
      run.id = s.run_id;
      run.instance = s.experiment_id;
      run.experiment = std::move(s.experiment);
      run.condition = std::move(s.condition);
      run.launcher = std::move(s.launcher);
      run.np = s.np;
      run.repetition = s.repetition;
      run.levels = std::move(s.factors);
      run.train_images = s.train_images;
      run.test_accuracy = s.run_test_accuracy;
      runs.push_back(std::move(run));
    }
    auto& epoch = runs.back().epochs.emplace_back(s.epoch, s.duration_seconds);
    epoch.trainer_seconds = s.trainer_seconds;
    epoch.end_rule = std::move(s.end_rule);
  }
  return runs;
}

// The warm-up left out of every run, said in a note when there is one.
void leave_out_warmup(const db::Database& database, const InstanceSelection& selection,
                      const InstanceQuery& query, RunSet& set) {
  const auto [warmup, origin] = warmup_rule(database, selection, query.skip_epochs);
  set.warmup_epochs = warmup;
  set.warmup_origin = origin;
  if (warmup == 0) return;
  const std::size_t short_runs = drop_warmup_epochs(set.runs, warmup);
  set.notes.push_back(fmt::format(
      "Warm-up left out: epoch{} 1{} of each run ({}){}.", warmup > 1 ? "s" : "",
      warmup > 1 ? fmt::format("-{}", warmup) : "", origin,
      short_runs == 0
          ? ""
          : fmt::format("; {} run{} with {} epoch{} or fewer kept all of them", short_runs,
                        short_runs > 1 ? "s" : "", warmup, warmup > 1 ? "s" : "")));
}

// Why there is nothing to analyse: an allreduce benchmark (its query named), or the runs.
[[noreturn]] void throw_no_epochs(const db::Database& database, const RunSet& set,
                                  const std::vector<db::RunRecord>& runs) {
  if (!database.allreduce_results_of_instances(set.instances).empty())
    throw ReportError(fmt::format(
        "{}: experiment \"{}\" is an allreduce benchmark: it has no epochs to report; its "
        "rows are in the allreduce_times view: scalebench query --db {} \"{}\"",
        database.path(), set.experiment, database.path(), allreduce_query(set.experiment)));
  throw ReportError(fmt::format(
      "{}: experiment \"{}\" has {} runs but no finished epochs ({}{}): see `scalebench query "
      "--db {} \"SELECT id, condition, np, status, error FROM runs WHERE experiment_id IN "
      "({})\"`",
      database.path(), set.experiment, runs.size(), fmt::join(set.notes, " "),
      set.failures.empty() ? "" : fmt::format(" {}", fmt::join(set.failures, " ")), database.path(),
      fmt::join(set.instances, ", ")));
}

// The ok allreduce benchmark runs, those with a filtered factor at another level left out: with
// a link or transport as a factor, each level is fitted with its own network.
std::vector<AllreduceRun> allreduce_runs_of(const db::Database& database,
                                            const std::vector<db::RunRecord>& runs,
                                            const std::vector<std::int64_t>& instances,
                                            const RunFilter& filter) {
  std::map<std::int64_t, std::vector<AllreduceRow>> rows;
  for (const auto& r : database.allreduce_results_of_instances(instances))
    rows[r.run_id].push_back({r.transport, r.bytes, r.time_us, r.busbw_gbs, r.wrong});
  std::vector<AllreduceRun> out;
  for (const auto& run : runs) {
    const auto it = rows.find(run.id);
    if (run.status != db::RunStatus::Ok || it == rows.end()) continue;
    const bool other_level =
        std::any_of(filter.only.begin(), filter.only.end(), [&](const auto& only) {
          const auto level = std::find_if(run.factors.begin(), run.factors.end(),
                                          [&](const auto& f) { return f.first == only.first; });
          return level != run.factors.end() && level->second != only.second;
        });
    if (other_level) continue;
    out.push_back({run.id, run.condition, run.launcher, run.np, run.factors, it->second});
  }
  return out;
}

}  // namespace

RunSet load_runs(const db::Database& database, const InstanceQuery& query, const RunFilter& filter,
                 const LoadOptions& what) {
  const auto selection = select_instances(database, query);
  RunSet set;
  set.experiment = selection.experiment;
  set.instances = selection.ids;
  set.notes = selection.notes;
  set.runs = runs_of_epochs(database.epoch_samples_of_instances(selection.ids));
  leave_out_warmup(database, selection, query, set);
  const auto runs = database.runs_of_instances(selection.ids);
  set.failures = failure_notes(runs);
  if (what.require_epochs && set.runs.empty()) throw_no_epochs(database, set, runs);
  set.provenance = merged_provenance(database, selection.ids);
  if (const auto record = database.experiment(selection.ids.front())) add_file_order(*record, set);
  if (what.headers) {
    std::map<std::int64_t, std::string> headers;
    for (auto& [run, line] : database.trainer_headers_of_instances(selection.ids))
      headers.emplace(run, std::move(line));
    for (auto& run : set.runs)
      if (const auto it = headers.find(run.id); it != headers.end())
        run.header = TrainerHeader::parse(it->second);
  }
  if (what.allreduce_runs)
    set.allreduce_runs = allreduce_runs_of(database, runs, selection.ids, filter);
  std::set<std::int64_t> with_epochs, benchmarks;
  for (const auto& run : set.runs) with_epochs.insert(run.id);
  for (const auto& run : set.allreduce_runs) benchmarks.insert(run.id);
  for (const auto& run : runs)
    if (run.status == db::RunStatus::Ok && !with_epochs.contains(run.id) &&
        !benchmarks.contains(run.id))
      ++set.runs_without_epochs;
  // A set read for its allreduce runs only keeps its other runs as they are.
  if (what.require_epochs) set.filtered_out = apply_filter(set, filter);
  return set;
}

}  // namespace scalebench::report
