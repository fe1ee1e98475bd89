#include "stats/scaling_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stats/linear_model.hpp"

namespace scalebench::stats {

double ring_allreduce_seconds(double bytes, int ranks, double alpha, double bandwidth) {
  if (ranks < 1)
    throw StatsError(fmt::format("an allreduce needs at least one rank, not {}", ranks));
  if (!(bytes >= 0)) throw StatsError(fmt::format("message size {} is not >= 0", bytes));
  if (!(alpha >= 0)) throw StatsError(fmt::format("latency {} is not >= 0", alpha));
  if (!(bandwidth > 0)) throw StatsError(fmt::format("bandwidth {} is not > 0", bandwidth));
  if (ranks == 1) return 0;
  const double steps = 2.0 * (ranks - 1);
  return steps * alpha + steps / ranks * bytes / bandwidth;
}

double bucketed_allreduce_seconds(double bytes, double bucket_bytes, int ranks, double alpha,
                                  double bandwidth) {
  if (!(bucket_bytes > 0)) throw StatsError(fmt::format("bucket size {} is not > 0", bucket_bytes));
  const double buckets = std::max(1.0, std::ceil(bytes / bucket_bytes));
  const double whole = ring_allreduce_seconds(bytes, ranks, alpha, bandwidth);
  if (ranks == 1) return 0;
  return whole + (buckets - 1) * 2.0 * (ranks - 1) * alpha;
}

AllreduceFit fit_allreduce(const std::vector<AllreduceSample>& samples) {
  ColumnMajorMatrix x;
  std::vector<double> y;
  std::vector<const AllreduceSample*> used;
  for (const auto& s : samples) {
    if (!(s.seconds > 0) || !std::isfinite(s.seconds))
      throw StatsError(
          fmt::format("an allreduce time of {} s is not a positive number", s.seconds));
    if (s.ranks < 1 || !(s.bytes >= 0))
      throw StatsError(
          fmt::format("an allreduce sample has {} ranks and {} bytes", s.ranks, s.bytes));
    if (s.ranks > 1) used.push_back(&s);
  }
  if (used.size() < 2)
    throw StatsError(fmt::format(
        "fitting latency and bandwidth needs two allreduce samples over two ranks or more, got {}",
        used.size()));
  x.rows = used.size();
  x.cols = 2;
  x.values.resize(x.rows * 2);
  for (std::size_t i = 0; i < used.size(); ++i) {
    const AllreduceSample& s = *used[i];
    const double steps = 2.0 * (s.ranks - 1);
    x.at(i, 0) = steps / s.seconds;
    x.at(i, 1) = steps / s.ranks * s.bytes / s.seconds;
    y.push_back(1.0);
  }
  LeastSquaresFit fit;
  try {
    fit = least_squares(x, y);
  } catch (const StatsError&) {
    throw StatsError(
        "the allreduce samples cannot separate latency from bandwidth: measure more than one "
        "message size (or rank count)");
  }
  const double alpha = fit.coefficients[0], inverse_bandwidth = fit.coefficients[1];
  if (alpha < 0 || !(inverse_bandwidth > 0))
    throw StatsError(fmt::format(
        "the fitted latency ({} s) or bandwidth ({} B/s) is not physical: the samples do not "
        "follow t = 2(n-1)a + 2(n-1)/n S/B",
        alpha, inverse_bandwidth > 0 ? 1 / inverse_bandwidth : 0.0));
  AllreduceFit out;
  out.alpha = alpha;
  out.bandwidth = 1 / inverse_bandwidth;
  out.samples = used.size();
  double sum = 0;
  for (const auto* s : used) {
    const double r =
        (ring_allreduce_seconds(s->bytes, s->ranks, out.alpha, out.bandwidth) - s->seconds) /
        s->seconds;
    sum += r * r;
  }
  out.rms_relative_residual = std::sqrt(sum / static_cast<double>(used.size()));
  return out;
}

double step_seconds(const StepModel& m, int ranks) {
  if (ranks < 1) throw StatsError(fmt::format("a step needs at least one rank, not {}", ranks));
  if (ranks == 1) return m.compute;
  const double comm =
      bucketed_allreduce_seconds(m.gradient_bytes, m.bucket_bytes, ranks, m.alpha, m.bandwidth);
  return m.compute + m.overhead + (1 - m.overlap) * comm;
}

double scaling_efficiency(const StepModel& m, int ranks) {
  return step_seconds(m, 1) / step_seconds(m, ranks);
}

StepModel fit_step_model(const std::vector<StepSample>& samples, const StepModel& network) {
  double single = 0;
  std::size_t singles = 0;
  std::vector<double> comm, excess;
  std::vector<int> counts;
  for (const auto& s : samples) {
    if (!(s.seconds > 0) || !std::isfinite(s.seconds) || s.ranks < 1)
      throw StatsError(
          fmt::format("a step sample of {} s at {} ranks is not usable", s.seconds, s.ranks));
    if (s.ranks == 1) {
      single += s.seconds;
      ++singles;
    }
  }
  if (singles == 0) throw StatsError("fitting a step model needs single-rank steps (np = 1)");
  StepModel m = network;
  m.compute = single / static_cast<double>(singles);
  for (const auto& s : samples) {
    if (s.ranks == 1) continue;
    comm.push_back(bucketed_allreduce_seconds(network.gradient_bytes, network.bucket_bytes, s.ranks,
                                              network.alpha, network.bandwidth));
    excess.push_back(s.seconds - m.compute);
    if (std::find(counts.begin(), counts.end(), s.ranks) == counts.end()) counts.push_back(s.ranks);
  }
  if (comm.size() < 2 || counts.size() < 2)
    throw StatsError(
        fmt::format("fitting overhead and overlap needs steps at two rank counts above 1, got {}",
                    counts.size()));
  // excess = overhead · 1 + exposed · comm, exposed = 1 − overlap.
  ColumnMajorMatrix x;
  x.rows = comm.size();
  x.cols = 2;
  x.values.resize(x.rows * 2);
  for (std::size_t i = 0; i < comm.size(); ++i) {
    x.at(i, 0) = 1;
    x.at(i, 1) = comm[i];
  }
  const auto fit = least_squares(x, excess);
  double overhead = fit.coefficients[0], exposed = fit.coefficients[1];
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double e : v) sum += e;
    return sum / static_cast<double>(v.size());
  };
  if (exposed < 0 || exposed > 1) {  // clip, then the overhead alone
    exposed = std::clamp(exposed, 0.0, 1.0);
    std::vector<double> rest;
    for (std::size_t i = 0; i < comm.size(); ++i) rest.push_back(excess[i] - exposed * comm[i]);
    overhead = mean(rest);
  }
  if (overhead < 0) {  // clip, then the exposed share alone (least squares through 0)
    overhead = 0;
    double xy = 0, xx = 0;
    for (std::size_t i = 0; i < comm.size(); ++i)
      xy += comm[i] * excess[i], xx += comm[i] * comm[i];
    exposed = xx > 0 ? std::clamp(xy / xx, 0.0, 1.0) : 0.0;
  }
  m.overhead = overhead;
  m.overlap = 1 - exposed;
  return m;
}

}  // namespace scalebench::stats
