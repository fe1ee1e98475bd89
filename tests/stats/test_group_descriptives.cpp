// Per-group n, mean, sd, se and t interval against R's mean, sd and t.test
// (tests/data/stats/oneway_family_reference.txt).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "oneway_family_reference.hpp"
#include "stats/group_descriptives.hpp"

using scalebench::stats::describe_group;
using scalebench::stats::describe_groups;
using scalebench::stats::GroupDescriptives;
using scalebench::stats::StatsError;
namespace ref = scalebench::test::oneway;

TEST_CASE("group descriptives match R's mean, sd and t.test(x)$conf.int") {
  // Means, sds and se to 1e-12 relative (two-pass sums on both sides); the interval ends to 1e-12
  // of the interval's width (qt and Boost's t quantile agree to ~1e-15).
  for (const std::string name : {"plantgrowth", "warpbreaks_tension", "insectsprays", "ties"}) {
    CAPTURE(name);
    const auto got = describe_groups(ref::groups(name));
    const auto rows = ref::records(name, "describe");
    REQUIRE(rows.size() == got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const auto& want = rows[i];
      CAPTURE(i);
      const GroupDescriptives& d = got[i];
      CHECK(d.n == want[1]);
      CHECK(ref::relative_error(d.mean, want[2]) < 1e-12);
      REQUIRE(d.sd);
      REQUIRE(d.se);
      REQUIRE(d.ci);
      CHECK(ref::relative_error(*d.sd, want[3]) < 1e-12);
      CHECK(ref::relative_error(*d.se, want[4]) < 1e-12);
      const double width = want[6] - want[5];
      CHECK(std::abs(d.ci->lower - want[5]) < 1e-12 * width);
      CHECK(std::abs(d.ci->upper - want[6]) < 1e-12 * width);
    }
  }
}

TEST_CASE("group descriptives edge cases") {
  SUBCASE("one observation: sd, se and interval are absent") {
    const GroupDescriptives d = describe_group({4.5});
    CHECK(d.n == 1);
    CHECK(d.mean == 4.5);
    CHECK_FALSE(d.sd);
    CHECK_FALSE(d.se);
    CHECK_FALSE(d.ci);
  }
  SUBCASE("two observations: t with 1 d.f.") {
    const GroupDescriptives d =
        describe_group({1, 3});  // mean 2, sd sqrt 2, se 1, t_{0.975,1} = 12.7062...
    REQUIRE(d.ci);
    CHECK(d.ci->upper - 2 == doctest::Approx(12.706204736174707).epsilon(1e-12));
  }
  SUBCASE("a confidence level other than 0.95") {
    const GroupDescriptives d = describe_group({1, 3}, 0.5);  // t_{0.75,1} = 1
    REQUIRE(d.ci);
    CHECK(d.ci->upper == doctest::Approx(3).epsilon(1e-14));
  }
  CHECK_THROWS_AS(describe_group({}), StatsError);
  CHECK_THROWS_AS(describe_group({1, std::numeric_limits<double>::infinity()}), StatsError);
  CHECK_THROWS_AS(describe_group({1, 2}, 0), StatsError);
  CHECK_THROWS_WITH_AS(describe_groups({{1, 2}, {}}), doctest::Contains("group 1"), StatsError);
}
