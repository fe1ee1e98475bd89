#include "scaling/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <random>

#include "stats/linear_model.hpp"

namespace scalebench::scaling {

using namespace stats;  // the least squares, errors and distributions it fits with

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
  double alpha = fit.coefficients[0], inverse_bandwidth = fit.coefficients[1];
  if (alpha < 0) {
    // Times that grow faster than the size (caches overflowing) pull the intercept below 0:
    // clip the latency at 0 and fit the bandwidth alone (least squares through the origin).
    alpha = 0;
    double xy = 0, xx = 0;
    for (std::size_t i = 0; i < x.rows; ++i) xy += x.at(i, 1), xx += x.at(i, 1) * x.at(i, 1);
    inverse_bandwidth = xy / xx;
  }
  if (!(inverse_bandwidth > 0))
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

namespace {

// The link of a ring over `ranks` inside a node.
const Link& intra_link(const Topology& t, int ranks) {
  if (t.intra_by_ranks.empty()) return t.intra;
  auto it = t.intra_by_ranks.upper_bound(ranks);
  if (it != t.intra_by_ranks.begin()) --it;
  return it->second;
}

}  // namespace

double allreduce_seconds(const Topology& t, double bytes, double bucket_bytes, int ranks) {
  if (!t.inter || ranks <= t.ranks_per_node) {
    const Link& link = intra_link(t, ranks);
    return bucketed_allreduce_seconds(bytes, bucket_bytes, ranks, link.alpha, link.bandwidth);
  }
  if (t.ranks_per_node < 1)
    throw StatsError(fmt::format("ranks per node must be >= 1, not {}", t.ranks_per_node));
  const int per_node = t.ranks_per_node;
  const int nodes = (ranks + per_node - 1) / per_node;
  // Reduce-scatter then allgather inside the node cost what a ring allreduce costs there.
  const Link& intra = intra_link(t, per_node);
  return bucketed_allreduce_seconds(bytes, bucket_bytes, per_node, intra.alpha, intra.bandwidth) +
         bucketed_allreduce_seconds(bytes, bucket_bytes, nodes, t.inter->alpha, t.inter->bandwidth);
}

double step_seconds(const StepModel& m, int ranks) {
  if (ranks < 1) throw StatsError(fmt::format("a step needs at least one rank, not {}", ranks));
  if (ranks == 1) return m.compute;
  const double comm = allreduce_seconds(m.network, m.gradient_bytes, m.bucket_bytes, ranks);
  return m.compute + m.overhead + (1 - m.overlap) * comm;
}

double scaling_efficiency(const StepModel& m, int ranks) {
  return step_seconds(m, 1) / step_seconds(m, ranks);
}

namespace {

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double e : v) sum += e;
  return sum / static_cast<double>(v.size());
}

}  // namespace

StepModel fit_step_model(const std::vector<StepSample>& samples, const StepModel& fixed) {
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
  StepModel m = fixed;
  m.compute = single / static_cast<double>(singles);
  for (const auto& s : samples) {
    if (s.ranks == 1) continue;
    comm.push_back(
        allreduce_seconds(fixed.network, fixed.gradient_bytes, fixed.bucket_bytes, s.ranks));
    excess.push_back(s.seconds - m.compute);
    if (std::find(counts.begin(), counts.end(), s.ranks) == counts.end()) counts.push_back(s.ranks);
  }
  if (comm.empty())
    throw StatsError("fitting a step model needs steps at more than one rank (np >= 2)");
  double overhead = 0, exposed = 1 - std::clamp(fixed.overlap, 0.0, 1.0);
  if (counts.size() >= 2) {
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
    overhead = fit.coefficients[0];
    exposed = fit.coefficients[1];
  }
  if (counts.size() < 2 || exposed < 0 || exposed > 1) {  // clip, then the overhead alone
    exposed = std::clamp(exposed, 0.0, 1.0);
    std::vector<double> rest;
    for (std::size_t i = 0; i < comm.size(); ++i) rest.push_back(excess[i] - exposed * comm[i]);
    overhead = mean_of(rest);
  }
  if (overhead < 0 && counts.size() >= 2) {  // clip, then the exposed share alone (through 0)
    overhead = 0;
    double xy = 0, xx = 0;
    for (std::size_t i = 0; i < comm.size(); ++i)
      xy += comm[i] * excess[i], xx += comm[i] * comm[i];
    exposed = xx > 0 ? std::clamp(xy / xx, 0.0, 1.0) : 0.0;
  }
  m.overhead = std::max(0.0, overhead);
  m.overlap = 1 - exposed;
  return m;
}

namespace {

std::size_t distinct_multi_rank_counts(const std::vector<TrainingRun>& runs) {
  std::vector<int> counts;
  for (const auto& r : runs)
    if (r.ranks > 1 && std::find(counts.begin(), counts.end(), r.ranks) == counts.end())
      counts.push_back(r.ranks);
  return counts.size();
}

struct PointFit {
  StepModel model;
  std::optional<AllreduceFit> network;
  std::map<int, AllreduceFit> network_by_ranks;
};

PointFit fit_once(const std::vector<const TrainingRun*>& training,
                  const std::vector<const AllreduceRun*>& allreduce, const StepModel& fixed,
                  bool per_np) {
  PointFit out;
  out.model = fixed;
  if (!allreduce.empty()) {
    std::vector<AllreduceSample> rows;
    std::map<int, std::vector<AllreduceSample>> rows_by_ranks;
    for (const auto* run : allreduce) {
      rows.insert(rows.end(), run->rows.begin(), run->rows.end());
      auto& mine = rows_by_ranks[run->ranks];
      mine.insert(mine.end(), run->rows.begin(), run->rows.end());
    }
    out.network = fit_allreduce(rows);
    out.model.network.intra = {out.network->alpha, out.network->bandwidth};
    if (per_np) {
      for (const auto& [ranks, mine] : rows_by_ranks) {
        if (ranks < 2) continue;
        const AllreduceFit fit = fit_allreduce(mine);
        out.network_by_ranks[ranks] = fit;
        out.model.network.intra_by_ranks[ranks] = {fit.alpha, fit.bandwidth};
      }
    }
  }
  std::vector<StepSample> steps;
  steps.reserve(training.size());
  for (const auto* run : training) steps.push_back({run->ranks, run->step_seconds});
  out.model = fit_step_model(steps, out.model);
  return out;
}

// Indices of `ranks` grouped by value, so that a resample draws within each group.
template <typename Run>
std::vector<std::vector<const Run*>> by_ranks(const std::vector<Run>& runs) {
  std::vector<std::vector<const Run*>> groups;
  std::vector<int> keys;
  for (const auto& run : runs) {
    const auto it = std::find(keys.begin(), keys.end(), run.ranks);
    if (it == keys.end()) {
      keys.push_back(run.ranks);
      groups.push_back({&run});
    } else {
      groups[static_cast<std::size_t>(it - keys.begin())].push_back(&run);
    }
  }
  return groups;
}

template <typename Run>
std::vector<const Run*> resample(const std::vector<std::vector<const Run*>>& groups,
                                 std::mt19937_64& random) {
  std::vector<const Run*> out;
  for (const auto& group : groups) {
    std::uniform_int_distribution<std::size_t> pick(0, group.size() - 1);
    for (std::size_t i = 0; i < group.size(); ++i) out.push_back(group[pick(random)]);
  }
  return out;
}

template <typename Run>
std::vector<const Run*> all_of(const std::vector<Run>& runs) {
  std::vector<const Run*> out;
  for (const auto& run : runs) out.push_back(&run);
  return out;
}

}  // namespace

ScalingFit fit_scaling_model(const ScalingData& data, int replicates, std::uint64_t seed) {
  if (replicates < 0) throw StatsError(fmt::format("{} bootstrap replicates", replicates));
  for (const auto& run : data.training)
    if (!(run.step_seconds > 0) || !std::isfinite(run.step_seconds) || run.ranks < 1)
      throw StatsError(fmt::format("a training run of {} s per step at {} ranks is not usable",
                                   run.step_seconds, run.ranks));
  ScalingFit out;
  const PointFit point =
      fit_once(all_of(data.training), all_of(data.allreduce), data.fixed, data.network_per_np);
  out.model = point.model;
  out.network = point.network;
  out.network_by_ranks = point.network_by_ranks;
  out.overlap_fitted = distinct_multi_rank_counts(data.training) >= 2;
  const auto training_groups = by_ranks(data.training);
  const auto allreduce_groups = by_ranks(data.allreduce);
  std::mt19937_64 random(seed);
  out.replicates.reserve(static_cast<std::size_t>(replicates));
  for (int i = 0; i < replicates; ++i) {
    const auto training = resample(training_groups, random);
    const auto allreduce = resample(allreduce_groups, random);
    try {
      out.replicates.push_back(
          fit_once(training, allreduce, data.fixed, data.network_per_np).model);
    } catch (const StatsError&) {
      ++out.failed_replicates;
    }
  }
  return out;
}

std::optional<Interval> percentile_interval(std::vector<double> values, double level) {
  if (!(level > 0 && level < 1))
    throw StatsError(fmt::format("interval level {} is not in (0, 1)", level));
  if (values.size() < 2) return std::nullopt;
  std::sort(values.begin(), values.end());
  // R's quantile type 7: h = (n − 1)p, linear between the neighbours.
  const auto quantile = [&](double p) {
    const double h = (static_cast<double>(values.size()) - 1) * p;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
  };
  const double tail = (1 - level) / 2;
  return Interval{quantile(tail), quantile(1 - tail)};
}

std::vector<LeaveOneOutResidual> leave_one_np_out(const ScalingData& data) {
  std::map<int, std::vector<double>> steps;
  for (const auto& run : data.training) steps[run.ranks].push_back(run.step_seconds);
  std::vector<LeaveOneOutResidual> out;
  if (distinct_multi_rank_counts(data.training) < 2) return out;
  const auto allreduce = all_of(data.allreduce);
  for (const auto& [ranks, mine] : steps) {
    if (ranks == 1) continue;
    std::vector<const TrainingRun*> rest;
    for (const auto& run : data.training)
      if (run.ranks != ranks) rest.push_back(&run);
    try {
      const StepModel refit = fit_once(rest, allreduce, data.fixed, data.network_per_np).model;
      LeaveOneOutResidual r;
      r.ranks = ranks;
      r.measured_step_seconds = mean_of(mine);
      r.predicted_step_seconds = step_seconds(refit, ranks);
      r.log_residual = std::log(r.predicted_step_seconds / r.measured_step_seconds);
      out.push_back(r);
    } catch (const StatsError&) {
      // This np cannot be predicted without itself: it gives no residual.
    }
  }
  return out;
}

std::optional<ModelError> model_error(std::vector<LeaveOneOutResidual> residuals,
                                      int largest_fitted_np) {
  if (residuals.size() < 2) return std::nullopt;
  ModelError e;
  double sum = 0;
  for (const auto& r : residuals) sum += r.log_residual * r.log_residual;
  e.rms = std::sqrt(sum / static_cast<double>(residuals.size()));
  e.degrees_of_freedom = static_cast<int>(residuals.size());
  e.largest_fitted_np = largest_fitted_np;
  e.residuals = std::move(residuals);
  return e;
}

double model_error_at(const ModelError& error, int np) {
  if (np <= 1) return 0;
  const double doublings =
      std::log2(static_cast<double>(np) / static_cast<double>(error.largest_fitted_np));
  return error.rms * std::max(1.0, doublings);
}

double model_error_quantile(double level, int degrees_of_freedom) {
  if (!(level > 0 && level < 1))
    throw StatsError(fmt::format("interval level {} is not in (0, 1)", level));
  if (degrees_of_freedom < 1)
    throw StatsError(fmt::format("{} degrees of freedom", degrees_of_freedom));
  const boost::math::students_t t(degrees_of_freedom);
  return boost::math::quantile(t, (1 + level) / 2);
}

Interval prediction_band(double point, const Interval& bootstrap, double half_width) {
  if (!(point > 0) || !(bootstrap.low > 0) || !(bootstrap.high > 0))
    throw StatsError(fmt::format("a band on the log scale needs positive values, not {} [{}, {}]",
                                 point, bootstrap.low, bootstrap.high));
  if (!(half_width >= 0)) throw StatsError(fmt::format("half-width {} is not >= 0", half_width));
  if (half_width == 0) return bootstrap;
  const double below = std::max(0.0, std::log(point / bootstrap.low));
  const double above = std::max(0.0, std::log(bootstrap.high / point));
  return {point * std::exp(-std::hypot(below, half_width)),
          point * std::exp(std::hypot(above, half_width))};
}

}  // namespace scalebench::scaling
