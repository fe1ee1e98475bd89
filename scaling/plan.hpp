// `scalebench model`: the scaling model (stats/scaling_model.hpp) fitted to an experiment's
// training and allreduce runs, or set up from network presets, and its predictions to np 1024
// with bootstrap intervals (docs/scaling-model.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/data/instances.hpp"
#include "report/data/run_set.hpp"
#include "scaling/model.hpp"

namespace scalebench::scaling {

struct ScalingPlanOptions {
  // Measured: the experiment with the training runs (and allreduce runs, unless `allreduce`
  // names another one). Absent: preset mode (network, parameters, images/s and batch given).
  std::optional<report::InstanceQuery> training;
  std::optional<report::InstanceQuery> allreduce;
  std::optional<std::string> condition;                   // training runs of this condition
  std::vector<std::pair<std::string, std::string>> only;  // FACTOR=LEVEL filters
  std::optional<std::string> transport;                   // allreduce rows of this transport
  // Links. With measured allreduce runs `network` is the inter-node link (nodes of
  // ranks_per_node ranks, default the largest measured np); without, it is the link between
  // nodes and `intra_network` the one inside them (default: the same).
  std::optional<std::string> network;
  std::optional<std::string> intra_network;
  std::optional<int> ranks_per_node;
  // The model and step; default from the trainer's header line of the runs.
  std::optional<double> parameters;
  std::optional<int> batch_size;
  std::optional<double> fusion_mb;
  std::optional<double> overlap;            // fixed (preset mode, or one multi-rank count measured)
  std::optional<double> overhead_ms;        // preset mode
  std::optional<double> images_per_second;  // preset mode: one rank alone
  std::optional<long long> train_images;    // images per epoch (all ranks), for epoch times
  bool weak_scaling = false;                // preset mode: train_images is per rank
  std::optional<int> fit_max_np;        // fit on training runs with np <= this; larger are held out
  std::optional<int> allreduce_max_np;  // fit the network on allreduce runs with np <= this
  bool network_per_np = false;          // one link per measured np (Topology::intra_by_ranks)
  // Fit the network on allreduce rows within this factor of the message the step sends
  // (min(bucket, gradient)); 0: every size.
  double allreduce_window = 0;
  int max_np = 1024;
  // `paper`'s default: max_np from the runs, 4 x the largest measured np rounded up to a power
  // of two (default_max_np), instead of max_np.
  bool max_np_from_runs = false;
  int bootstrap = 1000;
  std::uint64_t seed = 1;
  double level = 0.95;
  // Epochs at the start of each run left out (warm-up), when it has more; default: the report's
  // rule (report::warmup_rule: the experiment file's "warmup_epochs", else none).
  std::optional<int> skip_epochs = std::nullopt;
};

struct PlanValue {
  double value = 0;
  // The band: the bootstrap interval, widened by the model's own error where it is known
  // (prediction_band; docs/scaling-model.md, "The band").
  std::optional<Interval> interval;
  // The bootstrap's percentile interval alone, where the band is wider than it.
  std::optional<Interval> bootstrap = std::nullopt;
};

struct PlanParameter {
  std::string name;    // "compute", "overhead", ...
  std::string unit;    // "ms", "GB/s", "us", "" (a fraction), "MB"
  PlanValue value;     // in `unit`
  std::string origin;  // "fitted", "preset 10gbe", "header", "given"
  // Fitted with a zero-width interval at a bound the fit clips to (an overlap of 0 or 1, an
  // overhead or latency of 0): every refit gave that value. Not identified by these data: the
  // interval says nothing about its uncertainty.
  bool at_bound = false;
};

struct PlanRow {
  int np = 1;
  PlanValue step_seconds;
  PlanValue images_per_second;
  PlanValue efficiency;
  std::optional<PlanValue> epoch_seconds;
  std::optional<double> measured_step_seconds;  // mean over the runs at this np
  std::vector<double> measured_run_steps;       // each run's mean step at this np, in run order
  // The mean's own confidence interval (Student's t over the runs, at the plan's level), with
  // two runs or more.
  std::optional<Interval> measured_step_interval = std::nullopt;
  std::optional<double> measured_efficiency;
  std::size_t measured_runs = 0;
  bool held_out = false;  // measured but not used by the fit (np > fit_max_np)
  // (predicted − measured) / measured step time, where measured.
  std::optional<double> step_error;
  // The model error's scale on the log scale at this np (model_error_at), where it is known.
  std::optional<double> model_error = std::nullopt;
  // Held out with a band: whether the measured images/s (np x batch / measured step) lies in it,
  // the band's half-width on the measurement's side and the mean's own (measured_step_interval)
  // added in quadrature on the log scale (band_covers).
  std::optional<bool> inside_band = std::nullopt;
};

// How many held-out np the band covers: the hold-out table's honesty check.
struct BandCoverage {
  int held_out = 0;          // held-out np with a band
  int inside = 0;            // of them, measured images/s inside it
  std::vector<int> outside;  // the np outside
};

struct ScalingPlan {
  std::string title;   // what was modelled
  std::string source;  // experiment and instances, or "presets"
  double level = 0.95;
  int batch = 1;              // per rank: images/s = np x batch / step
  int replicates = 0;         // bootstrap refits that succeeded
  int failed_replicates = 0;  // resamples the fit refused
  std::vector<PlanParameter> parameters;
  std::vector<PlanRow> rows;
  // The model's own error from the leave-one-np-out refits, when it widens the band (at least two
  // fitted np above 1 and a bootstrap); the t quantile it is multiplied by.
  std::optional<ModelError> model_error;
  double model_error_quantile = 0;
  std::optional<BandCoverage> coverage;  // with held-out np and a band
  std::vector<std::string> notes;
  // The same notes in the paper's words (`paper`'s LaTeX and HTML): no option names, paths or
  // timestamps; what only a command line needs (the instance's start time, which option to
  // try) is left out.
  std::vector<std::string> paper_notes;
};

// The runs a measured plan is fitted to (scaling/plan_load.hpp loads them): the training
// experiment's, filtered by the options' condition and --only levels, with their headers and
// allreduce runs; and another experiment's allreduce runs when options.allreduce names one.
struct ScalingRuns {
  report::RunSet training;
  std::optional<report::RunSet> allreduce = std::nullopt;
};

// Throws report::ReportError naming the first option out of range or preset unknown (every named
// preset is checked, used or not).
void check_scaling_options(const ScalingPlanOptions& options);

// Throws report::ReportError (no runs, missing inputs, an unknown preset) naming what is missing
// and how to give it, and StatsError from the fit. `runs`: null in preset mode (no training).
ScalingPlan build_scaling_plan(const ScalingRuns* runs, const ScalingPlanOptions& options);

// The np of the table: 1, 2, 4, ... up to max_np, and every measured np.
std::vector<int> plan_rank_counts(int max_np, const std::vector<int>& measured);

// The band's coverage as measured on the committed hold-out cases (docs/scaling-model.md, "How
// often the band covers"; tests/scaling/test_band_coverage.cpp recomputes it): of the held-out np
// one and two doublings past the largest fitted np, how many the band covered, with the model's
// error in it (at least two fitted np above 1) and without (the bootstrap's alone).
struct StatedCoverage {
  int one_doubling_inside = 0;
  int one_doubling_cases = 0;
  int two_doublings_inside = 0;
  int two_doublings_cases = 0;
};
StatedCoverage stated_band_coverage(bool with_model_error);
// That coverage as a sentence for the notes and captions.
std::string band_coverage_statement(bool with_model_error);

// `paper`'s default largest np: 4 x the largest measured np, rounded up to a power of two (two
// doublings past the measurement, as far as docs/scaling-model.md states the band's coverage).
int default_max_np(int largest_measured_np);

// Whether a held-out measurement of images/s `measured` (> 0) is consistent with the band
// [band.low, band.high] around `predicted`: on the log scale, |log(measured / predicted)| at most
// sqrt(w_band² + w_mean²), w_band the band's half-width on the measurement's side and w_mean the
// measured mean's own relative half-width (0 without one). Var(measured − predicted) =
// Var(prediction) + Var(mean), so the half-widths at one level add in quadrature.
bool band_covers(double predicted, const Interval& band, double measured, double mean_half_width);

}  // namespace scalebench::scaling
