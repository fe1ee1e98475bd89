// Welch's ANOVA against R's oneway.test(var.equal = FALSE)
// (tests/data/stats/oneway_family_reference.txt, written by
// scripts/reference/oneway_family_reference.R).
#include <doctest/doctest.h>

#include <string>

#include "oneway_family_reference.hpp"
#include "stats/welch_anova.hpp"

using scalebench::stats::StatsError;
using scalebench::stats::welch_anova;
using scalebench::stats::welch_anova_from_summary;
using scalebench::stats::WelchAnova;
namespace ref = scalebench::test::oneway;

namespace {

// F and df to 1e-10 relative: both sides evaluate the same closed form in double precision and
// agree to ~1e-14. p to 1e-9: it amplifies F's and df2's relative error by |d log p / d log F|.
void check(const WelchAnova& got, const std::vector<double>& want) {
  CHECK(ref::relative_error(got.f, want[0]) < 1e-10);
  CHECK(got.df_between == want[1]);
  CHECK(ref::relative_error(got.df_within, want[2]) < 1e-10);
  CHECK(ref::relative_error(got.p, want[3]) < 1e-9);
}

}  // namespace

TEST_CASE("Welch's ANOVA matches R's oneway.test(var.equal = FALSE)") {
  for (const std::string name : {"plantgrowth", "warpbreaks_tension", "insectsprays", "ties"}) {
    CAPTURE(name);
    check(welch_anova(ref::groups(name)), ref::record(name, "welch"));
  }
}

TEST_CASE("Welch's ANOVA from summary statistics") {
  SUBCASE("PlantGrowth's n/mean/sd give what the raw data give") {
    check(welch_anova_from_summary(ref::summaries("plantgrowth_summary")),
          ref::record("plantgrowth", "welch"));
  }
  SUBCASE("HorovodRunner Table 1: unequal SDs (1.00 to 4.32), p ~ 6e-144 without underflow") {
    const WelchAnova got = welch_anova_from_summary(ref::summaries("table1"));
    CHECK(got.p > 0);
    check(got, ref::record("table1", "summary_welch"));
  }
}

TEST_CASE("Welch's ANOVA edge cases") {
  CHECK_THROWS_AS(welch_anova({{1, 2, 3}}), StatsError);
  CHECK_THROWS_AS(welch_anova({}), StatsError);
  CHECK_THROWS_AS(welch_anova({{1, 2}, {}}), StatsError);
  CHECK_THROWS_AS(welch_anova({{1, 2}, {3}}), StatsError);  // n = 1: no variance
  CHECK_THROWS_AS(welch_anova({{1, 2}, {3, std::numeric_limits<double>::quiet_NaN()}}), StatsError);
  SUBCASE("zero variance in a group is an error that says so") {
    CHECK_THROWS_WITH_AS(welch_anova({{1, 2, 3}, {5, 5, 5}}), doctest::Contains("zero variance"),
                         StatsError);
  }
  SUBCASE("equal means: F = 0, p = 1") {
    const WelchAnova got = welch_anova({{1, 3}, {0, 4}});
    CHECK(got.f == 0);
    CHECK(got.p == 1);
  }
}
