// Data at a large offset (epoch times stored as timestamps, nanosecond counters) must give the
// statistics of the same data at zero (issue "What people publish", item 6b): every method of
// `scalebench stats` on y and on y + 2^30, to 1e-12. The values are multiples of 1/64, so both
// copies are exact in double and any difference is the method's own rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "report/analysis/statistics.hpp"
#include "report/data/csv_table.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {

constexpr double kOffset = 1073741824.0;  // 2^30

report::Observations design(double offset, bool two_factors) {
  report::Observations data;
  data.source = "test";
  data.response = "y";
  data.factor_names =
      two_factors ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"a"};
  data.levels.resize(data.factor_names.size());
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 2; ++b)
      for (int r = 0; r < 4 + a; ++r) {  // unbalanced: 4, 5, 6 per cell
        const double noise = static_cast<double>((a * 37 + b * 11 + r * 7) % 50) / 64.0;
        data.values.push_back(offset + noise + a * 0.5 + b * 0.25 + (a == 2 ? r / 8.0 : 0.0));
        data.levels[0].push_back("a" + std::to_string(a));
        if (two_factors) data.levels[1].push_back("b" + std::to_string(b));
      }
  return data;
}

void check_close(double x, double y, const std::string& what) {
  INFO(what);
  INFO(x);
  INFO(y);
  CHECK(std::abs(x - y) <= 1e-12 * std::max(1.0, std::abs(x)));
}

void check_same(const report::StatsReport& at_zero, const report::StatsReport& shifted) {
  REQUIRE(at_zero.anova.size() == shifted.anova.size());
  for (std::size_t i = 0; i < at_zero.anova.size(); ++i) {
    check_close(at_zero.anova[i].ss, shifted.anova[i].ss, "ANOVA SS " + at_zero.anova[i].term);
    if (at_zero.anova[i].f)
      check_close(*at_zero.anova[i].f, *shifted.anova[i].f, "ANOVA F " + at_zero.anova[i].term);
  }
  REQUIRE(at_zero.tests.size() == shifted.tests.size());
  for (std::size_t i = 0; i < at_zero.tests.size(); ++i) {
    check_close(at_zero.tests[i].statistic, shifted.tests[i].statistic, at_zero.tests[i].test);
    check_close(at_zero.tests[i].p, shifted.tests[i].p, at_zero.tests[i].test + " p");
    if (at_zero.tests[i].df2)
      check_close(*at_zero.tests[i].df2, *shifted.tests[i].df2, at_zero.tests[i].test + " df2");
  }
  const auto pairs = [](const std::vector<report::StatsPairRow>& x,
                        const std::vector<report::StatsPairRow>& y, const std::string& name) {
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto what = name + " " + x[i].a + "-" + x[i].b;
      check_close(x[i].diff, y[i].diff, what + " diff");
      check_close(x[i].lwr, y[i].lwr, what + " lwr");
      check_close(x[i].upr, y[i].upr, what + " upr");
      check_close(x[i].p_adj, y[i].p_adj, what + " p");
    }
  };
  pairs(at_zero.tukey, shifted.tukey, "Tukey");
  pairs(at_zero.games_howell, shifted.games_howell, "Games-Howell");
}

}  // namespace

TEST_CASE("one factor: ANOVA, Welch, Levene, Brown-Forsythe, Tukey, Games-Howell at 2^30") {
  const auto zero = report::analyze_observations(design(0, false), 2, 0.95);
  const auto shifted = report::analyze_observations(design(kOffset, false), 2, 0.95);
  REQUIRE(zero.tests.size() == 4);  // Welch, Kruskal-Wallis, Levene, Brown-Forsythe
  REQUIRE(zero.games_howell.size() == 3);
  check_same(zero, shifted);
}

TEST_CASE("two factors: the factorial ANOVA and the two-way Tukey at 2^30") {
  const auto zero = report::analyze_observations(design(0, true), 2, 0.95);
  const auto shifted = report::analyze_observations(design(kOffset, true), 2, 0.95);
  REQUIRE(zero.tukey.size() > 3);
  check_same(zero, shifted);
}

TEST_CASE(
    "summary statistics: a group of one (sd NA) and a group with sd 0 still get ANOVA "
    "and Tukey, Welch is left out with the reason") {
  // Raw data with these summaries: a {1, 2, 3} (mean 2, sd 1), b {5}, c {4, 4} (sd 0).
  test::TempDir dir;
  const auto path = dir / "summary.csv";
  std::ofstream(path) << "group,n,mean,sd\na,3,2,1\nb,1,5,NA\nc,2,4,0\n";
  const auto report = report::analyze_summary_file(path.string(), 0.95);
  report::Observations raw;
  raw.source = "raw";
  raw.response = "y";
  raw.factor_names = {"group"};
  raw.values = {1, 2, 3, 5, 4, 4};
  raw.levels = {{"a", "a", "a", "b", "c", "c"}};
  const auto expected = report::analyze_observations(raw, 2, 0.95);
  REQUIRE(report.anova.size() == 2);
  CHECK(*report.anova[0].f == doctest::Approx(*expected.anova[0].f).epsilon(1e-12));
  CHECK(*report.anova[0].p == doctest::Approx(*expected.anova[0].p).epsilon(1e-12));
  REQUIRE(report.tukey.size() == 3);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(report.tukey[i].p_adj == doctest::Approx(expected.tukey[i].p_adj).epsilon(1e-12));
  bool welch_said = false;
  for (const auto& warning : report.warnings)
    welch_said = welch_said || warning.find(
                                   "Welch's ANOVA not computed: Welch's ANOVA: group 1 "
                                   "(b) has one observation") != std::string::npos;
  CHECK(welch_said);
  // An sd may be missing only for a group of one.
  std::ofstream(path) << "group,n,mean,sd\na,3,2,NA\nb,1,5,NA\n";
  CHECK_THROWS_WITH_AS(report::analyze_summary_file(path.string(), 0.95),
                       doctest::Contains("group a: n = 3 needs an sd"), report::InputError);
}

TEST_CASE("CSV path: warnings name a group by its level, not by its index") {
  report::Observations data;
  data.source = "csv";
  data.response = "y";
  data.factor_names = {"tension"};
  data.values = {1, 2, 3, 7, 4, 5, 6};
  data.levels = {{"L", "L", "L", "M", "H", "H", "H"}};
  const auto report = report::analyze_observations(data, 2, 0.95);
  bool named = false;
  for (const auto& warning : report.warnings) {
    INFO(warning);
    CHECK(warning.find("group 1 (1)") == std::string::npos);
    named = named || warning.find("(M) has one observation") != std::string::npos;
  }
  CHECK(named);
}
