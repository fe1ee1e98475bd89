#include "scaling/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "report/analysis/report.hpp"
#include "scaling/network_presets.hpp"
#include "scaling/plan_input.hpp"

namespace scalebench::scaling {

using namespace report;  // the tables, formats and errors it draws and prints

namespace {

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

PlanValue estimate(double point, const std::vector<double>& replicates, double level) {
  return {point, percentile_interval(replicates, level), std::nullopt};
}

// A value without an interval (given, or from a preset).
PlanValue fixed(double value) { return {value, std::nullopt, std::nullopt}; }

template <typename Get>
PlanValue parameter_value(const ScalingFit& fit, double level, double scale, Get get) {
  std::vector<double> values;
  values.reserve(fit.replicates.size());
  for (const auto& m : fit.replicates) values.push_back(get(m) * scale);
  return estimate(get(fit.model) * scale, values, level);
}

// The links from presets alone: --intra-network (default --network) inside nodes, and with
// --ranks-per-node, --network between them.
Topology preset_topology(const ScalingPlanOptions& o) {
  Topology t;
  const auto& network = network_preset(*o.network);
  t.intra = o.intra_network ? network_preset(*o.intra_network).link : network.link;
  if (o.ranks_per_node) {
    t.inter = network.link;
    t.ranks_per_node = *o.ranks_per_node;
  }
  return t;
}

std::string intra_preset_origin(const ScalingPlanOptions& o) {
  return "preset " + o.intra_network.value_or(*o.network);
}

// Where each parameter of the table came from ("fitted", "preset 10gbe", "given", ...).
struct Origins {
  std::string compute, overhead, overlap, intra, inter, ranks_per_node, gradient, fusion;
};

// The parameter table of a fitted or given model: intervals where there are replicates.
std::vector<PlanParameter> describe_parameters(const ScalingFit& fit, const Origins& origin,
                                               double level) {
  using M = StepModel;
  std::vector<PlanParameter> out = {
      {"compute", "ms", parameter_value(fit, level, 1e3, [](const M& m) { return m.compute; }),
       origin.compute},
      {"overhead", "ms", parameter_value(fit, level, 1e3, [](const M& m) { return m.overhead; }),
       origin.overhead},
      {"overlap", "", parameter_value(fit, level, 1, [](const M& m) { return m.overlap; }),
       origin.overlap}};
  const auto& network = fit.model.network;
  const std::string intra = network.inter ? "intra-node " : "";
  if (network.intra_by_ranks.empty()) {
    out.push_back(
        {intra + "latency", "us",
         parameter_value(fit, level, 1e6, [](const M& m) { return m.network.intra.alpha; }),
         origin.intra});
    out.push_back(
        {intra + "bandwidth", "GB/s",
         parameter_value(fit, level, 1e-9, [](const M& m) { return m.network.intra.bandwidth; }),
         origin.intra});
  }
  // With --network-per-np these links are the ones used.
  for (const auto& [ranks, link] : network.intra_by_ranks) {
    const int r = ranks;
    out.push_back(
        {fmt::format("{}latency at np={}", intra, r), "us",
         parameter_value(fit, level, 1e6,
                         [r](const M& m) { return m.network.intra_by_ranks.at(r).alpha; }),
         origin.intra});
    out.push_back(
        {fmt::format("{}bandwidth at np={}", intra, r), "GB/s",
         parameter_value(fit, level, 1e-9,
                         [r](const M& m) { return m.network.intra_by_ranks.at(r).bandwidth; }),
         origin.intra});
  }
  if (network.inter) {
    out.push_back({"inter-node latency", "us", fixed(network.inter->alpha * 1e6), origin.inter});
    out.push_back(
        {"inter-node bandwidth", "GB/s", fixed(network.inter->bandwidth * 1e-9), origin.inter});
    out.push_back({"ranks per node", "", fixed(static_cast<double>(network.ranks_per_node)),
                   origin.ranks_per_node});
  }
  out.push_back({"gradient", "MB", fixed(fit.model.gradient_bytes * 1e-6), origin.gradient});
  out.push_back({"fusion bucket", "MiB", fixed(fit.model.bucket_bytes / kMiB), origin.fusion});
  // Every refit at the same value, and that value a bound the fit clips to (overlap 0 or 1,
  // overhead or latency 0): not an estimate without uncertainty. (Noiseless runs give zero-width
  // intervals away from the bounds: those are identified.)
  for (auto& p : out)
    p.at_bound = p.value.interval && p.value.interval->low == p.value.interval->high &&
                 (p.value.value == 0 || (p.name == "overlap" && p.value.value == 1));
  return out;
}

// What the epochs hold: images per epoch at every np (strong scaling), or per rank (weak).
struct Epochs {
  std::optional<double> images;
  bool weak = false;
};

// The model's error at np, multiplied by its t quantile: how far the band reaches beyond the
// bootstrap's on the log scale.
struct Widening {
  const ModelError* error = nullptr;
  double quantile = 0;
};

// The mean of `values` with its Student's t interval at `level` (mean ± t·sd/sqrt(n), n − 1
// degrees of freedom); nullopt for fewer than two values.
std::optional<Interval> mean_interval(const std::vector<double>& values, double level) {
  const std::size_t n = values.size();
  if (n < 2) return std::nullopt;
  const double mean = mean_of(values);
  double squares = 0;
  for (double x : values) squares += (x - mean) * (x - mean);
  const double se = std::sqrt(squares / static_cast<double>(n - 1) / static_cast<double>(n));
  const double half = model_error_quantile(level, static_cast<int>(n - 1)) * se;
  return Interval{mean - half, mean + half};
}

// Widens a bootstrap interval into the band (prediction_band), keeping the bootstrap's own.
void widen(PlanValue& v, double half_width) {
  if (!v.interval || half_width <= 0) return;
  v.bootstrap = v.interval;
  v.interval = prediction_band(v.value, *v.interval, half_width);
}

// Predicted rows for np = 1, 2, 4, ... max_np and every measured np, with bands from the
// replicates (and the model's error) and the measured mean step where there is one.
std::vector<PlanRow> predict_rows(const ScalingFit& fit, int batch, const Epochs& epochs,
                                  const std::map<int, std::vector<double>>& measured,
                                  std::optional<int> fit_max_np, int max_np, double level,
                                  const Widening& widening = {}) {
  std::vector<int> measured_np;
  for (const auto& [np, steps] : measured) measured_np.push_back(np);
  const double single = measured.count(1) ? mean_of(measured.at(1)) : 0.0;
  std::vector<PlanRow> rows;
  for (int np : plan_rank_counts(max_np, measured_np)) {
    PlanRow row;
    row.np = np;
    const auto rate = [&](double step) { return np * batch / step; };
    std::vector<double> steps, rates, efficiencies;
    for (const auto& m : fit.replicates) {
      steps.push_back(step_seconds(m, np));
      rates.push_back(rate(steps.back()));
      efficiencies.push_back(scaling_efficiency(m, np));
    }
    const double step = step_seconds(fit.model, np);
    row.step_seconds = estimate(step, steps, level);
    row.images_per_second = estimate(rate(step), rates, level);
    row.efficiency = estimate(scaling_efficiency(fit.model, np), efficiencies, level);
    if (epochs.images) {
      const double images = epochs.weak ? *epochs.images * np : *epochs.images;
      const double steps_per_epoch = images / (np * batch);
      std::vector<double> times;
      for (double s : steps) times.push_back(s * steps_per_epoch);
      row.epoch_seconds = estimate(step * steps_per_epoch, times, level);
    }
    if (widening.error && !fit.replicates.empty()) {
      row.model_error = model_error_at(*widening.error, np);
      const double half_width = widening.quantile * *row.model_error;
      for (PlanValue* v : {&row.step_seconds, &row.images_per_second, &row.efficiency})
        widen(*v, half_width);
      if (row.epoch_seconds) widen(*row.epoch_seconds, half_width);
    }
    const auto it = measured.find(np);
    if (it != measured.end()) {
      const double mean = mean_of(it->second);
      row.measured_step_seconds = mean;
      row.measured_run_steps = it->second;
      row.measured_runs = it->second.size();
      row.measured_step_interval = mean_interval(it->second, level);
      if (single > 0) row.measured_efficiency = single / mean;
      row.step_error = (step - mean) / mean;
      row.held_out = fit_max_np && np > *fit_max_np;
      if (row.held_out && row.images_per_second.interval) {
        // The mean's relative half-width: its own noise is in the check (band_covers).
        const double mean_half_width =
            row.measured_step_interval ? (row.measured_step_interval->high - mean) / mean : 0.0;
        row.inside_band = band_covers(row.images_per_second.value, *row.images_per_second.interval,
                                      rate(mean), mean_half_width);
      }
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

// Every numeric option in its range, or a ReportError naming it.
void check_scaling_options(const ScalingPlanOptions& o) {
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
  // Named presets are checked whether or not this plan uses them: a typo is never ignored.
  const auto check_preset = [](const std::optional<std::string>& name, const char* option) {
    if (!name) return;
    try {
      network_preset(*name);
    } catch (const Error& error) {
      throw ReportError(fmt::format("--{} {}: {}", option, *name, error.what()));
    }
  };
  check_preset(o.network, "network");
  check_preset(o.intra_network, "intra-network");
}

namespace {

std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

// A note for the command line's output and, in the paper's words, for `paper` (no option names,
// paths or timestamps); an empty paper text leaves it out of the paper.
void add_note(ScalingPlan& plan, std::string cli, std::optional<std::string> paper = std::nullopt) {
  std::string prose = paper ? std::move(*paper) : cli;
  plan.notes.push_back(std::move(cli));
  if (!prose.empty()) plan.paper_notes.push_back(std::move(prose));
}

// What the predicted columns' band holds: the bootstrap alone, or with the model's own error.
void add_band_note(ScalingPlan& plan, const ScalingData& data) {
  if (plan.replicates == 0) return;
  if (!plan.model_error) {
    std::set<int> multi;
    for (const auto& run : data.training)
      if (run.ranks > 1) multi.insert(run.ranks);
    const std::string why = fmt::format(
        "the model's own error is estimated by leaving one fitted np out, which needs at least "
        "two fitted np above 1 ({} here{})",
        multi.size(), multi.size() >= 2 ? ", and a refit without one of them was refused" : "");
    add_note(plan,
             "The predicted band is the bootstrap's alone: " + why +
                 ", so the band does not include how far the model itself is off. " +
                 band_coverage_statement(false),
             "The predicted interval is the bootstrap's alone: " + why +
                 ", so it holds the run-to-run noise but not how far the model itself is off. " +
                 band_coverage_statement(false));
    return;
  }
  const auto& e = *plan.model_error;
  std::string residuals;
  for (const auto& r : e.residuals)
    residuals += fmt::format("{}np={}: {}", residuals.empty() ? "" : ", ", r.ranks,
                             signed_percent(std::expm1(r.log_residual)));
  const std::string how = fmt::format(
      "refitted without each fitted np above 1, the model missed its step by {}; the RMS of "
      "those log residuals, {:.2f}%, times t({:g}, {} d.f.) = {:.2f}, is added to the "
      "bootstrap's half-width in quadrature, and grows as log2(np / {}) beyond np={}",
      residuals, 100 * e.rms, (1 + plan.level) / 2, e.degrees_of_freedom, plan.model_error_quantile,
      e.largest_fitted_np, 2 * e.largest_fitted_np);
  add_note(plan,
           "Predicted band = bootstrap interval widened by the model's own error (a prediction "
           "interval): " +
               how +
               " (docs/scaling-model.md, \"The band\"). Parameter intervals: bootstrap alone. " +
               band_coverage_statement(true),
           "Predicted band: the bootstrap interval widened by the model's own error (a "
           "prediction interval): " +
               how + ". The parameters' intervals are the bootstrap's alone. " +
               band_coverage_statement(true));
}

// Fitted parameters whose every refit sat at the same value: at a bound, not identified.
void add_bound_note(ScalingPlan& plan) {
  std::vector<std::string> names;
  for (const auto& p : plan.parameters)
    if (p.at_bound) names.push_back(fmt::format("{} ({:g})", p.name, p.value.value));
  if (names.empty()) return;
  add_note(plan, fmt::format(
                     "At its bound in every refit, so not identified by these data (its zero-width "
                     "interval is no measure of its uncertainty): {}.",
                     fmt::join(names, ", ")));
}

// The notes under a fitted model's table: what was fixed or fitted, how well the allreduce and
// the training runs are described, what was held out, and how the step and intervals are made.
void add_fit_notes(ScalingPlan& plan, const ScalingFit& fit, const ScalingData& data,
                   const TrainingData& training, const Epochs& epochs,
                   const ScalingPlanOptions& o) {
  if (!fit.overlap_fitted) {
    const std::string fixed_text = fmt::format(
        "The training runs have one np above 1: the overlap is fixed at {} ({{}}) and only the "
        "overhead was fitted.",
        data.fixed.overlap);
    add_note(plan,
             fmt::format(fmt::runtime(fixed_text),
                         o.overlap ? "--overlap" : "the default; set it with --overlap"),
             fmt::format(fmt::runtime(fixed_text), o.overlap ? "given" : "assumed"));
  }
  if (training.overlap_on)
    add_note(plan, "The runs overlapped the allreduce with backward (--overlap on).",
             "The runs overlapped the allreduce with backward.");
  add_bound_note(plan);
  if (fit.network) {
    std::string per_np;
    for (const auto& [ranks, f] : fit.network_by_ranks)
      per_np += fmt::format("{} np={}: {:.1f}%", per_np.empty() ? "; per np" : ",", ranks,
                            100 * f.rms_relative_residual);
    const bool poor = fit.network->rms_relative_residual > 0.2 && fit.network_by_ranks.empty();
    const std::string fit_text = fmt::format(
        "Allreduce fit: {} rows, RMS relative residual {:.1f}% for one ring over all np{}",
        fit.network->samples, 100 * fit.network->rms_relative_residual, per_np);
    const std::string why =
        " (the ring model does not describe these runs: ranks sharing cores "
        "or memory get less bandwidth as np grows";
    add_note(plan, fit_text + (poor ? why + "; --network-per-np fits each np)" : "") + ".",
             fit_text + (poor ? why + ")" : "") + ".");
    if (o.allreduce_window > 0)
      add_note(plan, fmt::format("Network fitted on allreduce sizes within x{:g} of the {:.3g} MB "
                                 "message each step sends.",
                                 o.allreduce_window,
                                 std::min(training.fusion_bytes, training.parameters * 4) * 1e-6));
    if (!fit.network_by_ranks.empty())
      add_note(plan,
               "One link per measured np (--network-per-np): beyond the largest, its link is used.",
               "One link fitted per measured np; beyond the largest, its link is used.");
  }
  std::string misfits;
  for (const auto& row : plan.rows)
    if (row.step_error && !row.held_out && std::abs(*row.step_error) > 0.10)
      misfits += fmt::format("{}np={} ({:+.0f}%)", misfits.empty() ? "" : ", ", row.np,
                             100 * *row.step_error);
  if (!misfits.empty())
    add_note(plan,
             fmt::format("The fit misses measured np it was fitted on by more than 10%: {}. The "
                         "model does not describe these runs well (a network that is not the one "
                         "they used, or an overhead that grows with np); read its predictions with "
                         "that error in mind.",
                         misfits));
  if (o.fit_max_np)
    add_note(plan,
             fmt::format("Fitted on training runs with np <= {}{}; larger measured np are held "
                         "out and their error is a prediction's.",
                         *o.fit_max_np,
                         o.allreduce_max_np
                             ? fmt::format(" and allreduce runs with np <= {}", *o.allreduce_max_np)
                             : std::string(" (the allreduce runs at every np)")),
             fmt::format("Fitted on the training runs of at most {} ranks{}; the larger measured "
                         "np are held out, and their error is a prediction's.",
                         *o.fit_max_np,
                         o.allreduce_max_np ? fmt::format(" and the allreduce runs of at most {}",
                                                          *o.allreduce_max_np)
                                            : std::string(" (the allreduce runs at every np)")));
  const std::string intervals = fmt::format(
      "intervals: {:g}% percentile bootstrap over runs ({} refits{})", 100 * o.level,
      plan.replicates,
      plan.failed_replicates ? fmt::format(", {} resamples refused", plan.failed_replicates) : "");
  const std::string warmup =
      training.skip_epochs == 0
          ? std::string("none left out as warm-up")
          : fmt::format("after the first {} (warm-up; a run with no more keeps all)",
                        training.skip_epochs);
  add_note(plan,
           fmt::format("Step = epoch time / (images per epoch / (np x batch {})), mean over each "
                       "run's epochs{}{} ({}); {}.",
                       training.batch, training.skip_epochs == 0 ? ", " : " ", warmup,
                       training.skip_origin, intervals),
           fmt::format("Step time: a run's epoch time over its steps (images per epoch over np "
                       "times the batch of {}), averaged over its epochs{}{}; measured means with "
                       "Student's t intervals over runs; {}.",
                       training.batch, training.skip_epochs == 0 ? ", " : " ", warmup, intervals));
  add_band_note(plan, data);
  add_note(plan, epochs.weak ? "Weak scaling: images per epoch grow with np."
                             : "Strong scaling: images per epoch fixed, split among the ranks.");
}

// The model fitted to measured training (and allreduce) runs.
ScalingPlan measured_plan(const ScalingRuns& runs, const ScalingPlanOptions& o) {
  ScalingPlan plan;
  plan.level = o.level;
  const RunSet& selection = runs.training;
  const TrainingData training = load_training(selection, o);
  ScalingData data;
  for (const auto& note : selection.notes)  // the warm-up is said in the fit's notes
    // In the paper the report's table of the same runs carries them (and the provenance, the
    // instance's times).
    if (!note.starts_with("Warm-up left out")) add_note(plan, note, "");
  const RunSet& allreduce_selection = runs.allreduce ? *runs.allreduce : selection;
  const AllreduceData allreduce =
      load_allreduce(allreduce_selection, o, o.allreduce_max_np,
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
  // Images per epoch: constant (strong scaling) or growing with np (weak).
  const auto& images = training.images_by_np;
  const auto first = *images.begin(), last = *images.rbegin();
  Epochs epochs;
  epochs.weak =
      first.second * last.first == last.second * first.first && first.second != last.second;
  epochs.images = static_cast<double>(epochs.weak ? first.second / first.first : first.second);
  if (o.train_images) epochs.images = static_cast<double>(*o.train_images);
  if (allreduce.runs.empty() && !o.network)
    throw ReportError(fmt::format(
        "{} holds no allreduce runs: add an allreduce condition (--benchmark allreduce, "
        "docs/scaling-model.md), name another experiment with --allreduce-experiment, or "
        "give the network with --network PRESET",
        allreduce_selection.experiment));
  const int measured_max = training.steps_by_np.rbegin()->first;
  if (allreduce.runs.empty()) {
    data.fixed.network = preset_topology(o);
  } else if (o.network) {
    data.fixed.network.inter = network_preset(*o.network).link;
    data.fixed.network.ranks_per_node = o.ranks_per_node.value_or(measured_max);
    add_note(plan, fmt::format("Nodes of {} ranks joined by {} (measured links inside a node).",
                               data.fixed.network.ranks_per_node, *o.network));
  }
  if (o.overlap) data.fixed.overlap = *o.overlap;
  data.network_per_np = o.network_per_np && !allreduce.runs.empty();
  const auto fit = fit_scaling_model(data, o.bootstrap, o.seed);
  plan.replicates = static_cast<int>(fit.replicates.size());
  plan.failed_replicates = static_cast<int>(fit.failed_replicates);
  plan.batch = training.batch;
  plan.parameters = describe_parameters(
      fit,
      {"fitted (np=1 step)", "fitted",
       fit.overlap_fitted ? "fitted" : (o.overlap ? "given" : "assumed"),
       allreduce.runs.empty() ? intra_preset_origin(o) : "fitted",
       o.network ? "preset " + *o.network : "", o.ranks_per_node ? "given" : "largest measured np",
       o.parameters ? "given" : "header", o.fusion_mb ? "given" : "header"},
      o.level);
  int largest_fitted = 1;
  for (const auto& run : data.training) largest_fitted = std::max(largest_fitted, run.ranks);
  plan.model_error = model_error(leave_one_np_out(data), largest_fitted);
  Widening widening;
  if (plan.model_error && !fit.replicates.empty()) {
    plan.model_error_quantile = model_error_quantile(o.level, plan.model_error->degrees_of_freedom);
    widening = {&*plan.model_error, plan.model_error_quantile};
  } else {
    plan.model_error.reset();
  }
  plan.rows =
      predict_rows(fit, training.batch, epochs, training.steps_by_np, o.fit_max_np,
                   o.max_np_from_runs ? default_max_np(measured_max) : o.max_np, o.level, widening);
  for (const auto& row : plan.rows) {
    if (!row.inside_band) continue;
    if (!plan.coverage) plan.coverage.emplace();
    ++plan.coverage->held_out;
    if (*row.inside_band)
      ++plan.coverage->inside;
    else
      plan.coverage->outside.push_back(row.np);
  }
  add_fit_notes(plan, fit, data, training, epochs, o);
  return plan;
}

// The model from presets alone: everything given, nothing measured, no intervals.
ScalingPlan preset_plan(const ScalingPlanOptions& o) {
  ScalingPlan plan;
  plan.level = o.level;
  if (!o.network) throw ReportError("give --experiment (measured runs) or --network PRESET");
  if (!o.parameters) throw ReportError("--network without --experiment needs --parameters N");
  if (!o.images_per_second || !(*o.images_per_second > 0))
    throw ReportError(
        "--network without --experiment needs --images-per-second (one rank's throughput)");
  if (!o.batch_size) throw ReportError("--network without --experiment needs --batch-size");
  StepModel m;
  m.compute = *o.batch_size / *o.images_per_second;
  m.overhead = o.overhead_ms.value_or(0) * 1e-3;
  m.overlap = o.overlap.value_or(0);
  m.network = preset_topology(o);
  m.gradient_bytes = *o.parameters * 4;
  m.bucket_bytes = o.fusion_mb.value_or(64) * kMiB;
  plan.title = fmt::format("Scaling model on {}", network_preset(*o.network).description);
  plan.source = "presets (no measurement)";
  plan.batch = *o.batch_size;
  ScalingFit given;  // no replicates: no intervals
  given.model = m;
  plan.parameters = describe_parameters(
      given,
      {"given (batch / images/s)", o.overhead_ms ? "given" : "assumed",
       o.overlap ? "given" : "assumed", intra_preset_origin(o), "preset " + *o.network, "given",
       "given", o.fusion_mb ? "given" : "default"},
      o.level);
  plan.rows = predict_rows(
      given, *o.batch_size,
      {o.train_images ? std::optional<double>(*o.train_images) : std::nullopt, o.weak_scaling}, {},
      std::nullopt, o.max_np, o.level);
  add_note(plan,
           "No intervals: every input is given, nothing is measured. Network figures and their "
           "sources: docs/scaling-model.md, \"Network presets\".",
           "No intervals: every input is given, nothing is measured.");
  return plan;
}

}  // namespace

StatedCoverage stated_band_coverage(bool with_model_error) {
  // Measured by tests/scaling/test_band_coverage.cpp (which fails when these change).
  return with_model_error ? StatedCoverage{8, 9, 2, 3} : StatedCoverage{3, 7, 2, 7};
}

std::string band_coverage_statement(bool with_model_error) {
  const auto c = stated_band_coverage(with_model_error);
  const auto part = [](int inside, int cases, const char* where) {
    return cases == 0 ? fmt::format("{} none was measured", where)
                      : fmt::format("{} of {} held-out np {}", inside, cases, where);
  };
  return fmt::format("On the committed hold-out measurements such {} covered {}; {}{}.",
                     with_model_error ? "a band" : "an interval",
                     part(c.one_doubling_inside, c.one_doubling_cases, "one doubling past the fit"),
                     part(c.two_doublings_inside, c.two_doublings_cases, "two doublings past it"),
                     with_model_error
                         ? ""
                         : ": it is not a prediction band, and its nominal level does not hold "
                           "for a prediction");
}

int default_max_np(int largest_measured_np) {
  long long n = 1;
  while (n < 4LL * std::max(1, largest_measured_np)) n *= 2;
  return static_cast<int>(std::min<long long>(n, 1 << 20));
}

bool band_covers(double predicted, const Interval& band, double measured, double mean_half_width) {
  if (!(predicted > 0 && measured > 0 && band.low > 0 && band.high > 0))
    throw ReportError("band_covers: predicted, measured and the band must be positive");
  const double miss = std::log(measured / predicted);
  // The band's half-width on the measurement's side (0 where its bound is on the other side).
  const double band_half =
      std::max(0.0, miss < 0 ? std::log(predicted / band.low) : std::log(band.high / predicted));
  return std::abs(miss) <= std::hypot(band_half, std::max(0.0, mean_half_width));
}

std::vector<int> plan_rank_counts(int max_np, const std::vector<int>& measured) {
  std::set<int> counts(measured.begin(), measured.end());
  for (long long n = 1; n <= max_np; n *= 2) counts.insert(static_cast<int>(n));
  return {counts.begin(), counts.end()};
}

ScalingPlan build_scaling_plan(const ScalingRuns* runs, const ScalingPlanOptions& o) {
  check_scaling_options(o);
  if (!o.training) return preset_plan(o);
  if (runs == nullptr) throw ReportError("fitting to runs needs a results database");
  return measured_plan(*runs, o);
}

}  // namespace scalebench::scaling
