#include "report/data/observations.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "report/data/csv_table.hpp"
#include "report/data/samples.hpp"

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

Observations observations_from_database(const std::string& path, const InstanceQuery& query,
                                        const std::vector<std::string>& factors,
                                        const std::string& unit,
                                        const std::vector<std::string>& only,
                                        const std::string& response) {
  if (unit != "run" && unit != "epoch" && unit != "nested")
    throw InputError(fmt::format("--unit {}: expected run, nested or epoch", unit));
  const bool log_rate = response == "log_images_per_second";
  if (!log_rate && response != "epoch_seconds")
    throw InputError(fmt::format(
        "--response {}: with --db expected epoch_seconds or log_images_per_second", response));
  if (log_rate && unit != "run")
    throw InputError("--response log_images_per_second is a run's rate: use it with --unit run");
  const auto database = db::Database::open(path, db::OpenMode::ReadOnly);
  auto selection = select_instances(database, query);
  const auto& name = selection.experiment;
  auto samples = epoch_samples_after_warmup(database, selection, query);
  if (samples.empty())
    throw InputError(fmt::format("{}: no finished epochs for experiment \"{}\" ({})", path, name,
                                 fmt::join(selection.notes, " ")));

  // The built-in factors, then the experiment file's own (stored in run_factors).
  std::vector<std::string> known = {"group", "condition", "launcher", "np"};
  for (const auto& s : samples)
    for (const auto& [factor, level] : s.factors)
      if (std::find(known.begin(), known.end(), factor) == known.end()) known.push_back(factor);
  const std::vector<std::string> chosen =
      factors.empty() ? std::vector<std::string>{"group"} : factors;
  for (const auto& factor : chosen)
    if (std::find(known.begin(), known.end(), factor) == known.end())
      throw InputError(fmt::format(
          "--factor {}: experiment \"{}\" has no such factor; with --db a factor is one of {} "
          "(group is condition, factor levels and np, as in the report)",
          factor, name, fmt::join(known, ", ")));
  const auto level_of = [&](const EpochSample& s, const std::string& factor) -> std::string {
    if (factor == "condition") return s.condition;
    if (factor == "launcher") return s.launcher;
    if (factor == "np") return std::to_string(s.np);
    if (factor == "group") return group_label(s.condition, s.launcher, s.np, s.factors);
    for (const auto& [name, level] : s.factors)
      if (name == factor) return level;
    throw InputError(fmt::format(
        "--factor {}: run {} has no level of it (an instance without this factor was pooled?)",
        factor, s.run_id));
  };

  // --only FACTOR=LEVEL: the crossed part of a design, with the runs left out counted.
  std::set<std::int64_t> all_runs;
  for (const auto& s : samples) all_runs.insert(s.run_id);
  std::string only_text;
  for (const auto& filter : only) {
    const auto equals = filter.find('=');
    if (equals == std::string::npos || equals == 0)
      throw InputError(
          fmt::format("--only {}: expected FACTOR=LEVEL, e.g. condition=mpirun", filter));
    const auto factor = filter.substr(0, equals);
    const auto level = filter.substr(equals + 1);
    if (std::find(known.begin(), known.end(), factor) == known.end() || factor == "group")
      throw InputError(fmt::format("--only {}: experiment \"{}\" has no factor {}; its factors: {}",
                                   filter, name, factor,
                                   fmt::join(known.begin() + 1, known.end(), ", ")));
    std::vector<std::string> levels;
    for (const auto& s : samples) {
      const auto value = level_of(s, factor);
      if (std::find(levels.begin(), levels.end(), value) == levels.end()) levels.push_back(value);
    }
    if (std::find(levels.begin(), levels.end(), level) == levels.end())
      throw InputError(fmt::format("--only {}: {} has no level {}; its levels: {}", filter, factor,
                                   level, fmt::join(levels, ", ")));
    std::erase_if(samples, [&](const EpochSample& s) { return level_of(s, factor) != level; });
    only_text += (only_text.empty() ? "" : ", ") + filter;
  }
  std::set<std::int64_t> kept_runs;
  for (const auto& s : samples) kept_runs.insert(s.run_id);
  const std::size_t runs_left_out = all_runs.size() - kept_runs.size();

  Observations data;
  data.source = fmt::format("{} experiment {} ({})", path, name,
                            selection.ids.size() == 1
                                ? fmt::format("instance {}", selection.ids[0])
                                : fmt::format("instances {}", fmt::join(selection.ids, ", ")));
  for (const auto& note : failure_notes(database.runs_of_instances(selection.ids)))
    data.warnings.push_back(note);
  for (const auto& note : selection.notes)
    if (note.starts_with("Warm-up left out")) data.warnings.push_back(note);
  if (!only.empty())
    data.warnings.push_back(fmt::format("only the runs with {}: {} runs with ok epochs left out",
                                        only_text, runs_left_out));
  // Conditions pooled within a level (single and mpirun np=1 in np=1) are said, not hidden.
  if (std::find(chosen.begin(), chosen.end(), "condition") == chosen.end() &&
      std::find(chosen.begin(), chosen.end(), "group") == chosen.end()) {
    std::vector<std::string> conditions;
    for (const auto& s : samples)
      if (std::find(conditions.begin(), conditions.end(), s.condition) == conditions.end())
        conditions.push_back(s.condition);
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
  // The file's order of conditions and factor levels, np ascending.
  if (const auto record = database.experiment(selection.ids.front())) {
    std::vector<std::pair<std::string, std::vector<std::string>>> file_order;
    try {
      const auto spec = nlohmann::json::parse(record->spec_json);
      std::vector<std::string> conditions;
      if (spec.contains("conditions") && spec["conditions"].is_array())
        for (const auto& c : spec["conditions"])
          if (c.contains("name") && c["name"].is_string())
            conditions.push_back(c["name"].get<std::string>());
      file_order.emplace_back("condition", conditions);
      for (const auto& factor : nlohmann::json::parse(record->factors_json)) {
        std::vector<std::string> levels;
        for (const auto& level : factor.at("levels")) levels.push_back(level.get<std::string>());
        file_order.emplace_back(factor.at("name").get<std::string>(), levels);
      }
    } catch (const nlohmann::json::exception&) {
      file_order.clear();  // an unreadable record only costs the order
    }
    for (const auto& factor : chosen) {
      std::vector<std::string> order;
      if (factor == "np") {
        std::set<int> nps;
        for (const auto& s : samples) nps.insert(s.np);
        for (int np : nps) order.push_back(std::to_string(np));
      }
      for (const auto& [name, levels] : file_order)
        if (name == factor) order = levels;
      data.level_order.push_back(order);
    }
  }
  if (unit == "epoch" || unit == "nested") {
    for (const auto& s : samples) {
      data.values.push_back(s.duration_seconds);
      data.runs.push_back(s.run_id);
      for (std::size_t f = 0; f < chosen.size(); ++f)
        data.levels[f].push_back(level_of(s, chosen[f]));
    }
    if (unit == "nested") return data;
    data.warnings.push_back(
        "the epochs of one run are used as independent observations (as the reference study did); "
        "they are not independent (pseudo-replication), so the degrees of freedom are inflated and "
        "the p-values too small. `--unit run` analyses one mean per run instead.");
    return data;
  }
  // One observation per run: the mean of its epochs (samples come ordered by run, then epoch).
  std::size_t begin = 0;
  while (begin < samples.size()) {
    std::size_t end = begin;
    double sum = 0;
    while (end < samples.size() && samples[end].run_id == samples[begin].run_id)
      sum += samples[end++].duration_seconds;
    if (log_rate) {
      const auto& first = samples[begin];
      if (!first.train_images || sum <= 0)
        throw InputError(fmt::format(
            "--response log_images_per_second: run {} has no images per epoch (a program "
            "without a header needs \"train_images\" in the experiment file)",
            first.run_id));
      data.values.push_back(std::log(static_cast<double>(*first.train_images) *
                                     static_cast<double>(end - begin) / sum));
    } else {
      data.values.push_back(sum / static_cast<double>(end - begin));
    }
    for (std::size_t f = 0; f < chosen.size(); ++f)
      data.levels[f].push_back(level_of(samples[begin], chosen[f]));
    begin = end;
  }
  return data;
}

}  // namespace scalebench::report
