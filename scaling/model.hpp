// The communication half of the scaling model (issue "Plan past one machine", first part): the
// Hockney cost of a ring allreduce (Thakur, Rabenseifner & Gropp 2005, section 4.4),
//   t(S, n) = 2(n − 1)·α + 2(n − 1)/n · S/B,
// with α the per-message latency and B the bus bandwidth in nccl-tests' sense (busbw = algbw ·
// 2(n − 1)/n, so a measured busbw is B directly), its value for a gradient sent in fusion
// buckets, and the least-squares fit of α and B to measured allreduce times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::scaling {

// Seconds for one ring allreduce of `bytes` over `ranks`; 0 for one rank. Throws StatsError for
// ranks < 1, bytes < 0, alpha < 0 or bandwidth <= 0.
double ring_allreduce_seconds(double bytes, int ranks, double alpha, double bandwidth);

// A gradient of `bytes` sent in buckets of at most `bucket_bytes` (the trainer's --fusion-mb):
// one allreduce per bucket, so ceil(bytes / bucket_bytes) latencies and the bandwidth term of
// the whole. Throws StatsError for bucket_bytes <= 0 and where ring_allreduce_seconds does.
double bucketed_allreduce_seconds(double bytes, double bucket_bytes, int ranks, double alpha,
                                  double bandwidth);

struct AllreduceSample {
  double bytes = 0;
  int ranks = 1;
  double seconds = 0;
};

struct AllreduceFit {
  double alpha = 0;                  // seconds per message step
  double bandwidth = 0;              // bytes per second (bus bandwidth)
  double rms_relative_residual = 0;  // sqrt(mean((fitted − measured)² / measured²))
  std::size_t samples = 0;
};

// Least squares on relative residuals (each row divided by its measured time, so microsecond
// latencies count as much as second-long transfers): t / t = α·2(n−1)/t + (1/B)·2(n−1)/n·S/t.
// Samples with one rank carry no communication and are skipped. Throws StatsError with fewer
// than two usable samples, a non-positive time, samples that cannot separate α from B (one
// message size and one rank count), or a fit with B <= 0 (data the model does not
// describe). A negative latency is clipped to 0 and the bandwidth refitted alone (sizes past the
// caches grow faster than linearly).
AllreduceFit fit_allreduce(const std::vector<AllreduceSample>& samples);

// A network link: per-message latency and bus bandwidth.
struct Link {
  double alpha = 0;      // s per message step
  double bandwidth = 1;  // B/s (nccl-tests busbw)
};

// Where the ranks sit. Without `inter`, every rank is on one network (`intra`). With it, nodes hold
// `ranks_per_node` ranks each, joined by `intra`, and the nodes by `inter`: the allreduce is
// hierarchical (intra-node reduce-scatter, inter-node ring allreduce of each rank's shard, all
// sharing the node's link, then intra-node allgather; Horovod's hierarchical allreduce, NCCL's
// tree/ring across nodes behave alike in bandwidth):
//   t = k·2(g − 1)α_i + 2(g − 1)/g · S/B_i + k·2(m − 1)α_e + 2(m − 1)/m · S/B_e
// with g = min(ranks_per_node, n), m = ceil(n / g) nodes, k buckets, B_e the node's link.
struct Topology {
  Link intra;
  std::optional<Link> inter;
  int ranks_per_node = 1;
  // Links fitted at each measured rank count (ScalingData::network_per_np): a ring over n ranks
  // inside a node uses the link of the largest measured count <= n (the smallest one below it),
  // instead of `intra`. For ranks that share cores or memory (one oversubscribed host) the
  // bandwidth depends on n, which one (alpha, B) over all counts cannot describe.
  std::map<int, Link> intra_by_ranks;
};

// Seconds of the bucketed allreduce of `bytes` over `ranks` on `topology`. Throws StatsError
// where bucketed_allreduce_seconds does, and for ranks_per_node < 1 with an inter-node link.
double allreduce_seconds(const Topology& topology, double bytes, double bucket_bytes, int ranks);

// One training step at n ranks (data parallel, a fixed batch per rank):
//   step(n) = compute + [n > 1] · (overhead + (1 − overlap) · t_allreduce(gradient_bytes, n)),
// compute the single-rank step time, overhead what a multi-rank step costs beyond the allreduce
// (synchronisation, stragglers, the launcher), overlap the share of the allreduce hidden behind
// backward (0: none, 1: all).
struct StepModel {
  double compute = 0;   // s
  double overhead = 0;  // s
  double overlap = 0;   // fraction in [0, 1]
  Topology network;
  double gradient_bytes = 0;  // parameters × 4 for fp32
  double bucket_bytes = 64.0 * 1024 * 1024;
};
double step_seconds(const StepModel& model, int ranks);
// Weak-scaling efficiency: images/s at n over n × images/s at 1 = step(1) / step(n).
double scaling_efficiency(const StepModel& model, int ranks);

struct StepSample {
  int ranks = 1;
  double seconds = 0;  // one step (an epoch's time over its steps)
};

// Fits compute (the mean single-rank step), then overhead and overlap by least squares on the
// multi-rank steps: step(n) − compute = overhead + (1 − overlap) · t_allreduce(n), with the
// network, gradient and bucket sizes taken from `fixed` (its compute, overhead and overlap are
// ignored). Overlap is clipped to [0, 1] and overhead to >= 0, refitting the other alone when
// one is clipped. With steps at one rank count above 1 only, overlap is taken from `fixed` and
// the overhead alone is fitted. Throws StatsError without single-rank samples, without
// multi-rank samples, or with non-positive times.
StepModel fit_step_model(const std::vector<StepSample>& samples, const StepModel& fixed);

// ---- Fitting from runs, with bootstrap intervals ----

// One training run: its mean step time (epoch time over steps, averaged over its epochs).
struct TrainingRun {
  int ranks = 1;
  double step_seconds = 0;
};
// One allreduce benchmark run: its rows (a message-size sweep at its rank count).
struct AllreduceRun {
  int ranks = 1;
  std::vector<AllreduceSample> rows;
};

struct ScalingData {
  std::vector<TrainingRun> training;
  // Empty: the network is `fixed.network` as given (a preset), not fitted.
  std::vector<AllreduceRun> allreduce;
  // Gradient and bucket sizes, the network when not fitted, and the overlap to use when the
  // training runs hold a single multi-rank count. With allreduce runs, the fitted link replaces
  // fixed.network.intra (the measured machine is one node) and fixed.network.inter is kept.
  StepModel fixed;
  // Fit the link separately at each rank count of the allreduce runs (Topology::intra_by_ranks)
  // instead of one ring over all of them.
  bool network_per_np = false;
};

struct ScalingFit {
  StepModel model;                               // the point estimate
  std::optional<AllreduceFit> network;           // the fitted link, when allreduce runs were given
  std::map<int, AllreduceFit> network_by_ranks;  // with network_per_np
  std::vector<StepModel> replicates;             // bootstrap refits (runs resampled within each np)
  std::size_t failed_replicates = 0;  // resamples the fit refused (e.g. one distinct size)
  bool overlap_fitted = true;         // false: one multi-rank count, overlap from `fixed`
};

// Fits the step model (and the link, with allreduce runs) to `data`, then refits it to
// `replicates` bootstrap resamples: training runs and allreduce runs are each drawn with
// replacement within their rank count (Efron & Tibshirani 1993, ch. 6: the run is the unit,
// so epochs of one run never count as independent). Deterministic for a given seed. Throws
// StatsError when the data themselves cannot be fitted.
ScalingFit fit_scaling_model(const ScalingData& data, int replicates, std::uint64_t seed);

struct Interval {
  double low = 0;
  double high = 0;
};
// The percentile interval of `values` at `level` (0.95: the 2.5% and 97.5% quantiles, R's
// quantile type 7); nullopt for fewer than two values. Throws StatsError for level outside (0, 1).
std::optional<Interval> percentile_interval(std::vector<double> values, double level);

// ---- The model's own error: leave one np out (docs/scaling-model.md, "The band") ----

// One fitted np predicted by the model refitted without its training runs.
struct LeaveOneOutResidual {
  int ranks = 1;
  double measured_step_seconds = 0;   // mean over the runs at this np
  double predicted_step_seconds = 0;  // by the refit without them
  // log(measured images/s) − log(predicted images/s) = log(predicted step / measured step);
  // efficiency has the same (np = 1 is in every refit).
  double log_residual = 0;
};

// For each np above 1 of data.training, when it holds at least two such np: the model refitted
// without that np's training runs (the allreduce runs and everything else as in the fit; with one
// multi-rank np left the overlap is data.fixed's, as in fit_scaling_model) predicts that np's mean
// step. np = 1 is never left out: it is the compute every fit anchors on, and its efficiency is 1
// by definition. Empty with fewer than two multi-rank np; an np whose refit the fit refuses is
// skipped. Deterministic (no resampling).
std::vector<LeaveOneOutResidual> leave_one_np_out(const ScalingData& data);

// The scale of the model's error on the log scale of images/s (and step, efficiency, epoch).
struct ModelError {
  double rms = 0;              // sqrt(mean(log_residual²))
  int degrees_of_freedom = 0;  // the number of residuals
  int largest_fitted_np = 1;   // past it the error grows
  std::vector<LeaveOneOutResidual> residuals;
};

// nullopt with fewer than two residuals (the band is then the bootstrap's alone).
std::optional<ModelError> model_error(std::vector<LeaveOneOutResidual> residuals,
                                      int largest_fitted_np);

// The model error's scale at np: 0 at np = 1 (exact by construction), rms up to twice the
// largest fitted np (one doubling beyond it, as far as the residual of the largest fitted np
// reaches from the rest), and rms · log2(np / largest) beyond: the error grows linearly with the
// number of doublings extrapolated (a term the model lacks, linear in log2(np)).
double model_error_at(const ModelError& error, int np);

// Student's t quantile at (1 + level) / 2 with the residuals' degrees of freedom: the scale is
// estimated from that many residuals. Throws StatsError for level outside (0, 1) or df < 1.
double model_error_quantile(double level, int degrees_of_freedom);

// The prediction band of `point` (> 0): its bootstrap percentile interval widened on the log scale
// by the model's half-width, the two added in quadrature (independent errors: variances add):
//   low  = point · exp(−sqrt(log(point / boot.low)²  + half_width²)),
//   high = point · exp(+sqrt(log(boot.high / point)² + half_width²)),
// a bootstrap bound on the wrong side of the point counting as 0. With half_width = 0 the
// bootstrap interval is returned unchanged. Throws StatsError for point <= 0, a bootstrap bound
// <= 0 or half_width < 0.
Interval prediction_band(double point, const Interval& bootstrap, double half_width);

}  // namespace scalebench::scaling
