#include "stats/scaling_model.hpp"

#include <fmt/format.h>

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

}  // namespace scalebench::stats
