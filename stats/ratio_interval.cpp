#include "stats/ratio_interval.hpp"

#include <fmt/format.h>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

namespace scalebench::stats {

RatioInterval ratio_interval(const MeanWithError& numerator, const MeanWithError& denominator,
                             double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw StatsError(fmt::format("confidence {} is not in (0, 1)", confidence));
  for (const MeanWithError* m : {&numerator, &denominator}) {
    if (!(m->mean > 0) || !std::isfinite(m->mean))
      throw StatsError(fmt::format("a ratio interval needs positive means, not {}", m->mean));
    if (!(m->se >= 0) || !std::isfinite(m->se))
      throw StatsError(fmt::format("standard error {} is not a finite non-negative number", m->se));
    if (m->se > 0 && !(m->df > 0))
      throw StatsError(fmt::format("d.f. {} of a standard error is not positive", m->df));
  }
  const double a = std::pow(numerator.se / numerator.mean, 2);
  const double b = std::pow(denominator.se / denominator.mean, 2);
  RatioInterval out;
  out.ratio = numerator.mean / denominator.mean;
  const double variance = a + b;
  if (variance == 0) {
    out.df = std::numeric_limits<double>::infinity();
    out.ci = {out.ratio, out.ratio};
    out.p = out.ratio == 1 ? 1.0 : 0.0;
    return out;
  }
  double denominator_df = 0;
  if (a > 0) denominator_df += a * a / numerator.df;
  if (b > 0) denominator_df += b * b / denominator.df;
  out.df = variance * variance / denominator_df;
  return log_scale_interval(out.ratio, std::sqrt(variance), out.df, confidence);
}

RatioInterval log_scale_interval(double ratio, double se_log, double df, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw StatsError(fmt::format("confidence {} is not in (0, 1)", confidence));
  if (!(ratio > 0) || !(se_log > 0) || !(df > 0))
    throw StatsError("a log-scale interval needs a positive ratio, standard error and d.f.");
  RatioInterval out;
  out.ratio = ratio;
  out.df = df;
  const double half = students_t_quantile((1 + confidence) / 2, df) * se_log;
  const double log_ratio = std::log(ratio);
  out.ci = {std::exp(log_ratio - half), std::exp(log_ratio + half)};
  // The same statistic tests ratio = 1, so the interval excludes 1 exactly when p < 1 - confidence.
  const double statistic = std::abs(log_ratio) / se_log;
  out.p =
      std::isinf(df)
          ? 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), statistic))
          : 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(df), statistic));
  return out;
}

}  // namespace scalebench::stats
