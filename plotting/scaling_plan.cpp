#include "plotting/scaling_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "plotting/report.hpp"
#include "stats/network_presets.hpp"

namespace scalebench::plotting {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

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

std::string series_name(const db::RunRecord& run) {
  std::string name = run.condition;
  for (const auto& [factor, level] : run.factors) name += fmt::format(" {}={}", factor, level);
  return name;
}

// What the training runs say about the step: per run its mean step time, and the model's size.
struct TrainingData {
  std::vector<stats::TrainingRun> runs;
  std::map<int, std::vector<double>> steps_by_np;
  std::map<int, long long> images_by_np;  // images per epoch, all ranks
  double parameters = 0;
  double fusion_bytes = 64 * kMiB;
  int batch = 0;
  bool overlap_on = false;
  std::string series;
  std::vector<std::string> notes;
};

TrainingData load_training(const db::Database& database, const InstanceSelection& selection,
                           const ScalingPlanOptions& o) {
  TrainingData out;
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
    const auto skip = static_cast<std::size_t>(std::max(0, o.skip_epochs));
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

struct AllreduceData {
  std::vector<stats::AllreduceRun> runs;
  std::string transport;
};

AllreduceData load_allreduce(const db::Database& database, const InstanceSelection& selection,
                             const ScalingPlanOptions& o, std::optional<int> max_np,
                             double message_bytes) {
  std::map<std::string, std::vector<stats::AllreduceRun>> by_transport;
  for (const auto& run : database.runs_of_instances(selection.ids)) {
    if (run.status != db::RunStatus::Ok) continue;
    if (max_np && run.np > *max_np) continue;
    std::map<std::string, stats::AllreduceRun> per_transport;
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

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

PlanValue with_interval(double point, const std::vector<double>& replicates, double level) {
  return {point, stats::percentile_interval(replicates, level)};
}

template <typename Get>
PlanValue parameter_value(const stats::ScalingFit& fit, double level, double scale, Get get) {
  std::vector<double> values;
  values.reserve(fit.replicates.size());
  for (const auto& m : fit.replicates) values.push_back(get(m) * scale);
  return with_interval(get(fit.model) * scale, values, level);
}

}  // namespace

std::vector<int> plan_rank_counts(int max_np, const std::vector<int>& measured) {
  std::set<int> counts(measured.begin(), measured.end());
  for (long long n = 1; n <= max_np; n *= 2) counts.insert(static_cast<int>(n));
  return {counts.begin(), counts.end()};
}

ScalingPlan build_scaling_plan(const db::Database* database, const ScalingPlanOptions& o) {
  if (o.max_np < 1 || o.max_np > (1 << 20))
    throw ReportError(fmt::format("--max-np {} is not in [1, 1048576]", o.max_np));
  if (o.bootstrap < 0 || o.bootstrap > 100000)
    throw ReportError(fmt::format("--bootstrap {} is not in [0, 100000]", o.bootstrap));
  if (!(o.level > 0 && o.level < 1))
    throw ReportError(fmt::format("--level {} is not in (0, 1)", o.level));
  if (o.ranks_per_node && *o.ranks_per_node < 1)
    throw ReportError(fmt::format("--ranks-per-node {} is not >= 1", *o.ranks_per_node));
  if (o.parameters && !(*o.parameters > 0 && std::isfinite(*o.parameters)))
    throw ReportError(fmt::format("--parameters {} is not a positive count", *o.parameters));
  if (o.batch_size && *o.batch_size < 1)
    throw ReportError(fmt::format("--batch-size {} is not >= 1", *o.batch_size));
  if (o.images_per_second && !(*o.images_per_second > 0 && std::isfinite(*o.images_per_second)))
    throw ReportError(fmt::format("--images-per-second {} is not > 0", *o.images_per_second));
  if (o.fusion_mb && !(*o.fusion_mb > 0 && std::isfinite(*o.fusion_mb)))
    throw ReportError(fmt::format("--fusion-mb {} is not > 0", *o.fusion_mb));
  if (o.train_images && *o.train_images < 1)
    throw ReportError(fmt::format("--train-images {} is not >= 1", *o.train_images));
  if (o.overhead_ms && !(*o.overhead_ms >= 0 && std::isfinite(*o.overhead_ms)))
    throw ReportError(fmt::format("--overhead-ms {} is not >= 0", *o.overhead_ms));
  if (o.fit_max_np && *o.fit_max_np < 1)
    throw ReportError(fmt::format("--fit-max-np {} is not >= 1", *o.fit_max_np));
  if (o.allreduce_max_np && *o.allreduce_max_np < 2)
    throw ReportError(fmt::format("--allreduce-max-np {} is not >= 2", *o.allreduce_max_np));
  if (!(o.allreduce_window == 0 || o.allreduce_window >= 1))
    throw ReportError(fmt::format("--allreduce-window {} is not 0 or >= 1", o.allreduce_window));
  if (o.overlap && !(*o.overlap >= 0 && *o.overlap <= 1))
    throw ReportError(fmt::format("--overlap {} is not in [0, 1]", *o.overlap));

  ScalingPlan plan;
  plan.level = o.level;
  stats::ScalingData data;
  TrainingData training;
  std::optional<long long> images_per_epoch;  // at np = 1 (strong) or per rank (weak)
  bool weak = o.weak_scaling;
  std::map<std::string, std::string> origin;  // parameter name -> where it came from

  if (o.training) {
    if (database == nullptr) throw ReportError("fitting to runs needs a results database");
    const InstanceSelection selection = select_instances(*database, *o.training);
    training = load_training(*database, selection, o);
    plan.notes.insert(plan.notes.end(), selection.notes.begin(), selection.notes.end());
    const InstanceSelection allreduce_selection =
        o.allreduce ? select_instances(*database, *o.allreduce) : selection;
    const AllreduceData allreduce =
        load_allreduce(*database, allreduce_selection, o, o.allreduce_max_np,
                       std::min(training.fusion_bytes, training.parameters * 4));
    data.allreduce = allreduce.runs;
    for (const auto& run : training.runs)
      if (!o.fit_max_np || run.ranks <= *o.fit_max_np) data.training.push_back(run);
    plan.source = fmt::format("{} (training{}{})", selection.experiment,
                              training.series.empty() ? "" : ": " + training.series,
                              allreduce.runs.empty()
                                  ? ""
                                  : fmt::format("; allreduce over {}: {}", allreduce.transport,
                                                allreduce_selection.experiment));
    plan.title = fmt::format("Scaling model of {}", selection.experiment);
    data.fixed.gradient_bytes = training.parameters * 4;
    data.fixed.bucket_bytes = training.fusion_bytes;
    origin["parameters"] = o.parameters ? "given" : "header";
    // Images per epoch: constant (strong scaling) or growing with np (weak).
    const auto& images = training.images_by_np;
    if (images.size() >= 2) {
      const auto first = *images.begin(), last = *images.rbegin();
      weak = first.second * last.first == last.second * first.first && first.second != last.second;
    }
    images_per_epoch =
        weak ? images.begin()->second / images.begin()->first : images.begin()->second;
    if (o.train_images) images_per_epoch = *o.train_images;
    if (allreduce.runs.empty() && !o.network)
      throw ReportError(fmt::format(
          "{} holds no allreduce runs: add an allreduce condition (--benchmark allreduce, "
          "docs/scaling-model.md), name another experiment with --allreduce-experiment, or "
          "give the network with --network PRESET",
          allreduce_selection.experiment));
    const int measured_max = training.steps_by_np.rbegin()->first;
    if (!allreduce.runs.empty()) {
      if (o.network) {
        data.fixed.network.inter = stats::network_preset(*o.network).link;
        data.fixed.network.ranks_per_node = o.ranks_per_node.value_or(measured_max);
        origin["inter"] = "preset " + *o.network;
        plan.notes.push_back(
            fmt::format("Nodes of {} ranks joined by {} (measured links inside a node).",
                        data.fixed.network.ranks_per_node, *o.network));
      }
      origin["intra"] = "fitted";
    } else {
      const auto& inter = stats::network_preset(*o.network);
      data.fixed.network.intra =
          o.intra_network ? stats::network_preset(*o.intra_network).link : inter.link;
      if (o.ranks_per_node) {
        data.fixed.network.inter = inter.link;
        data.fixed.network.ranks_per_node = *o.ranks_per_node;
      }
      origin["intra"] = "preset " + o.intra_network.value_or(*o.network);
      origin["inter"] = "preset " + *o.network;
    }
    if (o.overlap) data.fixed.overlap = *o.overlap;
    data.network_per_np = o.network_per_np && !allreduce.runs.empty();
    const auto fit = stats::fit_scaling_model(data, o.bootstrap, o.seed);
    if (!fit.overlap_fitted)
      plan.notes.push_back(fmt::format(
          "The training runs have one np above 1: the overlap is fixed at {} ({}) and only the "
          "overhead was fitted.",
          data.fixed.overlap, o.overlap ? "--overlap" : "the default; set it with --overlap"));
    if (training.overlap_on)
      plan.notes.push_back("The runs overlapped the allreduce with backward (--overlap on).");
    plan.replicates = static_cast<int>(fit.replicates.size());
    plan.failed_replicates = static_cast<int>(fit.failed_replicates);
    const double level = o.level;
    plan.parameters.push_back(
        {"compute", "ms", parameter_value(fit, level, 1e3, [](const auto& m) { return m.compute; }),
         "fitted (np=1 step)"});
    plan.parameters.push_back(
        {"overhead", "ms",
         parameter_value(fit, level, 1e3, [](const auto& m) { return m.overhead; }), "fitted"});
    plan.parameters.push_back(
        {"overlap", "", parameter_value(fit, level, 1, [](const auto& m) { return m.overlap; }),
         fit.overlap_fitted ? "fitted" : (o.overlap ? "given" : "assumed")});
    const std::string intra_name = data.fixed.network.inter ? "intra-node " : "";
    if (fit.network_by_ranks.empty()) {  // else the per-np links below are the ones used
      plan.parameters.push_back(
          {intra_name + "latency", "us",
           parameter_value(fit, level, 1e6, [](const auto& m) { return m.network.intra.alpha; }),
           origin["intra"]});
      plan.parameters.push_back(
          {intra_name + "bandwidth", "GB/s",
           parameter_value(fit, level, 1e-9,
                           [](const auto& m) { return m.network.intra.bandwidth; }),
           origin["intra"]});
    }
    for (const auto& [ranks, link] : fit.network_by_ranks) {
      const int r = ranks;
      plan.parameters.push_back(
          {fmt::format("{}latency at np={}", intra_name, r), "us",
           parameter_value(fit, level, 1e6,
                           [r](const auto& m) { return m.network.intra_by_ranks.at(r).alpha; }),
           "fitted"});
      plan.parameters.push_back(
          {fmt::format("{}bandwidth at np={}", intra_name, r), "GB/s",
           parameter_value(fit, level, 1e-9,
                           [r](const auto& m) { return m.network.intra_by_ranks.at(r).bandwidth; }),
           "fitted"});
    }
    if (fit.network) {
      std::string per_np;
      for (const auto& [ranks, f] : fit.network_by_ranks)
        per_np += fmt::format("{} np={}: {:.1f}%", per_np.empty() ? "; per np" : ",", ranks,
                              100 * f.rms_relative_residual);
      plan.notes.push_back(fmt::format(
          "Allreduce fit: {} rows, RMS relative residual {:.1f}% for one ring over all np{}{}.",
          fit.network->samples, 100 * fit.network->rms_relative_residual, per_np,
          fit.network->rms_relative_residual > 0.2 && fit.network_by_ranks.empty()
              ? " (the ring model does not describe these runs: ranks sharing cores or memory "
                "get less bandwidth as np grows; --network-per-np fits each np)"
              : ""));
      if (o.allreduce_window > 0)
        plan.notes.push_back(fmt::format(
            "Network fitted on allreduce sizes within x{:g} of the {:.3g} MB message each step "
            "sends.",
            o.allreduce_window, std::min(training.fusion_bytes, training.parameters * 4) * 1e-6));
      if (!fit.network_by_ranks.empty())
        plan.notes.push_back(
            "One link per measured np (--network-per-np): beyond the largest, its link is used.");
    }
    if (data.fixed.network.inter) {
      plan.parameters.push_back({"inter-node latency",
                                 "us",
                                 {data.fixed.network.inter->alpha * 1e6, std::nullopt},
                                 origin["inter"]});
      plan.parameters.push_back({"inter-node bandwidth",
                                 "GB/s",
                                 {data.fixed.network.inter->bandwidth * 1e-9, std::nullopt},
                                 origin["inter"]});
      plan.parameters.push_back(
          {"ranks per node",
           "",
           {static_cast<double>(data.fixed.network.ranks_per_node), std::nullopt},
           o.ranks_per_node ? "given" : "largest measured np"});
    }
    plan.parameters.push_back(
        {"gradient", "MB", {fit.model.gradient_bytes * 1e-6, std::nullopt}, origin["parameters"]});
    plan.parameters.push_back(
        {"fusion bucket", "MiB", {fit.model.bucket_bytes / kMiB, std::nullopt}, "header"});

    // Predictions.
    std::vector<int> measured;
    for (const auto& [np, steps] : training.steps_by_np) measured.push_back(np);
    const double measured_single =
        training.steps_by_np.count(1) ? mean_of(training.steps_by_np.at(1)) : 0.0;
    for (int np : plan_rank_counts(o.max_np, measured)) {
      PlanRow row;
      row.np = np;
      std::vector<double> steps, rates, efficiencies;
      for (const auto& m : fit.replicates) {
        const double s = stats::step_seconds(m, np);
        steps.push_back(s);
        rates.push_back(np * training.batch / s);
        efficiencies.push_back(stats::scaling_efficiency(m, np));
      }
      const double step = stats::step_seconds(fit.model, np);
      row.step_seconds = with_interval(step, steps, level);
      row.images_per_second = with_interval(np * training.batch / step, rates, level);
      row.efficiency = with_interval(stats::scaling_efficiency(fit.model, np), efficiencies, level);
      if (images_per_epoch) {
        const double images = weak ? static_cast<double>(*images_per_epoch) * np
                                   : static_cast<double>(*images_per_epoch);
        const double steps_per_epoch = images / (np * training.batch);
        std::vector<double> epochs;
        for (double s : steps) epochs.push_back(s * steps_per_epoch);
        row.epoch_seconds = with_interval(step * steps_per_epoch, epochs, level);
      }
      const auto it = training.steps_by_np.find(np);
      if (it != training.steps_by_np.end()) {
        row.measured_step_seconds = mean_of(it->second);
        row.measured_runs = it->second.size();
        if (measured_single > 0)
          row.measured_efficiency = measured_single / *row.measured_step_seconds;
        row.step_error = (step - *row.measured_step_seconds) / *row.measured_step_seconds;
        row.held_out = o.fit_max_np && np > *o.fit_max_np;
      }
      plan.rows.push_back(row);
    }
    std::string misfits;
    for (const auto& row : plan.rows)
      if (row.step_error && !row.held_out && std::abs(*row.step_error) > 0.10)
        misfits += fmt::format("{}np={} ({:+.0f}%)", misfits.empty() ? "" : ", ", row.np,
                               100 * *row.step_error);
    if (!misfits.empty())
      plan.notes.push_back(fmt::format(
          "The fit misses measured np it was fitted on by more than 10%: {}. The model does not "
          "describe these runs well (a network that is not the one they used, or an overhead "
          "that grows with np); read its predictions with that error in mind.",
          misfits));
    if (o.fit_max_np)
      plan.notes.push_back(fmt::format(
          "Fitted on training runs with np <= {}{}; larger measured np are held out and their "
          "error is a prediction's.",
          *o.fit_max_np,
          o.allreduce_max_np ? fmt::format(" and allreduce runs with np <= {}", *o.allreduce_max_np)
                             : std::string(" (the allreduce runs at every np)")));
    plan.notes.push_back(fmt::format(
        "Step = epoch time / (images per epoch / (np x batch {})), mean over each run's epochs "
        "after the first {}; intervals: {:g}% percentile bootstrap over runs ({} refits{}).",
        training.batch, o.skip_epochs, 100 * o.level, plan.replicates,
        plan.failed_replicates ? fmt::format(", {} resamples refused", plan.failed_replicates)
                               : ""));
    plan.notes.push_back(weak ? "Weak scaling: images per epoch grow with np."
                              : "Strong scaling: images per epoch fixed, split among the ranks.");
    return plan;
  }

  // Preset mode: everything given.
  if (!o.network) throw ReportError("give --experiment (measured runs) or --network PRESET");
  if (!o.parameters) throw ReportError("--network without --experiment needs --parameters N");
  if (!o.images_per_second || !(*o.images_per_second > 0))
    throw ReportError(
        "--network without --experiment needs --images-per-second (one rank's throughput)");
  if (!o.batch_size) throw ReportError("--network without --experiment needs --batch-size");
  stats::StepModel m;
  const auto& inter = stats::network_preset(*o.network);
  m.compute = *o.batch_size / *o.images_per_second;
  m.overhead = o.overhead_ms.value_or(0) * 1e-3;
  m.overlap = o.overlap.value_or(0);
  m.network.intra = o.intra_network ? stats::network_preset(*o.intra_network).link : inter.link;
  if (o.ranks_per_node) {
    m.network.inter = inter.link;
    m.network.ranks_per_node = *o.ranks_per_node;
  }
  m.gradient_bytes = *o.parameters * 4;
  m.bucket_bytes = o.fusion_mb.value_or(64) * kMiB;
  plan.title = fmt::format("Scaling model on {}", inter.description);
  plan.source = "presets (no measurement)";
  plan.parameters = {
      {"compute", "ms", {m.compute * 1e3, std::nullopt}, "given (batch / images/s)"},
      {"overhead", "ms", {m.overhead * 1e3, std::nullopt}, o.overhead_ms ? "given" : "assumed"},
      {"overlap", "", {m.overlap, std::nullopt}, o.overlap ? "given" : "assumed"},
      {m.network.inter ? "intra-node latency" : "latency",
       "us",
       {m.network.intra.alpha * 1e6, std::nullopt},
       "preset " + o.intra_network.value_or(*o.network)},
      {m.network.inter ? "intra-node bandwidth" : "bandwidth",
       "GB/s",
       {m.network.intra.bandwidth * 1e-9, std::nullopt},
       "preset " + o.intra_network.value_or(*o.network)}};
  if (m.network.inter) {
    plan.parameters.push_back({"inter-node latency",
                               "us",
                               {m.network.inter->alpha * 1e6, std::nullopt},
                               "preset " + *o.network});
    plan.parameters.push_back({"inter-node bandwidth",
                               "GB/s",
                               {m.network.inter->bandwidth * 1e-9, std::nullopt},
                               "preset " + *o.network});
    plan.parameters.push_back(
        {"ranks per node", "", {static_cast<double>(*o.ranks_per_node), std::nullopt}, "given"});
  }
  plan.parameters.push_back({"gradient", "MB", {m.gradient_bytes * 1e-6, std::nullopt}, "given"});
  plan.parameters.push_back({"fusion bucket",
                             "MiB",
                             {m.bucket_bytes / kMiB, std::nullopt},
                             o.fusion_mb ? "given" : "default"});
  for (int np : plan_rank_counts(o.max_np, {})) {
    PlanRow row;
    row.np = np;
    const double step = stats::step_seconds(m, np);
    row.step_seconds = {step, std::nullopt};
    row.images_per_second = {np * *o.batch_size / step, std::nullopt};
    row.efficiency = {stats::scaling_efficiency(m, np), std::nullopt};
    if (o.train_images) {
      const double images = o.weak_scaling ? static_cast<double>(*o.train_images) * np
                                           : static_cast<double>(*o.train_images);
      row.epoch_seconds = PlanValue{step * images / (np * *o.batch_size), std::nullopt};
    }
    plan.rows.push_back(row);
  }
  plan.notes.push_back(
      "No intervals: every input is given, nothing is measured. Network figures and their sources: "
      "docs/scaling-model.md, \"Network presets\".");
  return plan;
}

}  // namespace scalebench::plotting
