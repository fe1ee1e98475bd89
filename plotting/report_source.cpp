#include "plotting/report_source.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

ReportTable load_report(const db::Database& database, const InstanceQuery& query,
                        const std::optional<std::string>& base) {
  const auto selection = select_instances(database, query);
  const auto& experiment = selection.experiment;
  const auto samples = database.epoch_samples_of_instances(selection.ids);
  const auto runs = database.runs_of_instances(selection.ids);
  const auto failures = failure_notes(runs);
  if (samples.empty()) {
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
        database.path(), experiment, runs.size(), fmt::join(selection.notes, " "),
        failures.empty() ? "" : fmt::format(" {}", fmt::join(failures, " ")), database.path(),
        fmt::join(selection.ids, ", ")));
  }
  auto table = build_report(experiment, samples, ReportOptions{base});
  table.notes.insert(table.notes.begin(), selection.notes.begin(), selection.notes.end());
  table.notes.insert(table.notes.end(), failures.begin(), failures.end());
  return table;
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
