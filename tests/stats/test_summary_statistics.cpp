// One-way ANOVA and Tukey-Kramer from per-group n/mean/sd, against R evaluating the same formulas
// from the same summaries (tests/data/stats/oneway_family_reference.txt), and against the raw-data
// functions.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "oneway_family_reference.hpp"
#include "r_reference.hpp"
#include "stats/summary_statistics.hpp"

using scalebench::stats::GroupSummary;
using scalebench::stats::one_way_anova;
using scalebench::stats::one_way_anova_from_summary;
using scalebench::stats::OneWayAnova;
using scalebench::stats::StatsError;
using scalebench::stats::summarize;
using scalebench::stats::tukey_hsd;
using scalebench::stats::tukey_hsd_from_summary;
using scalebench::stats::TukeyPair;
namespace ref = scalebench::test::oneway;

namespace {

// SS and F to 1e-10 relative; p to 1e-9 (p = P(F > f) amplifies F's error ~600-fold at 1e-258).
void check_anova(const OneWayAnova& got, const std::vector<double>& want) {
  CHECK(ref::relative_error(got.ss_between, want[0]) < 1e-10);
  CHECK(ref::relative_error(got.ss_within, want[1]) < 1e-10);
  CHECK(got.df_between == want[2]);
  CHECK(got.df_within == want[3]);
  CHECK(ref::relative_error(got.f, want[4]) < 1e-10);
  CHECK(ref::relative_error(got.p, want[5]) < 1e-9);
}

// diff to 1e-12; lower/upper to 1e-7 of the interval's width (R's qtukey stops its secant
// iteration at 1e-4 and inherits ptukey's ~1e-7 error); p to 1e-6 relative where R's p exceeds
// 1e-6 (R's ptukey is a fixed-panel Gauss-Legendre rule good to ~1e-7 there; see test_tukey.cpp).
// Below 1e-6, R's ptukey prints 0 or a few correct digits, so only p > 0 is checked against it.
void check_tukey(const std::vector<TukeyPair>& got, const std::string& name) {
  const auto rows = ref::records(name, "summary_tukey");
  REQUIRE(rows.size() == got.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& want = rows[i];
    CAPTURE(i);
    CHECK(got[i].a == want[0]);
    CHECK(got[i].b == want[1]);
    const double width = want[4] - want[3];
    CHECK(std::abs(got[i].diff - want[2]) < 1e-12 * (1 + std::abs(want[2])));
    CHECK(std::abs(got[i].lower - want[3]) < 1e-7 * width);
    CHECK(std::abs(got[i].upper - want[4]) < 1e-7 * width);
    if (want[5] > 1e-6) {
      CHECK(ref::relative_error(got[i].p_adjusted, want[5]) < 1e-6);
    } else {
      CHECK(got[i].p_adjusted > 0);
      CHECK(got[i].p_adjusted < 1e-6);
    }
  }
}

}  // namespace

TEST_CASE("HorovodRunner Table 1 from its means and SDs: F = 1119.95 (the paper prints 1191.61)") {
  const auto table1 = ref::summaries("table1");
  REQUIRE(table1.size() == 8);
  const OneWayAnova got = one_way_anova_from_summary(table1);
  CHECK(got.df_between == 7);
  CHECK(got.df_within == 400);
  CHECK(got.f == doctest::Approx(1119.95).epsilon(1e-5));
  CHECK(got.p == doctest::Approx(2.6e-258).epsilon(0.01));
  check_anova(got, ref::record("table1", "summary_anova"));
  // The same as the raw-data ANOVA on r_reference.txt's rebuilt Table 1 (51 values per group with
  // exactly the published mean and SD).
  const OneWayAnova raw = one_way_anova(scalebench::test::r_groups("table1"));
  CHECK(ref::relative_error(got.f, raw.f) < 1e-12);
  CHECK(ref::relative_error(got.p, raw.p) < 1e-10);
}

TEST_CASE(
    "HorovodRunner Table 1: Tukey-Kramer p-values are real numbers, not the 0.001/0.9 clips") {
  const auto got = tukey_hsd_from_summary(ref::summaries("table1"));
  REQUIRE(got.size() == 28);
  check_tukey(got, "table1");
  const auto raw = tukey_hsd(scalebench::test::r_groups("table1"));
  REQUIRE(raw.size() == got.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(ref::relative_error(got[i].q, raw[i].q) < 1e-12);
    CHECK(ref::relative_error(got[i].p_adjusted, raw[i].p_adjusted) < 1e-9);
    CHECK(got[i].p_adjusted != 0.001);
    CHECK(got[i].p_adjusted != 0.9);
  }
  // Group 2 (hvd.np=1, the paper's base) against group 0 (single machine): q = 20.7 on 400 d.f.
  // gives p ~ 1.1e-37, which R's ptukey prints as 0 and the paper as 0.001.
  CHECK(got[1].p_adjusted > 1e-38);
  CHECK(got[1].p_adjusted < 1e-36);
}

TEST_CASE("summary statistics give what the raw data give (PlantGrowth)") {
  check_anova(one_way_anova_from_summary(ref::summaries("plantgrowth_summary")),
              ref::record("plantgrowth_summary", "summary_anova"));
  check_tukey(tukey_hsd_from_summary(ref::summaries("plantgrowth_summary")), "plantgrowth_summary");
  const auto groups = ref::groups("plantgrowth");
  const OneWayAnova from_data = one_way_anova(groups);
  const OneWayAnova from_summary = one_way_anova_from_summary(summarize(groups));
  CHECK(ref::relative_error(from_summary.f, from_data.f) < 1e-12);
  CHECK(ref::relative_error(from_summary.p, from_data.p) < 1e-12);
}

TEST_CASE("summary statistics edge cases") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(one_way_anova_from_summary({{"a", 3, 1, 1}}), StatsError);
  CHECK_THROWS_AS(one_way_anova_from_summary({{"a", 3, 1, 1}, {"b", 2.5, 1, 1}}), StatsError);
  CHECK_THROWS_AS(one_way_anova_from_summary({{"a", 3, 1, 1}, {"b", 0, 1, 1}}), StatsError);
  CHECK_THROWS_AS(one_way_anova_from_summary({{"a", 3, 1, 1}, {"b", 3, nan, 1}}), StatsError);
  CHECK_THROWS_AS(one_way_anova_from_summary({{"a", 3, 1, 1}, {"b", 3, 1, -1}}), StatsError);
  CHECK_THROWS_AS(one_way_anova_from_summary({{"a", 1, 1, 0}, {"b", 1, 2, 0}}),
                  StatsError);  // N - k = 0
  CHECK_THROWS_WITH_AS(one_way_anova_from_summary({{"a", 3, 1, 1}, {"np=4", 3, 1, nan}}),
                       doctest::Contains("np=4"), StatsError);
  CHECK_THROWS_AS(tukey_hsd_from_summary({{"a", 3, 1, 1}, {"b", 3, 2, 1}}, 1.0), StatsError);
  SUBCASE("n = 1 ignores its sd (NaN, as R's sd of one value)") {
    const OneWayAnova got = one_way_anova_from_summary({{"a", 1, 1, nan}, {"b", 3, 2, 1}});
    CHECK(got.ss_within == 2);
    CHECK(got.df_within == 2);
  }
  SUBCASE("no within-group noise") {
    const OneWayAnova got = one_way_anova_from_summary({{"a", 2, 1, 0}, {"b", 2, 2, 0}});
    CHECK(std::isinf(got.f));
    CHECK(got.p == 0);
    const auto pairs = tukey_hsd_from_summary({{"a", 2, 1, 0}, {"b", 2, 2, 0}, {"c", 2, 1, 0}});
    CHECK(std::isinf(pairs[0].q));
    CHECK(pairs[0].p_adjusted == 0);
    CHECK(std::isnan(pairs[1].p_adjusted));
  }
}

TEST_CASE(
    "tukey_vs_base: the all-pairs Tukey-Kramer rows that hold the base, oriented against it") {
  using scalebench::stats::tukey_vs_base;
  SUBCASE("PlantGrowth against trt1 (group 1): R's TukeyHSD rows trt1-ctrl and trt2-trt1") {
    const auto groups = scalebench::test::r_groups("plantgrowth");
    const auto all = tukey_hsd(groups);
    const auto got = tukey_vs_base(groups, 1);
    REQUIRE(got.size() == 2);
    // ctrl (0) before the base: R's row "trt1-ctrl" flipped to ctrl - trt1.
    CHECK(got[0].a == 1);
    CHECK(got[0].b == 0);
    CHECK(got[0].diff == -all[0].diff);
    CHECK(got[0].lower == -all[0].upper);
    CHECK(got[0].upper == -all[0].lower);
    CHECK(got[0].p_adjusted == all[0].p_adjusted);  // the all-pairs p (k = 3), not recomputed
    CHECK(got[1].a == 1);
    CHECK(got[1].b == 2);
    CHECK(got[1].diff == all[2].diff);
    CHECK(got[1].p_adjusted == all[2].p_adjusted);
    const auto r_rows = scalebench::test::r_records("plantgrowth", "tukey");
    CHECK(ref::relative_error(got[0].p_adjusted, r_rows[0].numbers[5]) < 1e-6);
  }
  SUBCASE("Table 1 against hvd.np=1 (group 2), the paper's base: 7 real p-values") {
    const auto got = tukey_vs_base(scalebench::test::r_groups("table1"), 2);
    REQUIRE(got.size() == 7);
    for (const auto& pair : got) {
      CHECK(pair.a == 2);
      CHECK(pair.p_adjusted > 0);
      CHECK(pair.p_adjusted < 1e-15);  // q >= 14.4 on 400 d.f. for every group against np=1
    }
  }
  CHECK_THROWS_AS(tukey_vs_base({{1, 2}, {3, 4}}, 2), StatsError);
}
