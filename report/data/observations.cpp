#include "report/data/observations.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/data/csv_table.hpp"
#include "report/data/load_runs.hpp"

namespace scalebench::report {

Observations observations_from_csv(const std::string& path, const std::string& response,
                                   const std::vector<std::string>& factors) {
  const auto table = read_csv(path);
  Observations data;
  data.source = path;
  data.response = response;
  data.values = table.numeric_column(response);
  for (const auto& factor : factors) {
    data.factor_names.push_back(factor);
    data.levels.push_back(table.column(factor));
  }
  return data;
}

namespace {

void check_unit_and_response(const std::string& unit, const std::string& response) {
  if (const auto names = unit_names(); std::find(names.begin(), names.end(), unit) == names.end())
    throw InputError(fmt::format("--unit {}: expected one of {}", unit, fmt::join(names, ", ")));
  const bool log_rate = response == "log_images_per_second";
  if (!log_rate && response != "epoch_seconds")
    throw InputError(fmt::format(
        "--response {}: with --db expected epoch_seconds or log_images_per_second", response));
  if (log_rate && unit != "run")
    throw InputError("--response log_images_per_second is a run's rate: use it with --unit run");
}

}  // namespace

Observations observations_from_runs(const RunSet& set, const std::vector<std::string>& factors,
                                    const std::string& unit, const std::string& response,
                                    const std::string& source) {
  check_unit_and_response(unit, response);
  const bool log_rate = response == "log_images_per_second";
  const auto& name = set.experiment;
  if (set.runs.empty())
    throw InputError(fmt::format("{}: no finished epochs for experiment \"{}\" ({})", source, name,
                                 fmt::join(set.notes, " ")));
  // The built-in factors, then the experiment file's own (stored in run_factors).
  std::vector<std::string> known = set.factors();
  known.insert(known.begin(), "group");
  const std::vector<std::string> chosen =
      factors.empty() ? std::vector<std::string>{"group"} : factors;
  for (const auto& factor : chosen)
    if (std::find(known.begin(), known.end(), factor) == known.end())
      throw InputError(fmt::format(
          "--factor {}: experiment \"{}\" has no such factor; with --db a factor is one of {} "
          "(group is condition, factor levels and np, as in the report)",
          factor, name, fmt::join(known, ", ")));
  const auto level_of = [&](const Run& run, const std::string& factor) -> std::string {
    if (auto level = run.level(factor)) return *level;
    throw InputError(fmt::format(
        "--factor {}: run {} has no level of it (an instance without this factor was pooled?)",
        factor, run.id));
  };

  Observations data;
  data.source = source;
  data.warnings = set.failures;
  for (const auto& note : set.notes)
    if (note.starts_with("Warm-up left out")) data.warnings.push_back(note);
  if (!set.filter.only.empty())
    data.warnings.push_back(fmt::format("only the runs with {}: {} runs with ok epochs left out",
                                        set.filter.describe(), set.filtered_out));
  // Conditions pooled within a level (single and mpirun np=1 in np=1) are said, not hidden.
  if (std::find(chosen.begin(), chosen.end(), "condition") == chosen.end() &&
      std::find(chosen.begin(), chosen.end(), "group") == chosen.end()) {
    std::vector<std::string> conditions;
    for (const auto& run : set.runs)
      if (std::find(conditions.begin(), conditions.end(), run.condition) == conditions.end())
        conditions.push_back(run.condition);
    if (conditions.size() > 1)
      data.warnings.push_back(fmt::format(
          "the runs of conditions {} are pooled within each level of {}; add --factor condition "
          "to separate them",
          fmt::join(conditions, ", "), fmt::join(chosen, " x ")));
  }
  data.response = log_rate           ? "log(images/s) of a run"
                  : unit == "run"    ? "mean epoch seconds of a run"
                  : unit == "nested" ? "epoch seconds, within runs"
                                     : "epoch seconds";
  data.unit = unit;
  data.factor_names = chosen;
  data.levels.resize(chosen.size());
  for (const auto& factor : chosen) data.level_order.push_back(set.level_order_of(factor));
  if (unit == "epoch" || unit == "nested") {
    for (const auto& run : set.runs)
      for (const auto& epoch : run.epochs) {
        data.values.push_back(epoch.seconds);
        data.runs.push_back(run.id);
        for (std::size_t f = 0; f < chosen.size(); ++f)
          data.levels[f].push_back(level_of(run, chosen[f]));
      }
    if (unit == "nested") return data;
    data.warnings.push_back(
        "the epochs of one run are used as independent observations (as the reference study did); "
        "they are not independent (pseudo-replication), so the degrees of freedom are inflated and "
        "the p-values too small. `--unit run` analyses one mean per run instead.");
    return data;
  }
  // One observation per run: its mean epoch time, or the log of its images/s.
  for (const auto& run : set.runs) {
    if (log_rate) {
      const auto rate = run.images_per_second();
      if (!rate)
        throw InputError(fmt::format(
            "--response log_images_per_second: run {} has no images per epoch (a program "
            "without a header needs \"train_images\" in the experiment file)",
            run.id));
      data.values.push_back(std::log(*rate));
    } else {
      data.values.push_back(run.mean_epoch_seconds());
    }
    for (std::size_t f = 0; f < chosen.size(); ++f)
      data.levels[f].push_back(level_of(run, chosen[f]));
  }
  return data;
}

Observations observations_from_database(const std::string& path, const InstanceQuery& query,
                                        const std::vector<std::string>& factors,
                                        const std::string& unit,
                                        const std::vector<std::string>& only,
                                        const std::string& response) {
  check_unit_and_response(unit, response);
  const auto filter = RunFilter::parse(only);
  const auto database = db::Database::open(path, db::OpenMode::ReadOnly);
  const auto set = load_runs(database, query, filter);
  return observations_from_runs(
      set, factors, unit, response,
      fmt::format("{} experiment {} ({})", path, set.experiment,
                  set.instances.size() == 1
                      ? fmt::format("instance {}", set.instances[0])
                      : fmt::format("instances {}", fmt::join(set.instances, ", "))));
}

}  // namespace scalebench::report
