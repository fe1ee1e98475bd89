// The many-pairs studentized range path (stats/studentized_range_family.hpp: the inner integral
// tabulated once per k under the reference's outer integral) against the exact functions, and the
// 300-group Tukey HSD / Games-Howell families against the exact per-pair computation.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "stats/games_howell.hpp"
#include "stats/studentized_range_detail.hpp"
#include "stats/studentized_range_family.hpp"
#include "stats/tukey.hpp"

namespace stats = scalebench::stats;
using stats::StudentizedRangeFamily;
using stats::detail::RangeSurvivalTable;
using stats::detail::studentized_range_log_survival_reference;
using stats::detail::studentized_range_log_survival_with;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double relative_error(double got, double want) {
  return got == want ? 0 : std::abs(got - want) / std::abs(want);
}

}  // namespace

// Every (k, df) here goes through the table, also where the public functions would not use it, and
// is compared with the reference at its tight tolerance (1e-13), in log space so that tails far
// below the smallest double count too. q runs from the body to p ~ 1e-12 and far beyond (q = 1e12
// is p ~ 1e-12 at df = 1; q = 40 is p ~ 1e-170 at df = inf). Worst found (GCC 12, x86-64): 2.6e-13
// for p > 1e-12, 1.2e-12 for p in (1e-300, 1e-12].
TEST_CASE("studentized range family: the tabulated path equals the reference, tails included") {
  double worst_body = 0;  // relative error of p where p > 1e-12
  double worst_tail = 0;  // absolute error of log p, 1e-300 < p <= 1e-12 (= relative error of p)
  for (const double k : {2.0, 3.0, 10.0, 200.0, 300.0, 1000.0}) {
    const RangeSurvivalTable table(k);
    CHECK(table.worst_check() <= 1);  // every panel met its check when built
    const auto inner = [&table](double x) { return table.log_survival(x); };
    for (const double df : {1.0, 1.37, 3.5, 7.5, 300.0, 1e4, kInf}) {
      for (const double q : {0.5, 2.0, 4.0, 6.0, 9.0, 14.0, 40.0, 1e3, 1e6, 1e12}) {
        CAPTURE(k);
        CAPTURE(df);
        CAPTURE(q);
        const double want = studentized_range_log_survival_reference(q, k, df);
        const double got = studentized_range_log_survival_with(q, k, df, inner);
        REQUIRE(std::isfinite(want));
        if (want > std::log(1e-12)) {
          const double e = relative_error(std::exp(got), std::exp(want));
          CHECK(e <= 1e-9);
          worst_body = std::max(worst_body, e);
        } else if (want > std::log(1e-300)) {
          CHECK(std::abs(got - want) <= 1e-9);
          worst_tail = std::max(worst_tail, std::abs(got - want));
        } else {  // below doubles: log p itself to 1e-13 relative (|log p| up to 1e12 here)
          CHECK(std::abs(got - want) <= 1e-13 * std::abs(want));
        }
      }
    }
  }
  MESSAGE("worst relative error of p > 1e-12: " << worst_body
                                                << "; of p in (1e-300, 1e-12]: " << worst_tail);
  CHECK(worst_body <= 1e-11);  // the level measured, with margin: a regression shows here first
}

TEST_CASE("studentized range family: survival and quantile equal the public functions") {
  for (const double k : {3.0, 300.0}) {
    const StudentizedRangeFamily family(k);
    for (const double df : {1.0, 2.5, 4.0, 12.0, 300.0}) {
      CAPTURE(k);
      CAPTURE(df);
      CHECK(family.tabulated(df) == (k > 200 || df < 5));
      for (const double q : {0.0, 1.0, 5.0, 8.0, 30.0, kInf}) {
        CAPTURE(q);
        const double want = stats::studentized_range_survival(q, k, df);
        CHECK(relative_error(family.survival(q, df), want) <= 1e-9);
      }
      const double critical = stats::studentized_range_quantile(0.95, k, df);
      CHECK(relative_error(family.quantile(0.95, df), critical) <= 1e-12);
      // A nearby guess (as Games-Howell passes its neighbour's value) finds the same root.
      CHECK(relative_error(family.quantile(0.95, df, critical * 1.01), critical) <= 1e-12);
      CHECK(relative_error(family.quantile(0.3, df),
                           stats::studentized_range_quantile(0.3, k, df)) <= 1e-12);
    }
  }
  CHECK(std::isnan(StudentizedRangeFamily(300).survival(std::nan(""), 3)));
  CHECK_THROWS_AS(StudentizedRangeFamily(1.5), stats::StatsError);
}

// The case of issue 23 (item 8): 300 groups of 2 runs, 44,850 pairs, through the library API; a
// sample of pairs is recomputed with one exact call each, as before the families.
TEST_CASE("studentized range family: 300 groups x 2 runs equal the exact per-pair computation") {
  std::mt19937_64 rng(7);
  std::vector<std::vector<double>> groups(300);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    // Means 0.02 apart in 16 levels, sd 0.05: q up to ~9, p from 1 down to ~1e-5.
    std::normal_distribution<double> normal(1 + 0.02 * static_cast<double>(g % 16), 0.05);
    groups[g] = {normal(rng), normal(rng)};
  }
  const double k = 300;
  const auto tukey = stats::tukey_hsd(groups);
  const auto games_howell = stats::games_howell(groups);
  REQUIRE(tukey.size() == 44850);
  REQUIRE(games_howell.size() == 44850);
  const double df = 300;  // N - k
  const double critical = stats::studentized_range_quantile(0.95, k, df);
  double worst = 0;
  double smallest_p = 1;
  for (std::size_t i = 0; i < tukey.size(); i += 1499) {  // 30 pairs spread over the family
    CAPTURE(i);
    const auto& pair = tukey[i];
    const double p = stats::studentized_range_survival(pair.q, k, df);
    CHECK(relative_error(pair.p_adjusted, p) <= 1e-9);
    worst = std::max(worst, relative_error(pair.p_adjusted, p));
    smallest_p = std::min(smallest_p, p);
    const double se = (pair.upper - pair.lower) / (2 * critical);
    CHECK(relative_error(pair.upper, pair.diff + critical * se) <= 1e-9);
  }
  for (std::size_t i = 0; i < games_howell.size(); i += 4483) {  // 11 pairs (each exact: ~30 ms)
    CAPTURE(i);
    const auto& pair = games_howell[i];
    const double p = stats::studentized_range_survival(pair.q, k, pair.df);
    CHECK(relative_error(pair.p_adjusted, p) <= 1e-9);
    worst = std::max(worst, relative_error(pair.p_adjusted, p));
    const double pair_critical = stats::studentized_range_quantile(0.95, k, pair.df);
    CHECK(relative_error(pair.upper, pair.diff + pair_critical * pair.se) <= 1e-9);
    CHECK(relative_error(pair.lower, pair.diff - pair_critical * pair.se) <= 1e-9);
  }
  MESSAGE("300 groups: worst relative p difference " << worst << ", smallest sampled Tukey p "
                                                     << smallest_p);
  // The sample must reach into the small p-values, not only p ~ 1.
  CHECK(smallest_p < 1e-2);
}
