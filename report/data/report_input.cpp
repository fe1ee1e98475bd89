#include "report/data/report_input.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace scalebench::report {

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
db::Provenance merged_provenance(const db::Database& database, const std::vector<std::int64_t>& ids,
                                 const std::vector<db::RunRecord>& runs) {
  std::map<std::string, std::vector<std::string>> values;
  const auto add = [&](const std::string& key, const std::string& value) {
    auto& list = values[key];
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
  };
  for (const auto id : ids)
    for (const auto& [key, value] : database.instance_provenance(id)) add(key, value);
  for (const auto& run : runs)
    for (const auto& [key, value] : database.provenance(run.id))
      if (key == "hosts") add(key, value);
  static constexpr std::string_view kOrder[] = {
      "host",       "cpu_model", "cpu_count", "memory_bytes", "os",    "gpus", "mpi",
      "slurm",      "python",    "torch",     "cuda",         "cudnn", "nccl", "scalebench_version",
      "git_commit", "hosts"};
  db::Provenance out;
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

// The file's order of conditions and levels, from the (first) selected instance's record.
void add_file_order(const db::ExperimentRecord& record, ReportInput& input) {
  input.labels = labels_of_spec(record.spec_json);
  try {
    const auto spec = nlohmann::json::parse(record.spec_json);
    if (spec.contains("conditions") && spec["conditions"].is_array())
      for (const auto& condition : spec["conditions"])
        if (condition.contains("name") && condition["name"].is_string())
          input.condition_order.push_back(condition["name"].get<std::string>());
    for (const auto& factor : nlohmann::json::parse(record.factors_json)) {
      std::vector<std::string> levels;
      for (const auto& level : factor.at("levels")) levels.push_back(level.get<std::string>());
      input.level_order.emplace_back(factor.at("name").get<std::string>(), std::move(levels));
    }
  } catch (const nlohmann::json::exception&) {
    // An unreadable record only costs the order: groups keep their order of appearance.
  }
}

}  // namespace

ReportInput load_report_input(const db::Database& database, const InstanceQuery& query,
                              const std::optional<std::string>& base, bool allreduce_runs) {
  ReportInput input;
  input.selection = select_instances(database, query);
  const auto& experiment = input.selection.experiment;
  input.samples = epoch_samples_after_warmup(database, input.selection, query);
  const auto runs = database.runs_of_instances(input.selection.ids);
  input.failures = failure_notes(runs);
  if (input.samples.empty()) {
    for (const auto& run : runs) {
      if (database.allreduce_results(run.id).empty()) continue;
      throw ReportError(fmt::format(
          "{}: experiment \"{}\" is an allreduce benchmark: it has no epochs to report; its "
          "rows are in the allreduce_times view: scalebench query --db {} \"{}\"",
          database.path(), experiment, database.path(), allreduce_query(experiment)));
    }
    throw ReportError(fmt::format(
        "{}: experiment \"{}\" has {} runs but no finished epochs ({}{}): see `scalebench query "
        "--db {} \"SELECT id, condition, np, status, error FROM runs WHERE experiment_id IN "
        "({})\"`",
        database.path(), experiment, runs.size(), fmt::join(input.selection.notes, " "),
        input.failures.empty() ? "" : fmt::format(" {}", fmt::join(input.failures, " ")),
        database.path(), fmt::join(input.selection.ids, ", ")));
  }
  input.provenance = merged_provenance(database, input.selection.ids, runs);
  input.base = base;
  if (const auto record = database.experiment(input.selection.ids.front()))
    add_file_order(*record, input);
  if (allreduce_runs) {
    for (const auto& run : runs) {
      if (run.status != db::RunStatus::Ok) continue;
      auto rows = database.allreduce_results(run.id);
      if (!rows.empty()) input.allreduce_runs.push_back({run, std::move(rows)});
    }
  }
  return input;
}

}  // namespace scalebench::report
