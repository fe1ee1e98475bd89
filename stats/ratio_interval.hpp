// The confidence interval of a ratio of two independent means, for speed-ups (base mean epoch
// time over a row's): the delta method on the log scale, where the ratio is a difference.
#pragma once

#include "stats/error.hpp"
#include "stats/group_descriptives.hpp"

namespace scalebench::stats {

// A mean with its standard error and the d.f. of that error (n - 1 for a t interval on n
// observations; a Satterthwaite d.f. from a model).
struct MeanWithError {
  double mean = 0;
  double se = 0;
  double df = 0;
};

struct RatioInterval {
  double ratio = 0;  // numerator.mean / denominator.mean
  double df = 0;     // Welch-Satterthwaite; +inf when both errors are 0
  ConfidenceInterval ci;
  // Two-sided p of ratio = 1 from the same t statistic and d.f. (log ratio / its standard
  // error): ci excludes 1 exactly when p < 1 - confidence. 0 or 1 when both errors are 0.
  double p = 1;
};

// log(ratio) -/+ t_{(1+confidence)/2, df} x sqrt(cv_n^2 + cv_d^2), exponentiated, with cv = se /
// mean and df = (cv_n^2 + cv_d^2)^2 / (cv_n^4 / df_n + cv_d^4 / df_d) (Welch 1947; the log
// interval is always positive and asymmetric, as a ratio's should be). Throws StatsError for a
// mean <= 0, a negative or non-finite se, a df <= 0 on a non-zero se, or a confidence outside
// (0, 1).
RatioInterval ratio_interval(const MeanWithError& numerator, const MeanWithError& denominator,
                             double confidence = 0.95);

// log(ratio) -/+ t_{(1+confidence)/2, df} x se_log, exponentiated, with the two-sided p of
// ratio = 1 from the same t: the interval of a log-scale estimate whose standard error and d.f.
// come from elsewhere (ratio_interval's Welch terms, a mixed model's contrast). Throws StatsError
// for a ratio, se_log or df <= 0, or a confidence outside (0, 1).
RatioInterval log_scale_interval(double ratio, double se_log, double df, double confidence);

}  // namespace scalebench::stats
