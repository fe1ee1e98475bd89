#include "scaling/plan_input.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "report/error.hpp"

namespace scalebench::scaling {

using namespace report;

namespace {

// `scalebench-train k=v k=v ...` (docs/trainer-output.md): the value of `key`.
std::optional<std::string> header_value(const std::string& header, std::string_view key) {
  std::istringstream words(header);
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq != std::string::npos && std::string_view(word).substr(0, eq) == key)
      return word.substr(eq + 1);
  }
  return std::nullopt;
}

std::optional<double> header_number(const std::string& header, std::string_view key) {
  const auto text = header_value(header, key);
  if (!text) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(*text, &used);
    if (used == text->size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

bool matches(const db::RunRecord& run, const ScalingPlanOptions& o) {
  if (o.condition && run.condition != *o.condition) return false;
  for (const auto& [factor, level] : o.only) {
    const auto it = std::find_if(run.factors.begin(), run.factors.end(),
                                 [&](const auto& f) { return f.first == factor; });
    if (it == run.factors.end() || it->second != level) return false;
  }
  return true;
}

// An allreduce run is kept unless it has a factor of an --only filter at another level: with a
// link or transport as a factor, each level's training runs are fitted with that level's own
// network (runs without the factor, e.g. of another experiment, are kept).
bool allreduce_matches(const db::RunRecord& run, const ScalingPlanOptions& o) {
  for (const auto& [factor, level] : o.only) {
    const auto it = std::find_if(run.factors.begin(), run.factors.end(),
                                 [&](const auto& f) { return f.first == factor; });
    if (it != run.factors.end() && it->second != level) return false;
  }
  return true;
}

std::string series_name(const db::RunRecord& run) {
  std::string name = run.condition;
  for (const auto& [factor, level] : run.factors) name += fmt::format(" {}={}", factor, level);
  return name;
}

}  // namespace

namespace {

// --condition and each --only FACTOR=LEVEL must name what the selected runs have: a typo
// otherwise selected nothing, or (a factor no run has) was silently read as "no runs".
void check_selection(const std::vector<db::RunRecord>& runs, const InstanceSelection& selection,
                     const ScalingPlanOptions& o) {
  std::set<std::string> conditions;
  std::map<std::string, std::set<std::string>> levels;
  for (const auto& run : runs) {
    conditions.insert(run.condition);
    for (const auto& [factor, level] : run.factors) levels[factor].insert(level);
  }
  if (o.condition && !conditions.contains(*o.condition))
    throw ReportError(fmt::format("--condition {}: no run of {} has it (conditions: {})",
                                  *o.condition, selection.experiment, fmt::join(conditions, ", ")));
  for (const auto& [factor, level] : o.only) {
    const auto it = levels.find(factor);
    if (it == levels.end()) {
      std::vector<std::string> names;
      for (const auto& [name, unused] : levels) names.push_back(name);
      throw ReportError(fmt::format("--only {}={}: no run of {} has a factor {} ({})", factor,
                                    level, selection.experiment, factor,
                                    names.empty()
                                        ? std::string("it has no factors")
                                        : fmt::format("factors: {}", fmt::join(names, ", "))));
    }
    if (!it->second.contains(level))
      throw ReportError(fmt::format("--only {}={}: {} has no level {} (levels: {})", factor, level,
                                    factor, level, fmt::join(it->second, ", ")));
  }
}

}  // namespace

TrainingData load_training(const db::Database& database, const InstanceSelection& selection,
                           const ScalingPlanOptions& o) {
  check_selection(database.runs_of_instances(selection.ids), selection, o);
  TrainingData out;
  const auto warmup = warmup_rule(database, selection, o.skip_epochs);  // report's rule too
  const int skip_epochs = warmup.epochs;
  out.skip_epochs = skip_epochs;
  out.skip_origin = warmup.origin;
  std::set<std::string> series;
  std::optional<double> parameters, fusion, batch;
  std::size_t skipped_no_epochs = 0;
  for (const auto& run : database.runs_of_instances(selection.ids)) {
    if (run.status != db::RunStatus::Ok || !matches(run, o)) continue;
    if (!database.allreduce_results(run.id).empty()) continue;  // a benchmark run
    const auto epochs = database.epochs(run.id);
    std::vector<double> durations;
    for (const auto& e : epochs)
      if (e.duration_seconds) durations.push_back(*e.duration_seconds);
    if (durations.empty()) {
      ++skipped_no_epochs;
      continue;
    }
    series.insert(series_name(run));
    const auto header = database.trainer_header(run.id);
    const auto from_header = [&](std::string_view key) {
      return header ? header_number(*header, key) : std::nullopt;
    };
    const std::optional<double> run_batch =
        o.batch_size ? std::optional<double>(*o.batch_size) : from_header("batch_size");
    if (!run_batch || *run_batch < 1)
      throw ReportError(fmt::format(
          "run {} ({} np={}) printed no scalebench-train header with batch_size: give the "
          "per-rank batch with --batch-size",
          run.id, run.condition, run.np));
    if (batch && *batch != *run_batch)
      throw ReportError(fmt::format(
          "the training runs use different batch sizes ({} and {}): choose one series with "
          "--condition or --only FACTOR=LEVEL",
          *batch, *run_batch));
    batch = run_batch;
    if (const auto p = from_header("parameters")) parameters = *p;
    if (const auto f = from_header("fusion_mb")) fusion = *f * kMiB;
    if (header && header_value(*header, "overlap") == std::string("on")) out.overlap_on = true;
    if (!run.train_images || *run.train_images <= 0)
      throw ReportError(fmt::format(
          "run {} ({} np={}) has no images per epoch: give the experiment's train_images", run.id,
          run.condition, run.np));
    // Epochs at the start are warm-up (allocation, caches), left out when there are more.
    const auto skip = static_cast<std::size_t>(std::max(0, skip_epochs));
    const std::size_t first = durations.size() > skip ? skip : 0;
    double sum = 0;
    for (std::size_t i = first; i < durations.size(); ++i) sum += durations[i];
    const double epoch = sum / static_cast<double>(durations.size() - first);
    const double steps = static_cast<double>(*run.train_images) / (run.np * *run_batch);
    out.runs.push_back({run.np, epoch / steps});
    out.steps_by_np[run.np].push_back(epoch / steps);
    out.images_by_np[run.np] = *run.train_images;
  }
  if (series.size() > 1) {
    std::string names;
    for (const auto& s : series) names += fmt::format("\n  {}", s);
    throw ReportError(fmt::format(
        "the training runs form {} series; the model fits one: choose it with --condition "
        "and --only FACTOR=LEVEL:{}",
        series.size(), names));
  }
  if (out.runs.empty())
    throw ReportError(fmt::format(
        "no finished training run in {}{}: the model needs epochs of ok runs at np=1 and above",
        selection.experiment, skipped_no_epochs ? " (runs without epochs were skipped)" : ""));
  out.series = series.empty() ? "" : *series.begin();
  out.batch = static_cast<int>(*batch);
  if (o.parameters) parameters = *o.parameters;
  if (!parameters)
    throw ReportError(
        "the runs printed no scalebench-train header with parameters: give the model's "
        "parameter count with --parameters");
  out.parameters = *parameters;
  if (o.fusion_mb) fusion = *o.fusion_mb * kMiB;
  if (fusion) out.fusion_bytes = *fusion;
  return out;
}

AllreduceData load_allreduce(const db::Database& database, const InstanceSelection& selection,
                             const ScalingPlanOptions& o, std::optional<int> max_np,
                             double message_bytes) {
  std::map<std::string, std::vector<AllreduceRun>> by_transport;
  for (const auto& run : database.runs_of_instances(selection.ids)) {
    if (run.status != db::RunStatus::Ok) continue;
    if (max_np && run.np > *max_np) continue;
    if (!allreduce_matches(run, o)) continue;
    std::map<std::string, AllreduceRun> per_transport;
    for (const auto& row : database.allreduce_results(run.id)) {
      if (row.wrong > 0 || row.time_us <= 0) continue;  // a wrong sum measures nothing
      const auto bytes = static_cast<double>(row.bytes);
      if (o.allreduce_window > 0 && (bytes < message_bytes / o.allreduce_window ||
                                     bytes > message_bytes * o.allreduce_window))
        continue;
      auto& r = per_transport[row.transport];
      r.ranks = run.np;
      r.rows.push_back({static_cast<double>(row.bytes), run.np, row.time_us * 1e-6});
    }
    for (auto& [transport, r] : per_transport) by_transport[transport].push_back(std::move(r));
  }
  AllreduceData out;
  if (by_transport.empty()) return out;
  if (o.transport) {
    const auto it = by_transport.find(*o.transport);
    if (it == by_transport.end())
      throw ReportError(fmt::format("no allreduce runs over transport '{}' in {}", *o.transport,
                                    selection.experiment));
    out.transport = it->first;
    out.runs = it->second;
  } else if (by_transport.size() > 1) {
    std::string names;
    for (const auto& [t, runs] : by_transport) names += (names.empty() ? "" : ", ") + t;
    throw ReportError(fmt::format(
        "the allreduce runs use several transports ({}): choose one with --transport", names));
  } else {
    out.transport = by_transport.begin()->first;
    out.runs = by_transport.begin()->second;
  }
  return out;
}

}  // namespace scalebench::scaling
