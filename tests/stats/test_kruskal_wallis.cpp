// Kruskal-Wallis against R's kruskal.test (tests/data/stats/oneway_family_reference.txt, written by
// scripts/reference/oneway_family_reference.R).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "oneway_family_reference.hpp"
#include "stats/kruskal_wallis.hpp"

using scalebench::stats::kruskal_wallis;
using scalebench::stats::KruskalWallis;
using scalebench::stats::StatsError;
namespace ref = scalebench::test::oneway;

TEST_CASE("Kruskal-Wallis matches R's kruskal.test, ties included") {
  // H to 1e-10 relative: mid-ranks and rank sums are exact half-integers on both sides; R forms
  // sum R_i^2/n_i - 3(N+1), we the centred sum, which differ by rounding only (~1e-15).
  // p to 1e-9 relative (chi-squared complement on both sides).
  // warpbreaks, InsectSprays and "ties" (4 distinct values in 17) all exercise the tie correction.
  for (const std::string name : {"plantgrowth", "warpbreaks_tension", "insectsprays", "ties"}) {
    CAPTURE(name);
    const KruskalWallis got = kruskal_wallis(ref::groups(name));
    const auto want = ref::record(name, "kruskal");
    CHECK(ref::relative_error(got.h, want[0]) < 1e-10);
    CHECK(got.df == want[1]);
    CHECK(ref::relative_error(got.p, want[2]) < 1e-9);
  }
}

TEST_CASE("Kruskal-Wallis by hand: no ties, complete separation") {
  // Ranks {1,2} {3,4} {5,6}: rank means 1.5, 3.5, 5.5 about 3.5, so
  // H = 12/(6*7) * 2 * (4 + 0 + 4) = 32/7, p = exp(-H/2) for 2 d.f.
  const KruskalWallis got = kruskal_wallis({{0.1, 0.2}, {1.5, 1.7}, {9, 10}});
  CHECK(ref::relative_error(got.h, 32.0 / 7) < 1e-15);
  CHECK(ref::relative_error(got.p, std::exp(-16.0 / 7)) < 1e-14);
}

TEST_CASE("Kruskal-Wallis: a far-separated design keeps a tiny p") {
  // 4 groups of n = 100, completely separated: rank means n g + (n+1)/2 about (4n+1)/2, so
  // H = 12/(N(N+1)) * n * n^2 (9/4 + 1/4 + 1/4 + 9/4) = 15 n^2 / (4n + 1) = 150000/401, and for
  // 3 d.f. P(chi2 > h) = erfc(sqrt(h/2)) + sqrt(2h/pi) exp(-h/2) ~ 1e-79.
  const std::size_t n = 100;
  std::vector<std::vector<double>> groups(4);
  for (std::size_t g = 0; g < 4; ++g) {
    for (std::size_t i = 0; i < n; ++i) groups[g].push_back(static_cast<double>(g * 1000 + i));
  }
  const KruskalWallis got = kruskal_wallis(groups);
  const double h = 150000.0 / 401;
  CHECK(ref::relative_error(got.h, h) < 1e-13);
  const double p =
      std::erfc(std::sqrt(h / 2)) + std::sqrt(2 * h / 3.14159265358979323846) * std::exp(-h / 2);
  CHECK(p < 1e-75);
  CHECK(ref::relative_error(got.p, p) < 1e-11);
}

TEST_CASE("Kruskal-Wallis edge cases") {
  CHECK_THROWS_AS(kruskal_wallis({}), StatsError);
  CHECK_THROWS_AS(kruskal_wallis({{1, 2, 3}}), StatsError);
  CHECK_THROWS_AS(kruskal_wallis({{1, 2}, {}}), StatsError);
  CHECK_THROWS_AS(kruskal_wallis({{1, std::numeric_limits<double>::quiet_NaN()}, {2}}), StatsError);
  CHECK_THROWS_WITH_AS(kruskal_wallis({{3, 3}, {3, 3, 3}}), doctest::Contains("tied"), StatsError);
  SUBCASE("identical rank distributions: H = 0, p = 1") {
    const KruskalWallis got = kruskal_wallis({{1, 4}, {2, 3}});
    CHECK(got.h == 0);
    CHECK(got.p == 1);
  }
}
