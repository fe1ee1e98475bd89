// Planning from a pilot: how many runs a cell needs for a precision, and how many per cell to
// detect a difference, under the two-sample t-test (R's power.t.test) and under the Tukey-Kramer
// family the report uses. Formulas, references and their limits: docs/statistics.md, "Planning
// from a pilot". Every function throws StatsError for arguments outside the stated domain.
#pragma once

#include <cstdint>
#include <optional>

#include "stats/error.hpp"

namespace scalebench::stats {

// The most runs per cell a search considers; a target not reached by then is absent.
inline constexpr long long kMaxPlannedRuns = 1000000;

// Fixed-sample precision (e.g. Montgomery, Design and Analysis of Experiments, 2017, s. 2.4): the
// smallest n >= 2 with t_{(1+confidence)/2, n-1} * sd / sqrt(n) <= precision * mean, i.e. the
// confidence interval of the mean within +-precision of it. mean > 0, sd >= 0, precision > 0,
// confidence in (0, 1); sd == 0 gives 2. Absent beyond kMaxPlannedRuns.
std::optional<long long> runs_for_precision(double mean, double sd, double precision,
                                            double confidence = 0.95);
// The interval's half-width relative to the mean at n observations: t * sd / sqrt(n) / mean.
double relative_half_width(double mean, double sd, double n, double confidence = 0.95);

// Power of the two-sided two-sample t-test with n per group (real n > 1), true difference delta
// and common SD sd at level alpha, exactly as R's power.t.test(n, delta, sd, sig.level,
// type = "two.sample") computes it (Cohen 1988, ch. 2; noncentral t, Boost.Math): nu =
// 2 * max(1e-7, n - 1), ncp = sqrt(n / 2) * |delta| / sd, power = P(T' > t_{1-alpha/2, nu});
// with `strict` (R's strict = TRUE) P(T' < -t_{1-alpha/2, nu}) is added. R's default
// (strict = FALSE) leaves out that lower region. sd == 0 gives 1 for delta != 0.
double two_sample_t_power(double n, double delta, double sd, double alpha = 0.05,
                          bool strict = false);
// R's power.t.test(delta, sd, sig.level, power)$n: the real n > 1 at which two_sample_t_power
// equals `power` (solved to ~1e-13 relative; R's uniroot stops at its tol, ~1e-4 by default).
// Below 2 where n = 2 already has that power (R's uniroot extends its interval down too). Absent
// when no n up to kMaxPlannedRuns reaches it (delta == 0 never does); 2 for sd == 0 (every n
// has power 1).
std::optional<double> two_sample_t_n(double delta, double sd, double power, double alpha = 0.05,
                                     bool strict = false);
// Runs per group: the smallest integer n >= 2 with two_sample_t_power(n) >= power.
std::optional<long long> two_sample_t_runs(double delta, double sd, double power,
                                           double alpha = 0.05, bool strict = false);

// Power of the Tukey-Kramer test for one pair of a family of k groups (real k >= 2) of n runs each
// (real n > 1), the pair's means differing by delta, every group with SD sd (Tukey 1953; Kramer
// 1956). The pair is rejected when |diff| / sqrt(MS_within / n) > qtukey(1 - alpha, k, k(n - 1)).
// As diff / sqrt(2 MS_within / n) is noncentral t with k(n - 1) d.f. and ncp |delta| /
// (sd sqrt(2 / n)), the power is exact: P(|T'| > qtukey(1 - alpha, k, k(n - 1)) / sqrt(2)), both
// tails. k == 2 is the strict two-sample t-test. sd == 0 gives 1 for delta != 0.
double tukey_pair_power(double n, double k, double delta, double sd, double alpha = 0.05);
// The real n >= 2 at which tukey_pair_power equals `power` (2 where n = 2 already has it), and
// the smallest integer n >= 2 with at least that power; absent as for the two-sample t.
std::optional<double> tukey_pair_n(double k, double delta, double sd, double power,
                                   double alpha = 0.05);
std::optional<long long> tukey_pair_runs(double k, double delta, double sd, double power,
                                         double alpha = 0.05);

// The same power by simulation, the check of the formula above: `replicates` experiments of k
// groups of n (integer) normal runs, group 1 shifted by delta, each tested as the report does
// (pooled MS_within, qtukey); the fraction rejected and its standard error sqrt(p(1 - p) / R).
struct SimulatedPower {
  double power = 0;
  double standard_error = 0;
};
SimulatedPower simulate_tukey_pair_power(long long n, long long k, double delta, double sd,
                                         double alpha, long long replicates, std::uint64_t seed);

}  // namespace scalebench::stats
