#include "scaling/plan_input.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "report/error.hpp"

namespace scalebench::scaling {

using namespace report;

namespace {

std::string series_name(const Run& run) {
  std::string name = run.condition;
  for (const auto& [factor, level] : run.levels) name += fmt::format(" {}={}", factor, level);
  return name;
}

}  // namespace

TrainingData load_training(const RunSet& set, const ScalingPlanOptions& o) {
  TrainingData out;
  out.skip_epochs = set.warmup_epochs;  // left out when loaded: report's rule too
  out.skip_origin = set.warmup_origin;
  std::set<std::int64_t> benchmarks;
  for (const auto& run : set.allreduce_runs) benchmarks.insert(run.id);
  std::set<std::string> series;
  std::optional<double> parameters, fusion, batch;
  for (const auto& run : set.runs) {
    if (benchmarks.contains(run.id) || run.epochs.empty()) continue;
    series.insert(series_name(run));
    const auto from_header = [&](std::string_view key) {
      return run.header ? run.header->number(key) : std::nullopt;
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
    if (run.header && run.header->value("overlap") == std::string("on")) out.overlap_on = true;
    if (!run.train_images || *run.train_images <= 0)
      throw ReportError(fmt::format(
          "run {} ({} np={}) has no images per epoch: give the experiment's train_images", run.id,
          run.condition, run.np));
    const double epoch = run.mean_epoch_seconds();
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
        set.experiment, set.runs_without_epochs ? " (runs without epochs were skipped)" : ""));
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

AllreduceData load_allreduce(const RunSet& set, const ScalingPlanOptions& o,
                             std::optional<int> max_np, double message_bytes) {
  std::map<std::string, std::vector<AllreduceRun>> by_transport;
  for (const auto& run : set.allreduce_runs) {  // ok, none with a filtered factor elsewhere
    if (max_np && run.np > *max_np) continue;
    std::map<std::string, AllreduceRun> per_transport;
    for (const auto& row : run.rows) {
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
      throw ReportError(
          fmt::format("no allreduce runs over transport '{}' in {}", *o.transport, set.experiment));
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
