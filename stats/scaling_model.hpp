// The communication half of the scaling model (issue "Plan past one machine", first part): the
// Hockney cost of a ring allreduce (Thakur, Rabenseifner & Gropp 2005, section 4.4),
//   t(S, n) = 2(n − 1)·α + 2(n − 1)/n · S/B,
// with α the per-message latency and B the bus bandwidth in nccl-tests' sense (busbw = algbw ·
// 2(n − 1)/n, so a measured busbw is B directly), its value for a gradient sent in fusion
// buckets, and the least-squares fit of α and B to measured allreduce times.
#pragma once

#include <cstddef>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

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
// message size and one rank count), or a fit with α < 0 or B <= 0 (data the model does not
// describe).
AllreduceFit fit_allreduce(const std::vector<AllreduceSample>& samples);

// One training step at n ranks (data parallel, a fixed batch per rank):
//   step(n) = compute + [n > 1] · (overhead + (1 − overlap) · t_buckets(gradient_bytes, n)),
// compute the single-rank step time, overhead what a step costs per extra rank set-up beyond the
// allreduce (synchronisation, the launcher), overlap the share of the allreduce hidden behind
// backward (0: none, 1: all).
struct StepModel {
  double compute = 0;         // s
  double overhead = 0;        // s
  double overlap = 0;         // fraction in [0, 1]
  double alpha = 0;           // s
  double bandwidth = 1;       // B/s
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
// multi-rank steps: step(n) − compute = overhead + (1 − overlap) · t_buckets(n), with α, B,
// gradient and bucket sizes taken from `network` (its compute, overhead and overlap are
// ignored). Overlap is clipped to [0, 1] and overhead to >= 0, refitting the other alone when
// one is clipped. Throws StatsError without single-rank samples, with fewer than two multi-rank
// samples at two rank counts, or non-positive times.
StepModel fit_step_model(const std::vector<StepSample>& samples, const StepModel& network);

}  // namespace scalebench::stats
