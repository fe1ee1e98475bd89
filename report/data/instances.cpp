#include "report/data/instances.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "report/data/csv_table.hpp"
#include "report/data/samples.hpp"
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

std::size_t drop_warmup_epochs(std::vector<db::EpochSample>& samples, int warmup) {
  if (warmup <= 0) return 0;
  std::map<std::int64_t, int> epochs_of_run;
  for (const auto& s : samples) ++epochs_of_run[s.run_id];
  std::size_t short_runs = 0;
  for (const auto& [run, count] : epochs_of_run)
    if (count <= warmup) ++short_runs;
  std::erase_if(samples, [&](const db::EpochSample& s) {
    return s.epoch <= warmup && epochs_of_run[s.run_id] > warmup;
  });
  return short_runs;
}

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

std::vector<db::EpochSample> epoch_samples_after_warmup(const db::Database& database,
                                                        InstanceSelection& selection,
                                                        const InstanceQuery& query) {
  auto samples = database.epoch_samples_of_instances(selection.ids);
  const auto [warmup, origin] = warmup_rule(database, selection, query.skip_epochs);
  if (warmup == 0) return samples;
  const std::size_t short_runs = drop_warmup_epochs(samples, warmup);
  selection.notes.push_back(fmt::format(
      "Warm-up left out: epoch{} 1{} of each run ({}){}.", warmup > 1 ? "s" : "",
      warmup > 1 ? fmt::format("-{}", warmup) : "", origin,
      short_runs == 0
          ? ""
          : fmt::format("; {} run{} with {} epoch{} or fewer kept all of them", short_runs,
                        short_runs > 1 ? "s" : "", warmup, warmup > 1 ? "s" : "")));
  return samples;
}

}  // namespace scalebench::report
