// Precision-driven repetitions: when a cell has enough runs for its mean to be known to a given
// relative precision (docs/statistics.md, "Precision-driven repetitions").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

// Runs until the interval of the mean has a half-width of at most `precision` x the mean, with at
// least min_runs and at most max_runs runs.
struct PrecisionRule {
  int min_runs = 3;
  int max_runs = 20;
  double precision = 0.02;  // relative half-width, in (0, 1)
  double confidence = 0.95;
  bool operator==(const PrecisionRule&) const = default;
};

enum class StopReason { None, Precision, Max };

struct StopDecision {
  bool stop = false;
  StopReason reason = StopReason::None;
  int runs = 0;
  double mean = 0;  // NaN without runs
  // The interval's half-width: the rule's (sigma at its upper bound) while running and when the
  // precision is reached, the ordinary t interval's when stopped by max; NaN for fewer than two.
  double half_width = 0;
  double relative_half_width = 0;  // half_width / mean; NaN for fewer than two runs
  // The further runs the rule expects before it stops (0 once stopped; at most max - runs), for
  // an ETA.
  int expected_more = 0;
};

// Throws StatsError naming the field: min_runs < 2, max_runs < min_runs, precision outside (0, 1)
// or confidence outside (0, 1).
void check_rule(const PrecisionRule& rule);

// Whether a cell with these per-run means (its ok runs, in order) has run enough. A sequential
// fixed-width rule for a relative half-width (Chow & Robbins 1965, Ann. Math. Statist. 36:457;
// Nadas 1969, Ann. Math. Statist. 40:667) with Student's t quantile and sigma at its one-sided
// 70 % upper confidence bound, so that stopping on a small s does not cost coverage:
//   stop at the first n >= min_runs with  t_{n-1} u_n s_n / sqrt(n) <= precision * mean_n,
//   u_n = sqrt((n - 1) / chi2_{0.30; n-1}),
// else at max_runs (then the ordinary t interval). Throws StatsError only for an invalid rule or
// a non-finite value.
StopDecision precision_stop(const std::vector<double>& run_means, const PrecisionRule& rule);

// The same decision for a cell that can get no further run (its repetitions are used up, some
// without an ok run): the precision if reached, else stopped by max.
StopDecision final_decision(const std::vector<double>& run_means, const PrecisionRule& rule);

// Why a stopped cell stopped, for tables and progress: "precision reached: ±1.7 % after 5 runs",
// "max 20 runs: ±3.1 %" (with "(18 ok)" when some of its repetitions have no ok run); "running"
// for a cell not stopped. "±n/a" where there is no interval (fewer than two runs).
std::string stop_reason_text(const StopDecision& decision, const PrecisionRule& rule);
// "precision" or "max" (JSON's stop_reason), "" for StopReason::None.
std::string_view stop_reason_name(StopReason reason);

}  // namespace scalebench::stats
