#include "plotting/report_source.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "plotting/json.hpp"
#include "plotting/output_file.hpp"

namespace scalebench::plotting {

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

struct ReportInput {
  InstanceSelection selection;
  std::vector<db::EpochSample> samples;
  std::vector<std::string> failures;
  ReportOptions options;
  db::Provenance provenance;
};

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
void add_file_order(const db::ExperimentRecord& record, ReportOptions& options) {
  try {
    const auto spec = Json::parse(record.spec_json);
    if (spec.contains("conditions") && spec["conditions"].is_array())
      for (const auto& condition : spec["conditions"])
        if (condition.contains("name") && condition["name"].is_string())
          options.condition_order.push_back(condition["name"].get<std::string>());
    for (const auto& factor : Json::parse(record.factors_json)) {
      std::vector<std::string> levels;
      for (const auto& level : factor.at("levels")) levels.push_back(level.get<std::string>());
      options.level_order.emplace_back(factor.at("name").get<std::string>(), std::move(levels));
    }
  } catch (const Json::exception&) {
    // An unreadable record only costs the order: groups keep their order of appearance.
  }
}

ReportInput load_input(const db::Database& database, const InstanceQuery& query,
                       const std::optional<std::string>& base) {
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
  input.options.base_label = base;
  if (const auto record = database.experiment(input.selection.ids.front()))
    add_file_order(*record, input.options);
  return input;
}

// The allreduce benchmark runs of the instances, per level of `factor`: the bus bandwidth at the
// largest message and averaged over sizes, beside the epoch times (the interconnect study).
void add_bandwidth(const db::Database& database, const std::vector<std::int64_t>& ids,
                   const std::string& factor, FactorReport& report) {
  struct RunBandwidth {
    long long bytes = 0;
    double busbw = 0, time_us = 0, average = 0;
  };
  std::map<std::tuple<std::size_t, std::string, std::string, int>, std::vector<RunBandwidth>>
      groups;
  for (const auto& run : database.runs_of_instances(ids)) {
    if (run.status != db::RunStatus::Ok) continue;
    const auto rows = database.allreduce_results(run.id);
    if (rows.empty()) continue;
    const auto level = std::find_if(run.factors.begin(), run.factors.end(),
                                    [&](const auto& pair) { return pair.first == factor; });
    if (level == run.factors.end()) continue;
    const auto block = static_cast<std::size_t>(
        std::find(report.levels.begin(), report.levels.end(), level->second) -
        report.levels.begin());
    const auto largest = *std::max_element(
        rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
    double sum = 0;
    for (const auto& row : rows) sum += row.busbw_gbs;
    groups[{block, run.condition, run.launcher, run.np}].push_back(
        {largest.bytes, largest.busbw_gbs, largest.time_us,
         sum / static_cast<double>(rows.size())});
  }
  for (const auto& [key, runs] : groups) {
    const auto& [block, condition, launcher, np] = key;
    FactorReport::Bandwidth row;
    row.level = block < report.levels.size() ? report.levels[block] : std::string();
    row.condition = condition;
    row.launcher = launcher;
    row.np = np;
    row.bytes = runs.front().bytes;
    for (const auto& run : runs) {
      if (run.bytes != row.bytes) continue;  // a run of another size range is not averaged in
      row.busbw_gbs += run.busbw;
      row.time_us += run.time_us;
      row.avg_busbw_gbs += run.average;
      ++row.runs;
    }
    row.busbw_gbs /= static_cast<double>(row.runs);
    row.time_us /= static_cast<double>(row.runs);
    row.avg_busbw_gbs /= static_cast<double>(row.runs);
    report.bandwidth.push_back(row);
  }
}

}  // namespace

ReportTable load_report(const db::Database& database, const InstanceQuery& query,
                        const std::optional<std::string>& base, const std::string& unit) {
  check_unit(unit);
  auto input = load_input(database, query, base);
  input.options.unit = unit;
  auto table = build_report(input.selection.experiment, input.samples, input.options);
  table.notes.insert(table.notes.begin(), input.selection.notes.begin(),
                     input.selection.notes.end());
  table.notes.insert(table.notes.end(), input.failures.begin(), input.failures.end());
  table.provenance = input.provenance;
  return table;
}

FactorReport load_factor_report(const db::Database& database, const InstanceQuery& query,
                                const std::optional<std::string>& base, const std::string& factor,
                                const std::string& unit) {
  check_unit(unit);
  auto input = load_input(database, query, base);
  input.options.unit = unit;
  auto report =
      build_factor_report(input.selection.experiment, input.samples, factor, input.options);
  add_bandwidth(database, input.selection.ids, factor, report);
  report.notes.insert(report.notes.begin(), input.selection.notes.begin(),
                      input.selection.notes.end());
  report.notes.insert(report.notes.end(), input.failures.begin(), input.failures.end());
  report.provenance = input.provenance;
  return report;
}

std::filesystem::path figure_prefix(const std::string& database_path, const std::string& experiment,
                                    const std::optional<std::string>& output) {
  namespace fs = std::filesystem;
  // The experiment's name comes from the database: it names a file, never a path.
  const std::string stem = safe_file_name(experiment) + "-scaling";
  if (!output) return fs::path(database_path).parent_path() / stem;
  const std::string& given = *output;
  if (given.empty()) throw ReportError("plot: --output is empty");
  std::error_code error;
  return given.ends_with('/') || fs::is_directory(given, error) ? fs::path(given) / stem
                                                                : fs::path(given);
}

}  // namespace scalebench::plotting
