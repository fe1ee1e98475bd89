// One-way ANOVA against R's aov (tests/data/stats/r_reference.txt, written by
// scripts/reference/stats_reference.R) and against exact rational arithmetic.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "r_reference.hpp"
#include "stats/anova.hpp"
#include "stats/factorial_anova.hpp"

using scalebench::stats::one_way_anova;
using scalebench::stats::OneWayAnova;
using scalebench::stats::StatsError;
using scalebench::test::r_groups;
using scalebench::test::r_records;

namespace {

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

// SS and F to 1e-10 relative: both sides sum well-conditioned data in double precision (R by QR,
// we by shifted two-pass sums), so they agree to ~1e-13; 1e-10 leaves room for compilers.
// p to 1e-9: p = P(F > f) amplifies F's relative error by |d log p / d log F| (about 600 for the
// Table 1 case at p ~ 1e-258).
void check_against_r(const std::string& name) {
  CAPTURE(name);
  const OneWayAnova got = one_way_anova(r_groups(name));
  const auto rows = r_records(name, "anova");
  REQUIRE(rows.size() == 1);
  const auto& want = rows[0].numbers;
  CHECK(relative_error(got.ss_between, want[0]) < 1e-10);
  CHECK(relative_error(got.ss_within, want[1]) < 1e-10);
  CHECK(got.df_between == want[2]);
  CHECK(got.df_within == want[3]);
  CHECK(relative_error(got.f, want[4]) < 1e-10);
  CHECK(relative_error(got.p, want[5]) < 1e-9);
}

}  // namespace

TEST_CASE("one-way ANOVA matches R's aov on warpbreaks, PlantGrowth and an unbalanced design") {
  check_against_r("warpbreaks_tension");
  check_against_r("warpbreaks_wool");
  check_against_r("plantgrowth");
  check_against_r("unbalanced");
}

TEST_CASE(
    "a p-value near 1e-258 does not underflow (HorovodRunner Table 1 rebuilt from its means and "
    "SDs)") {
  // 8 groups of 51 with each group's published mean and SD exactly; d.f. (7, 400).
  const OneWayAnova got = one_way_anova(r_groups("table1"));
  CHECK(got.df_between == 7);
  CHECK(got.df_within == 400);
  CHECK(got.f == doctest::Approx(1119.95).epsilon(1e-5));
  CHECK(got.p > 0);
  CHECK(got.p == doctest::Approx(2.6e-258).epsilon(0.01));
  check_against_r("table1");
}

TEST_CASE("values near 1e12 varying by 0.1-sized steps keep an exact F") {
  // Offsets are dyadic, so every observation 1e12 + offset is an exact double. By hand:
  // group means 1/4, 1/2, 1/4, grand mean 1/3; SS_between = 4 (1/144 + 1/36 + 1/144) = 1/6;
  // SS_within = 3 * (1/64 + 1/64) = 3/32; F = (1/6 / 2) / (3/32 / 9) = 8 exactly; and for
  // d.f. (2, 9), P(F > f) = (1 + 2f/9)^(-9/2) = (3/5)^9 = 19683/1953125. R's aov on the raw values
  // gives F = 8.0205 here (its QR loses digits against the 1e12 intercept), so this case is
  // checked against the exact rationals, not against R.
  const double base = 1e12;
  const std::vector<std::vector<double>> groups = {
      {base + 0.125, base + 0.25, base + 0.375, base + 0.25},
      {base + 0.5, base + 0.375, base + 0.625, base + 0.5},
      {base + 0.25, base + 0.375, base + 0.25, base + 0.125}};
  const OneWayAnova got = one_way_anova(groups);
  CHECK(relative_error(got.ss_between, 1.0 / 6) < 1e-14);
  CHECK(relative_error(got.ss_within, 3.0 / 32) < 1e-14);
  CHECK(relative_error(got.f, 8.0) < 1e-14);
  CHECK(relative_error(got.p, 19683.0 / 1953125) < 1e-13);
  // The same offsets without the 1e12 give the same answer, in R too.
  check_against_r("near1e12_offsets");
}

TEST_CASE("one-way ANOVA edge cases") {
  SUBCASE("fewer than two groups") {
    CHECK_THROWS_AS(one_way_anova({}), StatsError);
    CHECK_THROWS_AS(one_way_anova({{1, 2, 3}}), StatsError);
  }
  SUBCASE("an empty group") { CHECK_THROWS_AS(one_way_anova({{1, 2}, {}}), StatsError); }
  SUBCASE("no residual degrees of freedom (N - k < 1)") {
    CHECK_THROWS_AS(one_way_anova({{1}, {2}}), StatsError);
    CHECK_NOTHROW(one_way_anova({{1}, {2, 3}}));
  }
  SUBCASE("a non-finite observation") {
    CHECK_THROWS_AS(one_way_anova({{1, std::nan("")}, {2, 3}}), StatsError);
    CHECK_THROWS_AS(one_way_anova({{1, 2}, {std::numeric_limits<double>::infinity(), 3}}),
                    StatsError);
  }
  SUBCASE("no within-group variance, different means: F = inf, p = 0") {
    const OneWayAnova got = one_way_anova({{5, 5, 5}, {7, 7}});
    CHECK(got.ss_within == 0);
    CHECK(std::isinf(got.f));
    CHECK(got.p == 0);
  }
  SUBCASE("every observation equal: F and p are NaN, as in R") {
    const OneWayAnova got = one_way_anova({{3, 3}, {3, 3, 3}});
    CHECK(std::isnan(got.f));
    CHECK(std::isnan(got.p));
  }
  SUBCASE("equal means: F = 0, p = 1") {
    const OneWayAnova got = one_way_anova({{1, 3}, {0, 4}});
    CHECK(got.f == 0);
    CHECK(got.p == 1);
  }
}

TEST_CASE("one-way and factorial ANOVA of values whose squares overflow say so") {
  // 1e200 seconds: the sums of squares are inf, and Boost's F distribution complained of a NaN
  // parameter instead.
  const std::vector<std::vector<double>> huge = {{1e200, 2e200}, {3e200, 4e200}};
  CHECK_THROWS_WITH_AS(scalebench::stats::one_way_anova(huge),
                       doctest::Contains("the sums of squares overflow a double"),
                       scalebench::stats::StatsError);
  CHECK_THROWS_WITH_AS(
      scalebench::stats::factorial_anova(
          {1e200, 2e200, 3e200, 4e200, 5e200, 6e200, 7e200, 8e200},
          {{"a", "a", "b", "b", "a", "a", "b", "b"}, {"x", "x", "x", "x", "y", "y", "y", "y"}},
          {"f", "g"}),
      doctest::Contains("the sums of squares overflow a double"), scalebench::stats::StatsError);
}
