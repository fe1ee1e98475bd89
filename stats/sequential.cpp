#include "stats/sequential.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

#include "stats/descriptive.hpp"
#include "util/text.hpp"

namespace scalebench::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// sigma is replaced by its one-sided upper confidence bound at 1 - kBoundLevel = 70 %.
constexpr double kBoundLevel = 0.30;

// Per-df values remembered for the last confidence (the simulation asks for them millions of
// times): t_{df, (1 + confidence) / 2} and the variance factor sqrt(df / chi2_{0.30; df}).
struct DfFactors {
  double t = 0;
  double sd_bound = 0;
};

DfFactors df_factors(int df, double confidence) {
  thread_local double cached_confidence = kNaN;
  thread_local std::vector<DfFactors> cache;
  if (confidence != cached_confidence) cache.clear(), cached_confidence = confidence;
  const auto index = static_cast<std::size_t>(df);
  if (index < cache.size() && cache[index].t > 0) return cache[index];
  DfFactors f;
  f.t = boost::math::quantile(
      boost::math::complement(boost::math::students_t(df), (1 - confidence) / 2));
  f.sd_bound = std::sqrt(df / boost::math::quantile(boost::math::chi_squared(df), kBoundLevel));
  if (index < 4096) {
    if (cache.size() <= index) cache.resize(index + 1);
    cache[index] = f;
  }
  return f;
}

struct Moments {
  double mean = kNaN;
  double sd = kNaN;
};

Moments moments_of(const std::vector<double>& values) {
  for (double v : values)
    if (!std::isfinite(v)) throw StatsError(fmt::format("a run's mean is not finite ({})", v));
  Moments m;
  if (values.empty()) return m;
  m.mean = mean(values);
  if (values.size() >= 2) m.sd = *sample_sd(values);
  return m;
}

// The n at which the rule would stop if s, the mean and the factors stayed as they are.
int expected_total(const DfFactors& f, const Moments& m, double precision) {
  const double k = std::pow(f.t * f.sd_bound * m.sd / (precision * m.mean), 2);
  return k > 1e9 ? 1'000'000'000 : static_cast<int>(std::ceil(k));
}

StopDecision decide(const std::vector<double>& run_means, const PrecisionRule& rule,
                    bool exhausted) {
  check_rule(rule);
  const Moments m = moments_of(run_means);
  StopDecision d;
  d.runs = static_cast<int>(run_means.size());
  d.mean = m.mean;
  d.half_width = d.relative_half_width = kNaN;
  const bool at_max = exhausted || d.runs >= rule.max_runs;
  if (d.runs < 2) {
    d.stop = at_max;
    d.reason = at_max ? StopReason::Max : StopReason::None;
    d.expected_more = at_max ? 0 : std::max(rule.min_runs - d.runs, 1);
    return d;
  }
  const double n = d.runs;
  const DfFactors f = df_factors(d.runs - 1, rule.confidence);
  d.half_width = f.t * f.sd_bound * m.sd / std::sqrt(n);
  const bool reached =
      d.runs >= rule.min_runs && m.mean > 0 && d.half_width <= rule.precision * m.mean;
  if (reached) {
    d.stop = true;
    d.reason = StopReason::Precision;
  } else if (at_max) {
    // Stopping at a fixed maximum does not bias the ordinary interval: it is the one reported.
    d.stop = true;
    d.reason = StopReason::Max;
    d.half_width = f.t * m.sd / std::sqrt(n);
  } else {
    const int total = m.mean > 0 ? expected_total(f, m, rule.precision) : rule.max_runs;
    d.expected_more =
        std::clamp(std::max(total, rule.min_runs) - d.runs, 1, std::max(1, rule.max_runs - d.runs));
  }
  d.relative_half_width = m.mean != 0 ? d.half_width / m.mean : kNaN;
  return d;
}

}  // namespace

void check_rule(const PrecisionRule& rule) {
  if (rule.min_runs < 2)
    throw StatsError(fmt::format("min_runs {}: expected at least 2", rule.min_runs));
  if (rule.max_runs < rule.min_runs)
    throw StatsError(
        fmt::format("max_runs {}: expected at least min_runs ({})", rule.max_runs, rule.min_runs));
  if (!(rule.precision > 0 && rule.precision < 1))
    throw StatsError(fmt::format("precision {}: expected a number in (0, 1)", rule.precision));
  if (!(rule.confidence > 0 && rule.confidence < 1))
    throw StatsError(fmt::format("confidence {}: expected a number in (0, 1)", rule.confidence));
}

StopDecision precision_stop(const std::vector<double>& run_means, const PrecisionRule& rule) {
  return decide(run_means, rule, false);
}

StopDecision final_decision(const std::vector<double>& run_means, const PrecisionRule& rule) {
  return decide(run_means, rule, true);
}

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::Precision:
      return "precision";
    case StopReason::Max:
      return "max";
    case StopReason::None:
      break;
  }
  return "";
}

std::string stop_reason_text(const StopDecision& decision, const PrecisionRule& rule) {
  const std::string width = std::isfinite(decision.relative_half_width)
                                ? fmt::format("±{:.1f} %", decision.relative_half_width * 100)
                                : std::string("±n/a");
  switch (decision.reason) {
    case StopReason::Precision:
      return fmt::format("precision reached: {} after {}", width,
                         util::count_of(decision.runs, "run"));
    case StopReason::Max:
      return fmt::format(
          "max {} runs: {}{}", rule.max_runs, width,
          decision.runs < rule.max_runs ? fmt::format(" ({} ok)", decision.runs) : "");
    case StopReason::None:
      break;
  }
  return fmt::format("running: {} after {}, target ±{:g} %", width,
                     util::count_of(decision.runs, "run"), rule.precision * 100);
}

}  // namespace scalebench::stats
