// The studentized range distribution and Tukey HSD, against exact identities, against R
// (tests/data/stats/r_reference.txt, written by scripts/reference/stats_reference.R) and against an
// independent QUADPACK evaluation of the same integral.
#include <doctest/doctest.h>

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "r_reference.hpp"
#include "stats/tukey.hpp"

using scalebench::stats::StatsError;
using scalebench::stats::studentized_range_cdf;
using scalebench::stats::studentized_range_log_survival;
using scalebench::stats::studentized_range_quantile;
using scalebench::stats::studentized_range_survival;
using scalebench::stats::studentized_range_upper_quantile;
using scalebench::stats::tukey_hsd;
using scalebench::stats::tukey_vs_base;
using scalebench::stats::TukeyPair;
using scalebench::test::r_groups;
using scalebench::test::r_records;
using scalebench::test::r_reference;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

// For k = 2 the range is |Z1 - Z2| = sqrt(2) |N(0,1)|, so P(Q > q) = 2 P(T_df > q / sqrt(2)).
double k2_exact_survival(double q, double df) {
  if (std::isinf(df)) return std::erfc(q / 2);
  return 2 * boost::math::cdf(boost::math::complement(
                 boost::math::students_t_distribution<double>(df), q / std::sqrt(2.0)));
}

double k2_exact_upper_quantile(double alpha, double df) {
  if (std::isinf(df))
    return std::sqrt(2.0) * boost::math::quantile(boost::math::complement(
                                boost::math::normal_distribution<double>(), alpha / 2));
  return std::sqrt(2.0) * boost::math::quantile(boost::math::complement(
                              boost::math::students_t_distribution<double>(df), alpha / 2));
}

}  // namespace

// Worst relative error found against the exact k = 2 identity over this grid (q from 0.1 to where
// P(Q > q) ~ 1e-105, df in {2, 5, 10, 30, 100, inf}, 40 points each): 3.1e-14 for the survival
// function and 2.1e-15 for the cdf (GCC 12, x86-64); a denser scan of 1251 points with df down to 1
// and up to 1e8 found 1.1e-13 at worst; R's ptukey is off by 1e-2 at
// q = 10, df = inf and returns 1 instead of ~1e-22 at q = 20 (the ptukey_k2_check rows of the
// data).
TEST_CASE(
    "studentized range, k = 2: survival and cdf equal the Student t identity across the tail") {
  const double dfs[] = {2, 5, 10, 30, 100, kInf};
  double worst_survival = 0;
  double worst_cdf = 0;
  for (double df : dfs) {
    const double q_max = k2_exact_upper_quantile(1e-105, df);
    for (int i = 0; i < 40; ++i) {
      const double q = 0.1 * std::pow(q_max / 0.1, i / 39.0);
      CAPTURE(df);
      CAPTURE(q);
      const double exact = k2_exact_survival(q, df);
      const double e = relative_error(studentized_range_survival(q, 2, df), exact);
      CHECK(e < 1e-12);
      worst_survival = std::max(worst_survival, e);
      if (i % 4 == 0) {
        const double c = relative_error(studentized_range_cdf(q, 2, df), 1 - exact);
        CHECK(c < 1e-12);
        worst_cdf = std::max(worst_cdf, c);
      }
    }
  }
  MESSAGE("k = 2 worst relative error: survival " << worst_survival << ", cdf " << worst_cdf);
}

TEST_CASE("studentized range, k > 2: survival matches an independent QUADPACK evaluation") {
  // R's integrate() of the same double integral at rel.tol 1e-13. Its integrand forms
  // Phi^(k-1) - (Phi - Phi(z-x))^(k-1) by subtraction, losing about log10(1/p) digits in the
  // tail; the largest difference seen is 4e-12.
  const auto rows = r_records("ptukey_quadpack", "");
  REQUIRE(rows.size() == 27);
  for (const auto& r : rows) {
    CAPTURE(r.numbers[0]);
    CAPTURE(r.numbers[1]);
    CAPTURE(r.numbers[2]);
    CHECK(relative_error(studentized_range_survival(r.numbers[0], r.numbers[1], r.numbers[2]),
                         r.numbers[3]) < 1e-10);
  }
}

TEST_CASE("studentized range matches R's ptukey in the body of the distribution") {
  // R's ptukey (Copenhaver & Holland quadrature on fixed Gauss-Legendre panels) is good to about
  // 1e-7 relative here; the largest difference seen is 2.2e-7 (k = 3, df = 5, q = 4, where the
  // QUADPACK rows agree with us to 1e-12), so 1e-6 is R's accuracy, not ours.
  const auto rows = r_records("ptukey", "");
  REQUIRE(rows.size() == 60);
  for (const auto& r : rows) {
    const double q = r.numbers[0], k = r.numbers[1], df = r.numbers[2];
    CAPTURE(q);
    CAPTURE(k);
    CAPTURE(df);
    CHECK(relative_error(studentized_range_cdf(q, k, df), r.numbers[3]) < 1e-6);
    CHECK(relative_error(studentized_range_survival(q, k, df), r.numbers[4]) < 1e-6);
  }
}

TEST_CASE("studentized range: the two tails are separate integrals that add up to one") {
  // Below the median the cdf is integrated in the lower tail directly, not as 1 - survival.
  int independent = 0;
  for (double k : {3.0, 7.0}) {
    for (double df : {4.0, 40.0, kInf}) {
      for (double q : {0.3, 1.0, 2.0, 3.0}) {
        const double c = studentized_range_cdf(q, k, df);
        if (c >= 0.5) continue;  // there the cdf is 1 - survival by construction
        ++independent;
        CHECK(std::abs(c + studentized_range_survival(q, k, df) - 1) < 1e-13);
      }
    }
  }
  CHECK(independent >= 12);
  CHECK(studentized_range_cdf(0.01, 4, 20) > 0);  // ~1e-7: the lower tail has its own accuracy
}

TEST_CASE("studentized range quantiles") {
  SUBCASE("round trip through the cdf") {
    for (double p : {0.01, 0.3, 0.5, 0.9, 0.95, 0.999}) {
      const double q = studentized_range_quantile(p, 4, 12);
      CHECK(relative_error(studentized_range_cdf(q, 4, 12), p) < 1e-11);
    }
  }
  SUBCASE("tiny upper-tail probabilities, k = 2 against the exact t quantile") {
    for (double df : {3.0, 30.0, kInf}) {
      for (double alpha : {1e-3, 1e-30, 1e-100}) {
        CAPTURE(df);
        CAPTURE(alpha);
        CHECK(relative_error(studentized_range_upper_quantile(alpha, 2, df),
                             k2_exact_upper_quantile(alpha, df)) < 1e-10);
      }
    }
  }
  SUBCASE("R's qtukey(0.95, k, df) as TukeyHSD uses it") {
    // R's qtukey iterates the secant method until the step is below 1e-4 and inherits ptukey's
    // ~1e-7 error; the largest difference seen is 1.1e-8.
    for (const auto& r : r_reference()) {
      if (r.kind != "qtukey") continue;
      CAPTURE(r.name);
      CHECK(relative_error(studentized_range_quantile(0.95, r.numbers[0], r.numbers[1]),
                           r.numbers[2]) < 1e-6);
    }
  }
  SUBCASE("ends") {
    CHECK(studentized_range_quantile(0, 3, 10) == 0);
    CHECK(std::isinf(studentized_range_quantile(1, 3, 10)));
    CHECK(std::isinf(studentized_range_upper_quantile(0, 3, 10)));
    CHECK_THROWS_AS(studentized_range_quantile(1.5, 3, 10), StatsError);
    CHECK_THROWS_AS(studentized_range_upper_quantile(-0.1, 3, 10), StatsError);
  }
}

TEST_CASE("studentized range edge cases") {
  CHECK(studentized_range_survival(0, 3, 10) == 1);
  CHECK(studentized_range_survival(-1, 3, 10) == 1);
  CHECK(studentized_range_cdf(0, 3, 10) == 0);
  CHECK(studentized_range_survival(kInf, 3, 10) == 0);
  CHECK(studentized_range_cdf(kInf, 3, 10) == 1);
  CHECK(std::isnan(studentized_range_survival(std::nan(""), 3, 10)));
  CHECK_THROWS_AS(studentized_range_survival(2, 1, 10), StatsError);
  CHECK_THROWS_AS(studentized_range_survival(2, 3, 0), StatsError);
  CHECK_THROWS_AS(studentized_range_cdf(2, std::nan(""), 10), StatsError);
  // Below the smallest double the logarithm stays finite.
  const double log_s = studentized_range_log_survival(60, 3, kInf);
  CHECK(std::isfinite(log_s));
  CHECK(log_s < -800);
  CHECK(studentized_range_survival(60, 3, kInf) == 0);
}

namespace {

// diff to 1e-12 of the data's scale (both sides subtract two means); lower/upper to 1e-7 of the
// interval's width, which is R's qtukey accuracy (above); p adj to 1e-6 relative where R's p is
// above 1e-6 (ptukey's accuracy, above). Below that R's ptukey is unreliable (the k = 2 check rows
// show errors of 1e-2 and worse; it prints 0 for the Table 1 pairs), so there we only check
// that our p is positive and also below 1e-6.
void check_tukey_against_r(const std::string& name, const std::vector<TukeyPair>& got) {
  CAPTURE(name);
  const auto rows = r_records(name, "tukey");
  REQUIRE(rows.size() == got.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& want = rows[i].numbers;
    const TukeyPair& pair = got[i];
    CAPTURE(pair.a);
    CAPTURE(pair.b);
    CHECK(pair.a == want[0]);
    CHECK(pair.b == want[1]);
    const double width = want[4] - want[3];
    CHECK(std::abs(pair.diff - want[2]) < 1e-12 * (1 + std::abs(want[2])));
    CHECK(std::abs(pair.lower - want[3]) < 1e-7 * width);
    CHECK(std::abs(pair.upper - want[4]) < 1e-7 * width);
    if (want[5] > 1e-6) {
      CHECK(relative_error(pair.p_adjusted, want[5]) < 1e-6);
    } else {
      CHECK(pair.p_adjusted > 0);
      CHECK(pair.p_adjusted < 1e-6);
    }
  }
}

}  // namespace

TEST_CASE("Tukey HSD matches R's TukeyHSD") {
  for (const std::string name :
       {"warpbreaks_tension", "warpbreaks_wool", "plantgrowth", "unbalanced"}) {
    check_tukey_against_r(name, tukey_hsd(r_groups(name)));
  }
}

TEST_CASE("Tukey HSD on values near 1e12 equals R on the offsets alone") {
  // R's aov loses digits against the 1e12 intercept (see test_anova.cpp); our shifted sums do not,
  // so the raw data must give what R gives for the offsets without the 1e12.
  const std::vector<std::vector<double>> raw = r_groups("near1e12");
  const auto got = tukey_hsd(raw);
  check_tukey_against_r("near1e12_offsets", got);
  CHECK(got[0].diff == 0.25);  // exact: group means 1e12 + 1/4 and 1e12 + 1/2
  CHECK(got[1].diff == 0);
  CHECK(got[1].p_adjusted == 1);
}

TEST_CASE("Tukey HSD p-values far below R's reach (Table 1 rebuilt)") {
  const auto got = tukey_hsd(r_groups("table1"));
  check_tukey_against_r("table1", got);
  // R prints 0 for 25 of the 28 pairs; ours are positive and fall as q grows.
  for (const auto& a : got) {
    CHECK(a.p_adjusted > 0);
    for (const auto& b : got) {
      if (a.q < b.q) CHECK(a.p_adjusted >= b.p_adjusted);
    }
  }
}

TEST_CASE("Tukey HSD edge cases") {
  CHECK_THROWS_AS(tukey_hsd({{1, 2, 3}}), StatsError);
  CHECK_THROWS_AS(tukey_hsd({{1, 2}, {}}), StatsError);
  CHECK_THROWS_AS(tukey_hsd({{1, 2}, {3, 4}}, 1.0), StatsError);
  CHECK_THROWS_AS(tukey_hsd({{1, 2}, {3, 4}}, 0.0), StatsError);
  SUBCASE("no within-group noise") {
    const auto got = tukey_hsd({{1, 1}, {2, 2}, {1, 1}});
    REQUIRE(got.size() == 3);
    CHECK(std::isinf(got[0].q));
    CHECK(got[0].p_adjusted == 0);
    CHECK(got[0].lower == 1);
    CHECK(got[0].upper == 1);
    CHECK(std::isnan(got[1].q));  // equal means, no noise: 0/0
    CHECK(std::isnan(got[1].p_adjusted));
  }
  SUBCASE("pairs in R's order") {
    const auto got = tukey_hsd({{1, 2}, {3, 4}, {5, 7}, {6, 9}});
    REQUIRE(got.size() == 6);
    const std::size_t want[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (std::size_t i = 0; i < 6; ++i) {
      CHECK(got[i].a == want[i][0]);
      CHECK(got[i].b == want[i][1]);
    }
    CHECK(got[0].diff == 2);  // mean(b) - mean(a)
  }
}

namespace {

// Same bits (NaN included): the pairs against the base must be the all-pairs numbers, not close
// ones.
bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// tukey_vs_base(groups, base) against tukey_hsd(groups): the all-pairs row holding base, flipped to
// (base, other) where R's row is (other, base).
void check_vs_base_is_all_pairs_subset(const std::vector<std::vector<double>>& groups) {
  const auto all = tukey_hsd(groups);
  for (std::size_t base = 0; base < groups.size(); ++base) {
    CAPTURE(base);
    const auto got = tukey_vs_base(groups, base);
    REQUIRE(got.size() == groups.size() - 1);
    std::size_t next = 0;
    for (const TukeyPair& row : all) {
      if (row.a != base && row.b != base) continue;
      const TukeyPair& pair = got.at(next++);
      const bool flipped = row.b == base;
      CAPTURE(row.a);
      CAPTURE(row.b);
      CHECK(pair.a == base);
      CHECK(pair.b == (flipped ? row.a : row.b));
      CHECK(same_bits(pair.diff, flipped ? -row.diff : row.diff));
      CHECK(same_bits(pair.lower, flipped ? -row.upper : row.lower));
      CHECK(same_bits(pair.upper, flipped ? -row.lower : row.upper));
      CHECK(same_bits(pair.q, row.q));
      CHECK(same_bits(pair.p_adjusted, row.p_adjusted));
    }
    CHECK(next == got.size());
  }
}

}  // namespace

TEST_CASE("tukey_vs_base: bit-identical to the all-pairs rows that hold the base, for every base") {
  for (const std::string name :
       {"warpbreaks_tension", "plantgrowth", "unbalanced", "near1e12", "table1"}) {
    CAPTURE(name);
    check_vs_base_is_all_pairs_subset(r_groups(name));
  }
  SUBCASE("no within-group noise: infinite and NaN q as in the all-pairs table") {
    check_vs_base_is_all_pairs_subset({{1, 1}, {2, 2}, {1, 1}});
  }
  SUBCASE("many unequal groups (q and p from one (k, df), critical value shared)") {
    std::vector<std::vector<double>> groups;
    for (int g = 0; g < 12; ++g) {
      std::vector<double> values;
      for (int i = 0; i < 2 + g % 5; ++i) values.push_back(0.3 * g + std::sin(7.0 * g + i));
      groups.push_back(values);
    }
    check_vs_base_is_all_pairs_subset(groups);
  }
}

TEST_CASE("tukey_vs_base matches R's TukeyHSD rows that hold the base") {
  // Tolerances as check_tukey_against_r; R's row (other, base) is "base-other", negated here.
  for (const std::string name : {"warpbreaks_tension", "plantgrowth", "unbalanced"}) {
    const auto groups = r_groups(name);
    const auto rows = r_records(name, "tukey");
    for (std::size_t base = 0; base < groups.size(); ++base) {
      CAPTURE(name);
      CAPTURE(base);
      const auto got = tukey_vs_base(groups, base);
      std::size_t next = 0;
      for (const auto& row : rows) {
        const auto& want = row.numbers;
        if (want[0] != base && want[1] != base) continue;
        const bool flipped = want[1] == base;
        const TukeyPair& pair = got.at(next++);
        CHECK(pair.b == (flipped ? want[0] : want[1]));
        const double sign = flipped ? -1 : 1;
        const double lower = flipped ? -want[4] : want[3];
        const double upper = flipped ? -want[3] : want[4];
        const double width = upper - lower;
        CHECK(std::abs(pair.diff - sign * want[2]) < 1e-12 * (1 + std::abs(want[2])));
        CHECK(std::abs(pair.lower - lower) < 1e-7 * width);
        CHECK(std::abs(pair.upper - upper) < 1e-7 * width);
        if (want[5] > 1e-6) {
          CHECK(relative_error(pair.p_adjusted, want[5]) < 1e-6);
        } else {
          CHECK(pair.p_adjusted > 0);
          CHECK(pair.p_adjusted < 1e-6);
        }
      }
      CHECK(next == got.size());
    }
  }
}

TEST_CASE("tukey_vs_base rejects what tukey_hsd rejects, and a base that is not a group") {
  CHECK_THROWS_AS(tukey_vs_base({{1, 2}, {3, 4}}, 2), StatsError);
  CHECK_THROWS_AS(tukey_vs_base({{1, 2, 3}}, 0), StatsError);
  CHECK_THROWS_AS(tukey_vs_base({{1, 2}, {}}, 0), StatsError);
  CHECK_THROWS_AS(tukey_vs_base({{1, 2}, {3, 4}}, 0, 1.0), StatsError);
}
