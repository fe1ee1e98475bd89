#include "stats/power.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "stats/tukey.hpp"

namespace scalebench::stats {
namespace {

void check_alpha(double alpha) {
  if (!(alpha > 0 && alpha < 1))
    throw StatsError(fmt::format("significance level {} is outside (0, 1)", alpha));
}

void check_power(double power) {
  if (!(power > 0 && power < 1)) throw StatsError(fmt::format("power {} is outside (0, 1)", power));
}

void check_effect(double delta, double sd) {
  if (!std::isfinite(delta))
    throw StatsError(fmt::format("difference {} is not a finite number", delta));
  if (!(sd >= 0) || !std::isfinite(sd))
    throw StatsError(fmt::format("standard deviation {} is not a finite number >= 0", sd));
}

// P(T' > upper) + (both ? P(T' < -upper) : 0) for T' noncentral t(df, ncp).
double noncentral_t_tails(double df, double ncp, double upper, bool both) {
  const boost::math::non_central_t_distribution<double> t(df, ncp);
  double p = boost::math::cdf(boost::math::complement(t, upper));
  if (both) p += boost::math::cdf(t, -upper);
  return std::min(1.0, p);
}

// The smallest integer n in [2, kMaxPlannedRuns] with power(n) >= target, for a power that does
// not decrease with n: doubling, then bisection.
std::optional<long long> smallest_integer_n(const std::function<double(double)>& power,
                                            double target) {
  long long low = 1;  // power(low) < target, or low = 1 (not evaluated)
  long long high = 2;
  while (power(static_cast<double>(high)) < target) {
    if (high >= kMaxPlannedRuns) return std::nullopt;
    low = high;
    high = std::min(high * 2, kMaxPlannedRuns);
  }
  while (high - low > 1) {
    const long long mid = low + (high - low) / 2;
    if (mid < 2 || power(static_cast<double>(mid)) >= target)
      high = mid;
    else
      low = mid;
  }
  return std::max(2LL, high);
}

// The real n > 1 with power(n) = target (power increasing in n), by TOMS 748 to ~1e-13 relative.
std::optional<double> real_n(const std::function<double(double)>& power, double target) {
  const auto f = [&](double n) { return power(n) - target; };
  double low = 2;
  double high = 2;
  if (f(low) >= 0) {
    // R's uniroot extends its interval below 2 (extendInt = "upX"): halve the distance to 1
    // until the power falls short; where the t quantile overflows first (nu near 0), the
    // smallest n evaluated is returned.
    bool bracketed = false;
    for (int halving = 1; halving <= 40 && !bracketed; ++halving) {
      const double candidate = 1 + std::ldexp(1.0, -halving);
      try {
        if (f(candidate) < 0) {
          low = candidate;
          bracketed = true;
        } else {
          high = candidate;
        }
      } catch (const std::exception&) {
        break;
      }
    }
    if (!bracketed) return high;
  } else {
    do {
      low = high;
      high *= 4;
      if (high > static_cast<double>(kMaxPlannedRuns)) return std::nullopt;
    } while (f(high) < 0);
  }
  std::uintmax_t iterations = 200;
  const auto [a, b] = boost::math::tools::toms748_solve(
      f, low, high, boost::math::tools::eps_tolerance<double>(44), iterations);
  return (a + b) / 2;
}

}  // namespace

std::optional<long long> runs_for_precision(double mean, double sd, double precision,
                                            double confidence) {
  if (!(mean > 0) || !std::isfinite(mean))
    throw StatsError(fmt::format("mean {} is not a finite number > 0", mean));
  check_effect(0, sd);
  if (!(precision > 0) || !std::isfinite(precision))
    throw StatsError(fmt::format("precision {} is not a finite number > 0", precision));
  check_alpha(1 - confidence);
  if (sd == 0) return 2;
  // relative_half_width decreases with n: "power" = -half-width against -precision.
  return smallest_integer_n([&](double n) { return -relative_half_width(mean, sd, n, confidence); },
                            -precision);
}

double relative_half_width(double mean, double sd, double n, double confidence) {
  if (!(n >= 2)) throw StatsError(fmt::format("{} observations: at least 2 are needed", n));
  check_alpha(1 - confidence);
  const boost::math::students_t_distribution<double> t(n - 1);
  return boost::math::quantile(t, (1 + confidence) / 2) * sd / std::sqrt(n) / mean;
}

double two_sample_t_power(double n, double delta, double sd, double alpha, bool strict) {
  if (!(n > 1) || !std::isfinite(n))
    throw StatsError(fmt::format("{} runs per group: more than 1 is needed", n));
  check_effect(delta, sd);
  check_alpha(alpha);
  if (sd == 0) return delta != 0 ? 1 : std::numeric_limits<double>::quiet_NaN();
  const double nu = 2 * std::max(1e-7, n - 1);
  const boost::math::students_t_distribution<double> t(nu);
  const double upper = boost::math::quantile(boost::math::complement(t, alpha / 2));
  return noncentral_t_tails(nu, std::sqrt(n / 2) * std::abs(delta) / sd, upper, strict);
}

std::optional<double> two_sample_t_n(double delta, double sd, double power, double alpha,
                                     bool strict) {
  check_effect(delta, sd);
  check_power(power);
  check_alpha(alpha);
  if (sd == 0 && delta != 0) return 2.0;
  if (delta == 0) return std::nullopt;
  return real_n([&](double n) { return two_sample_t_power(n, delta, sd, alpha, strict); }, power);
}

std::optional<long long> two_sample_t_runs(double delta, double sd, double power, double alpha,
                                           bool strict) {
  check_effect(delta, sd);
  check_power(power);
  check_alpha(alpha);
  if (sd == 0 && delta != 0) return 2;
  if (delta == 0) return std::nullopt;
  return smallest_integer_n(
      [&](double n) { return two_sample_t_power(n, delta, sd, alpha, strict); }, power);
}

double tukey_pair_power(double n, double k, double delta, double sd, double alpha) {
  if (!(n > 1) || !std::isfinite(n))
    throw StatsError(fmt::format("{} runs per group: more than 1 is needed", n));
  if (!(k >= 2) || !std::isfinite(k))
    throw StatsError(fmt::format("a family of {} groups: at least 2 are needed", k));
  check_effect(delta, sd);
  check_alpha(alpha);
  if (sd == 0) return delta != 0 ? 1 : std::numeric_limits<double>::quiet_NaN();
  const double df = k * (n - 1);
  const double critical = studentized_range_quantile(1 - alpha, k, df) / std::sqrt(2.0);
  return noncentral_t_tails(df, std::abs(delta) / (sd * std::sqrt(2 / n)), critical, true);
}

std::optional<double> tukey_pair_n(double k, double delta, double sd, double power, double alpha) {
  check_effect(delta, sd);
  check_power(power);
  if (sd == 0 && delta != 0) return 2.0;
  if (delta == 0) return std::nullopt;
  // From n = 2 up (k(n - 1) >= 2 d.f. for any k, as R's qtukey needs): 2 where it suffices.
  if (tukey_pair_power(2, k, delta, sd, alpha) >= power) return 2.0;
  return real_n([&](double n) { return tukey_pair_power(n, k, delta, sd, alpha); }, power);
}

std::optional<long long> tukey_pair_runs(double k, double delta, double sd, double power,
                                         double alpha) {
  check_effect(delta, sd);
  check_power(power);
  if (sd == 0 && delta != 0) return 2;
  if (delta == 0) return std::nullopt;
  return smallest_integer_n([&](double n) { return tukey_pair_power(n, k, delta, sd, alpha); },
                            power);
}

SimulatedPower simulate_tukey_pair_power(long long n, long long k, double delta, double sd,
                                         double alpha, long long replicates, std::uint64_t seed) {
  if (n < 2) throw StatsError(fmt::format("{} runs per group: at least 2 are needed", n));
  if (k < 2) throw StatsError(fmt::format("a family of {} groups: at least 2 are needed", k));
  if (replicates < 1) throw StatsError(fmt::format("{} replicates: at least 1", replicates));
  check_effect(delta, sd);
  check_alpha(alpha);
  const double df = static_cast<double>(k * (n - 1));
  const double critical = studentized_range_quantile(1 - alpha, static_cast<double>(k), df);
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0, sd);
  std::vector<double> means(static_cast<std::size_t>(k));
  long long rejected = 0;
  for (long long r = 0; r < replicates; ++r) {
    double ss_within = 0;
    for (long long g = 0; g < k; ++g) {
      double sum = 0, sum_sq = 0;
      for (long long i = 0; i < n; ++i) {
        const double x = normal(engine) + (g == 1 ? delta : 0);
        sum += x;
        sum_sq += x * x;
      }
      means[static_cast<std::size_t>(g)] = sum / static_cast<double>(n);
      ss_within += sum_sq - sum * sum / static_cast<double>(n);
    }
    const double q =
        std::abs(means[1] - means[0]) / std::sqrt(ss_within / df / static_cast<double>(n));
    if (q > critical) ++rejected;
  }
  const double p = static_cast<double>(rejected) / static_cast<double>(replicates);
  return {p, std::sqrt(p * (1 - p) / static_cast<double>(replicates))};
}

}  // namespace scalebench::stats
