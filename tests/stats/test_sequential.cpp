#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "stats/sequential.hpp"
#include "stats/sequential_simulation.hpp"

using scalebench::stats::final_decision;
using scalebench::stats::Noise;
using scalebench::stats::precision_stop;
using scalebench::stats::PrecisionRule;
using scalebench::stats::simulate_precision_rule;
using scalebench::stats::SimulationSetting;
using scalebench::stats::StatsError;
using scalebench::stats::StopReason;

namespace {
const PrecisionRule kRule{3, 12, 0.05};
}

TEST_CASE("precision rule: fewer than min runs go on") {
  const auto none = precision_stop({}, kRule);
  CHECK_FALSE(none.stop);
  CHECK(none.reason == StopReason::None);
  CHECK(none.expected_more == 3);
  CHECK(std::isnan(none.half_width));
  // Two identical runs would be precise, but min is 3.
  const auto two = precision_stop({10, 10}, kRule);
  CHECK_FALSE(two.stop);
  CHECK(two.half_width == 0);
  CHECK(two.expected_more == 1);
}

TEST_CASE("precision rule: stops at min when the runs agree") {
  // mean 10, s = 0.05: t_2 = 4.302653, u_3 = sqrt(2 / chi2_{0.30;2}) = sqrt(2 / 0.7133499),
  // half-width = 4.302653 * 1.674442 * 0.05 / sqrt(3) = 0.2079742 (R: qt(0.975, 2) *
  // sqrt(2 / qchisq(0.3, 2)) * 0.05 / sqrt(3)).
  const auto d = precision_stop({9.95, 10.0, 10.05}, kRule);
  CHECK(d.stop);
  CHECK(d.reason == StopReason::Precision);
  CHECK(d.runs == 3);
  CHECK(d.mean == doctest::Approx(10).epsilon(1e-14));
  CHECK(d.half_width == doctest::Approx(0.2079741564).epsilon(1e-9));
  CHECK(d.relative_half_width == doctest::Approx(0.02079741564).epsilon(1e-9));
  CHECK(d.expected_more == 0);
}

TEST_CASE("precision rule: a noisy cell goes on and expects more runs") {
  // mean 10, s = 1 (CV 10 %): t_2 u_3 s / sqrt(3) = 4.1595 > 0.5; at that s the rule expects
  // (t_2 u_3 s / (0.05 * 10))^2 = 207.6 runs, clamped to max: 9 more.
  const auto d = precision_stop({9, 10, 11}, kRule);
  CHECK_FALSE(d.stop);
  CHECK(d.reason == StopReason::None);
  CHECK(d.relative_half_width == doctest::Approx(0.4159483129).epsilon(1e-9));
  CHECK(d.expected_more == 9);
}

TEST_CASE("precision rule: max stops with the ordinary t interval") {
  std::vector<double> runs;
  for (int i = 0; i < 12; ++i) runs.push_back(i % 2 == 0 ? 8 : 12);  // mean 10, s = 2.0889
  const auto d = precision_stop(runs, kRule);
  CHECK(d.stop);
  CHECK(d.reason == StopReason::Max);
  // t_11 = 2.200985; s = sqrt(48 / 11) = 2.088932; t s / sqrt(12) = 1.327244.
  CHECK(d.half_width == doctest::Approx(1.32724399).epsilon(1e-8));
  // A cell whose repetitions are used up (failed runs) stops by max with fewer runs.
  const auto f = final_decision({8, 12, 8, 12}, kRule);
  CHECK(f.stop);
  CHECK(f.reason == StopReason::Max);
  CHECK(f.runs == 4);
  const auto one = final_decision({10}, kRule);
  CHECK(one.reason == StopReason::Max);
  CHECK(std::isnan(one.half_width));
}

TEST_CASE("precision rule: bad rules and values are refused naming the field") {
  CHECK_THROWS_WITH_AS(precision_stop({1, 2, 3}, {1, 12, 0.05}), "min_runs 1: expected at least 2",
                       StatsError);
  CHECK_THROWS_WITH_AS(precision_stop({1, 2, 3}, {3, 2, 0.05}),
                       "max_runs 2: expected at least min_runs (3)", StatsError);
  CHECK_THROWS_WITH_AS(precision_stop({1, 2, 3}, {3, 12, 0}),
                       "precision 0: expected a number in (0, 1)", StatsError);
  CHECK_THROWS_WITH_AS(precision_stop({1, 2, 3}, {3, 12, 1}),
                       "precision 1: expected a number in (0, 1)", StatsError);
  CHECK_THROWS_AS(precision_stop({1, NAN, 3}, kRule), StatsError);
}

TEST_CASE("precision rule simulation: coverage holds at CV 8 percent log-normal") {
  // The reduced version of scripts/stats/simulate-precision-rule.sh (100 000 cells per setting
  // there): 2 000 cells, the setting closest to the bound. Deterministic for the seed.
  SimulationSetting setting;
  setting.noise = Noise::LogNormal;
  setting.cv = 0.08;
  setting.rule = {3, 20, 0.02};
  setting.cells = 2000;
  setting.seed = 7;
  const auto r = simulate_precision_rule(setting);
  CHECK(r.coverage >= 0.93);
  CHECK(r.mean_runs > 19);
  CHECK(r.p95_runs == 20);
  CHECK(r.stopped_by_max > 0.95);
  // Twice the same: the stream is the same on every standard library.
  const auto again = simulate_precision_rule(setting);
  CHECK(again.coverage == r.coverage);
  CHECK(again.mean_runs == r.mean_runs);
}
