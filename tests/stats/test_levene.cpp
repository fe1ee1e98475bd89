// Levene (mean-centred) and Brown-Forsythe (median-centred) against R (the ANOVA of absolute
// deviations that car::leveneTest computes; tests/data/stats/oneway_family_reference.txt).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "oneway_family_reference.hpp"
#include "stats/levene.hpp"

using scalebench::stats::brown_forsythe_test;
using scalebench::stats::levene_test;
using scalebench::stats::LeveneTest;
using scalebench::stats::StatsError;
namespace ref = scalebench::test::oneway;

namespace {

// F to 1e-10 relative (R fits lm by QR, we take two-pass sums: ~1e-14 apart); p to 1e-9.
void check(const LeveneTest& got, const std::vector<double>& want) {
  CHECK(ref::relative_error(got.f, want[0]) < 1e-10);
  CHECK(got.df_between == want[1]);
  CHECK(got.df_within == want[2]);
  CHECK(ref::relative_error(got.p, want[3]) < 1e-9);
}

}  // namespace

TEST_CASE("Levene and Brown-Forsythe match R") {
  for (const std::string name : {"plantgrowth", "warpbreaks_tension", "insectsprays", "ties"}) {
    CAPTURE(name);
    check(levene_test(ref::groups(name)), ref::record(name, "levene_mean"));
    check(brown_forsythe_test(ref::groups(name)), ref::record(name, "levene_median"));
  }
}

TEST_CASE("Levene edge cases") {
  CHECK_THROWS_AS(levene_test({{1, 2, 3}}), StatsError);
  CHECK_THROWS_AS(brown_forsythe_test({{1, 2}, {}}), StatsError);
  CHECK_THROWS_AS(levene_test({{1}, {2}}), StatsError);  // N - k = 0
  SUBCASE("the same spread in every group: F = 0, p = 1") {
    const LeveneTest got = levene_test({{1, 3, 5}, {10, 12, 14}});
    CHECK(got.f == 0);
    CHECK(got.p == 1);
  }
  SUBCASE("no spread anywhere: undefined (R: NaN)") {
    CHECK_THROWS_WITH_AS(brown_forsythe_test({{1, 1}, {2, 2}}), doctest::Contains("undefined"),
                         StatsError);
  }
  SUBCASE("two runs per group: undefined, never F = 4.5e30 (car::leveneTest's rounding)") {
    // |x - mean| is the same for both values of a pair, whatever they are.
    const std::vector<std::vector<double>> pairs = {{0.51, 0.55}, {0.62, 0.70}, {0.81, 0.80}};
    CHECK_THROWS_WITH_AS(levene_test(pairs), doctest::Contains("at most 2 observations"),
                         StatsError);
    CHECK_THROWS_WITH_AS(brown_forsythe_test(pairs), doctest::Contains("at most 2 observations"),
                         StatsError);
    // One group of three makes it defined again.
    CHECK(std::isfinite(levene_test({{0.51, 0.55, 0.50}, {0.62, 0.70}, {0.81, 0.80}}).f));
  }
}
