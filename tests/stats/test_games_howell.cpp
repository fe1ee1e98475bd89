// Games-Howell against R (ptukey/qtukey by hand, as rstatix::games_howell_test; see
// scripts/reference/oneway_family_reference.R and tests/data/stats/oneway_family_reference.txt).
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <string>

#include "oneway_family_reference.hpp"
#include "stats/games_howell.hpp"

using scalebench::stats::games_howell;
using scalebench::stats::games_howell_from_summary;
using scalebench::stats::GamesHowellPair;
using scalebench::stats::StatsError;
namespace ref = scalebench::test::oneway;

namespace {

// diff, se, df and q to 1e-10 relative (closed forms; diff to 1e-12 of the data's scale, since
// a difference of two means can be near 0). lower/upper to 1e-7 of the interval's width: R's qtukey
// stops its secant iteration at 1e-4 and inherits ptukey's error. p to 1e-6 relative or 5e-10
// absolute, whichever is looser: R's ptukey (fixed-panel Gauss-Legendre, Copenhaver & Holland 1988)
// is good to ~1e-7 relative in the body but forms the upper tail as 1 - P(Q <= q), with an absolute
// error of ~2e-10 (2.4e-4 relative at p = 6.7e-7 for InsectSprays B-C). Those small p are checked
// tightly against QUADPACK below; our studentized range is checked to 1e-10 in test_tukey.cpp.
void check_against_r(const std::string& name) {
  CAPTURE(name);
  const auto got = games_howell(ref::groups(name));
  const auto rows = ref::records(name, "games_howell");
  REQUIRE(rows.size() == got.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& want = rows[i];
    const GamesHowellPair& pair = got[i];
    CAPTURE(pair.a);
    CAPTURE(pair.b);
    CHECK(pair.a == want[0]);
    CHECK(pair.b == want[1]);
    CHECK(std::abs(pair.diff - want[2]) < 1e-12 * (1 + std::abs(want[2])));
    CHECK(ref::relative_error(pair.se, want[3]) < 1e-10);
    CHECK(ref::relative_error(pair.df, want[4]) < 1e-10);
    CHECK(ref::relative_error(pair.q, want[5]) < 1e-10);
    const double width = want[7] - want[6];
    CHECK(std::abs(pair.lower - want[6]) < 1e-7 * width);
    CHECK(std::abs(pair.upper - want[7]) < 1e-7 * width);
    CHECK(std::abs(pair.p_adjusted - want[8]) < std::max(1e-6 * want[8], 5e-10));
  }
}

}  // namespace

TEST_CASE("Games-Howell matches R (PlantGrowth, warpbreaks, InsectSprays, ties)") {
  check_against_r("plantgrowth");
  check_against_r("warpbreaks_tension");
  check_against_r("insectsprays");  // group variances from 1.5 to 22
  check_against_r("ties");
}

TEST_CASE(
    "Games-Howell p below 1e-4 matches QUADPACK's evaluation of the same integral (real df)") {
  // R's integrate() at rel.tol 1e-13 on P(Q > q) for the pair's non-integer df. Its integrand
  // Phi^(k-1) - (Phi - Phi(z-x))^(k-1) loses about log10(1/p) digits to cancellation: the largest
  // difference, 4.5e-9 at p = 6.7e-7 (B-C), is QUADPACK's, since a 30-digit mpmath 1.3 evaluation
  // of the same double integral (1 - P(R <= q s) at 30 digits, mp.quad on split intervals) gives
  // 6.6544407717786681987e-7 there, which we match to 1e-10. Hence 1e-8 against QUADPACK.
  const auto got = games_howell(ref::groups("insectsprays"));
  const auto rows = ref::records("insectsprays", "games_howell_quadpack");
  REQUIRE(rows.size() == 6);
  for (const auto& want : rows) {
    for (const auto& pair : got) {
      if (pair.a != want[0] || pair.b != want[1]) continue;
      CAPTURE(pair.a);
      CAPTURE(pair.b);
      CHECK(ref::relative_error(pair.p_adjusted, want[2]) < 1e-8);
      if (pair.a == 1 && pair.b == 2)
        CHECK(ref::relative_error(pair.p_adjusted, 6.6544407717786681987e-7) < 1e-10);
    }
  }
}

TEST_CASE("Games-Howell from summary statistics equals the raw-data result") {
  const auto groups = ref::groups("insectsprays");
  const auto raw = games_howell(groups);
  const auto from_summary = games_howell_from_summary(scalebench::stats::summarize(groups));
  REQUIRE(raw.size() == from_summary.size());
  // The raw path summarises the data shifted by their first value (exact at large offsets), so
  // the two agree to rounding, not bit for bit.
  for (std::size_t i = 0; i < raw.size(); ++i) {
    CHECK(raw[i].q == doctest::Approx(from_summary[i].q).epsilon(1e-13));
    CHECK(raw[i].p_adjusted == doctest::Approx(from_summary[i].p_adjusted).epsilon(1e-12));
  }
  SUBCASE("HorovodRunner Table 1: p-values below R's reach stay positive") {
    const auto got = games_howell_from_summary(ref::summaries("table1"));
    REQUIRE(got.size() == 28);
    for (const auto& pair : got) {
      CHECK(pair.p_adjusted > 0);
      CHECK(pair.df > 50);  // between n - 1 = 50 and 2(n - 1) = 100 for equal n
      CHECK(pair.df < 100);
    }
  }
}

TEST_CASE("Games-Howell with two groups equals Welch's t test (two-sided)") {
  // For k = 2, P(Q > q) = 2 P(T_df > q / sqrt 2) and q / sqrt 2 is Welch's t.
  const auto got = games_howell({{1.1, 2.3, 1.9, 3.0}, {4.2, 6.1, 5.0, 7.7, 5.5}});
  REQUIRE(got.size() == 1);
  const double t = got[0].q / std::sqrt(2.0);
  const boost::math::students_t_distribution<double> dist(got[0].df);
  CHECK(ref::relative_error(got[0].p_adjusted,
                            2 * boost::math::cdf(boost::math::complement(dist, t))) < 1e-10);
}

TEST_CASE("Games-Howell edge cases") {
  CHECK_THROWS_AS(games_howell({{1, 2, 3}}), StatsError);
  CHECK_THROWS_AS(games_howell({{1, 2}, {3}}), StatsError);  // n = 1: no variance
  CHECK_THROWS_AS(games_howell({{1, 2}, {3, 4}}, 1.0), StatsError);
  CHECK_THROWS_WITH_AS(games_howell({{1, 2}, {3, 3}, {5, 5}}), doctest::Contains("zero variance"),
                       StatsError);
  SUBCASE("one zero-variance group: df = n_other - 1") {
    const auto got = games_howell({{1, 2, 4}, {5, 5, 5, 5}});
    CHECK(ref::relative_error(got[0].df, 2) < 1e-14);
  }
}
