// Two-way ANOVA (Types I, II, III) against R: anova(lm) for Type I, car::Anova for Types II and III
// (tests/data/stats/factorial_reference.txt, written by scripts/reference/factorial_reference.R).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "factorial_reference.hpp"
#include "stats/anova.hpp"
#include "stats/factorial_anova.hpp"

using scalebench::stats::AnovaTerm;
using scalebench::stats::factorial_anova;
using scalebench::stats::FactorialAnova;
using scalebench::stats::one_way_anova;
using scalebench::stats::SsType;
using scalebench::stats::StatsError;
using scalebench::test::factorial_data;
using scalebench::test::factorial_records;

namespace {

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

// SS and F to 1e-10 relative: both sides are Householder QR fits of well-conditioned designs in
// double precision and agree to ~1e-14. p to 1e-9: p amplifies F's relative error by
// |d log p / d log F|, about 40 for the smallest p here (~1e-18).
constexpr double kSsTolerance = 1e-10;
constexpr double kPTolerance = 1e-9;

SsType ss_type(int k) { return k == 1 ? SsType::I : k == 2 ? SsType::II : SsType::III; }

// Checks `got` against the case's R table of type k; `ss_tolerance` for SS, MS and F.
void check_table(const std::string& name, int k, const FactorialAnova& got,
                 double ss_tolerance = kSsTolerance, double p_tolerance = kPTolerance) {
  CAPTURE(name);
  CAPTURE(k);
  const auto rows = factorial_records(name, "type" + std::to_string(k));
  REQUIRE(got.terms.size() == rows.size());
  CHECK(got.type == ss_type(k));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const AnovaTerm& t = got.terms[i];
    const auto& w = rows[i].words;
    CAPTURE(t.term);
    CHECK(t.term == w[0]);
    CHECK(t.df == std::stod(w[1]));
    CHECK(relative_error(t.ss, std::stod(w[2])) < ss_tolerance);
    CHECK(relative_error(t.ms, std::stod(w[2]) / std::stod(w[1])) < ss_tolerance);
    if (t.term == "Residuals") {
      CHECK(std::isnan(t.f));
      CHECK(std::isnan(t.p));
    } else {
      CHECK(relative_error(t.f, std::stod(w[3])) < ss_tolerance);
      CHECK(relative_error(t.p, std::stod(w[4])) < p_tolerance);
    }
  }
  const double total = std::stod(factorial_records(name, "total").at(0).words.at(0));
  CHECK(relative_error(got.ss_total, total) < ss_tolerance);
}

void check_case(const std::string& name, bool interaction = true) {
  const auto d = factorial_data(name);
  for (int k = 1; k <= 3; ++k) {
    check_table(name, k, factorial_anova(d.response, d.factors, d.names, ss_type(k), interaction));
  }
}

}  // namespace

TEST_CASE(
    "balanced two-way ANOVA matches R on warpbreaks (breaks ~ wool * tension), Types I, II, III") {
  check_case("warpbreaks");
  // Balanced: the three types coincide, and Type I rows add up to the total SS.
  const auto d = factorial_data("warpbreaks");
  const auto one = factorial_anova(d.response, d.factors, d.names, SsType::I);
  const auto three = factorial_anova(d.response, d.factors, d.names, SsType::III);
  double sum = 0;
  for (std::size_t i = 0; i < one.terms.size(); ++i) {
    CHECK(relative_error(three.terms[i].ss, one.terms[i].ss) < 1e-12);
    sum += one.terms[i].ss;
  }
  CHECK(relative_error(sum, one.ss_total) < 1e-13);
}

TEST_CASE("the default is Type II with interaction") {
  const auto d = factorial_data("warpbreaks_unbalanced");
  const auto got = factorial_anova(d.response, d.factors, d.names);
  CHECK(got.type == SsType::II);
  check_table("warpbreaks_unbalanced", 2, got);
}

TEST_CASE(
    "balanced two-way ANOVA matches R on ToothGrowth (len ~ supp * factor(dose)), Types I, II, "
    "III") {
  check_case("toothgrowth");
}

TEST_CASE("unbalanced two-way ANOVA matches R (anova, car::Anova types 2 and 3 under contr.sum)") {
  check_case("warpbreaks_unbalanced");
  check_case("epochs_unbalanced");
  // Unbalanced, the types differ: the main effects' Type III SS are not their Type II SS.
  const auto d = factorial_data("warpbreaks_unbalanced");
  const auto two = factorial_anova(d.response, d.factors, d.names, SsType::II);
  const auto three = factorial_anova(d.response, d.factors, d.names, SsType::III);
  CHECK(relative_error(three.terms[0].ss, two.terms[0].ss) > 0.1);
}

TEST_CASE("additive two-way model (no interaction) on unbalanced data matches R") {
  check_case("warpbreaks_unbalanced_additive", false);
}

TEST_CASE("level order and row order do not change the sums of squares") {
  // Rows reversed: levels now appear in a different order, so the coding changes, the SS must not.
  auto d = factorial_data("epochs_unbalanced");
  std::reverse(d.response.begin(), d.response.end());
  for (auto& f : d.factors) std::reverse(f.begin(), f.end());
  for (int k = 1; k <= 3; ++k)
    check_table("epochs_unbalanced", k,
                factorial_anova(d.response, d.factors, d.names, ss_type(k)));
}

TEST_CASE("an offset of 1e12 leaves the SS and F of warpbreaks as R computes them without it") {
  // 1e12 + an integer is exact in double (and 1e15 + one: doubles there are 0.125 apart), so the
  // offset data are exactly the warpbreaks data shifted; centring first keeps the fit on numbers of
  // the size of the effects. Measured error against R's un-offset values: < 5e-15 relative.
  for (const std::string name : {"warpbreaks", "warpbreaks_unbalanced"}) {
    for (const double offset : {1e12, 1e15}) {
      CAPTURE(offset);
      auto d = factorial_data(name);
      for (double& y : d.response) y += offset;
      for (int k = 1; k <= 3; ++k)
        check_table(name, k, factorial_anova(d.response, d.factors, d.names, ss_type(k)));
    }
  }
}

TEST_CASE("with an offset of 1e12 the only loss is the rounding of the data themselves") {
  // ToothGrowth's lengths (0.1 resolution) are not representable at 1e12 (doubles 1.2e-4 apart), so
  // fl(1e12 + y) is a slightly different data set: against R's un-offset values the SS move by
  // ~1e-5 relative. Against the data actually stored, fl(1e12 + y) - 1e12 (an exact subtraction),
  // the ANOVA is unchanged to rounding.
  for (const std::string name : {"toothgrowth", "epochs_unbalanced"}) {
    auto shifted = factorial_data(name);
    auto stored = shifted;
    for (std::size_t i = 0; i < shifted.response.size(); ++i) {
      shifted.response[i] += 1e12;
      stored.response[i] = shifted.response[i] - 1e12;
    }
    for (int k = 1; k <= 3; ++k) {
      CAPTURE(name);
      CAPTURE(k);
      const auto a = factorial_anova(shifted.response, shifted.factors, shifted.names, ss_type(k));
      const auto b = factorial_anova(stored.response, stored.factors, stored.names, ss_type(k));
      for (std::size_t i = 0; i < a.terms.size(); ++i) {
        CHECK(relative_error(a.terms[i].ss, b.terms[i].ss) < kSsTolerance);
        if (i + 1 < a.terms.size()) CHECK(relative_error(a.terms[i].p, b.terms[i].p) < kPTolerance);
      }
    }
  }
}

TEST_CASE("one factor gives one_way_anova's result, whatever the type") {
  const auto d = factorial_data("warpbreaks");
  // Groups in first-appearance order of tension, as one_way_anova takes them.
  std::vector<std::string> levels;
  std::vector<std::vector<double>> groups;
  for (std::size_t i = 0; i < d.response.size(); ++i) {
    const auto it = std::find(levels.begin(), levels.end(), d.factors[1][i]);
    if (it == levels.end()) {
      levels.push_back(d.factors[1][i]);
      groups.push_back({d.response[i]});
    } else {
      groups[static_cast<std::size_t>(it - levels.begin())].push_back(d.response[i]);
    }
  }
  const auto want = one_way_anova(groups);
  for (int k = 1; k <= 3; ++k) {
    CAPTURE(k);
    const auto got = factorial_anova(d.response, {d.factors[1]}, {"tension"}, ss_type(k));
    REQUIRE(got.terms.size() == 2);
    CHECK(got.terms[0].term == "tension");
    CHECK(got.terms[0].df == want.df_between);
    CHECK(got.terms[1].df == want.df_within);
    CHECK(relative_error(got.terms[0].ss, want.ss_between) < 1e-12);
    CHECK(relative_error(got.terms[1].ss, want.ss_within) < 1e-12);
    CHECK(relative_error(got.terms[0].f, want.f) < 1e-12);
    CHECK(relative_error(got.terms[0].p, want.p) < 1e-11);
  }
}

TEST_CASE("factorial ANOVA refuses designs it cannot fit, saying why") {
  const auto d = factorial_data("warpbreaks");
  // An empty cell: drop every (wool B, tension M) observation.
  std::vector<double> y;
  std::vector<std::vector<std::string>> f(2);
  for (std::size_t i = 0; i < d.response.size(); ++i) {
    if (d.factors[0][i] == "B" && d.factors[1][i] == "M") continue;
    y.push_back(d.response[i]);
    f[0].push_back(d.factors[0][i]);
    f[1].push_back(d.factors[1][i]);
  }
  CHECK_THROWS_WITH_AS(factorial_anova(y, f, d.names), doctest::Contains("cell wool=B, tension=M"),
                       StatsError);
  // Without the interaction the same data are fine (the additive model is still estimable).
  const auto additive = factorial_anova(y, f, d.names, SsType::II, false);
  CHECK(additive.terms.size() == 3);
  CHECK(additive.terms.back().df == static_cast<double>(y.size()) - 4);

  // A factor with one level.
  const std::vector<std::string> constant(d.response.size(), "x");
  CHECK_THROWS_WITH_AS(factorial_anova(d.response, {d.factors[0], constant}, {"wool", "site"}),
                       doctest::Contains("factor site has 1 level"), StatsError);
  // Mismatched lengths, wrong number of factors or names, equal names, a NaN.
  CHECK_THROWS_AS(factorial_anova({1, 2, 3}, {{"a", "b"}}, {"g"}), StatsError);
  CHECK_THROWS_AS(
      factorial_anova(d.response, {d.factors[0], d.factors[1], d.factors[0]}, {"a", "b", "c"}),
      StatsError);
  CHECK_THROWS_AS(factorial_anova(d.response, {}, {}), StatsError);
  CHECK_THROWS_AS(factorial_anova(d.response, d.factors, {"wool"}), StatsError);
  CHECK_THROWS_AS(factorial_anova(d.response, d.factors, {"w", "w"}), StatsError);
  auto with_nan = d.response;
  with_nan[3] = std::nan("");
  CHECK_THROWS_AS(factorial_anova(with_nan, d.factors, d.names), StatsError);
  // One observation per cell with the interaction: no residual degrees of freedom.
  CHECK_THROWS_WITH_AS(
      factorial_anova({1, 2, 3, 5}, {{"a", "a", "b", "b"}, {"u", "v", "u", "v"}}, {"A", "B"}),
      doctest::Contains("no residual degrees of freedom"), StatsError);
  // Confounded factors without interaction (B is a relabelling of A): named as rank deficiency.
  CHECK_THROWS_WITH_AS(
      factorial_anova({1, 2, 3, 5, 6, 8},
                      {{"a", "a", "b", "b", "c", "c"}, {"u", "u", "v", "v", "w", "w"}}, {"A", "B"},
                      SsType::II, false),
      doctest::Contains("term B"), StatsError);
}

TEST_CASE("no residual noise: F is infinite for a real effect and NaN for none") {
  // y depends on A only, exactly, with replication: MS_residual = 0.
  const std::vector<double> y{1, 1, 1, 1, 3, 3, 3, 3};
  const std::vector<std::vector<std::string>> f{{"a", "a", "a", "a", "b", "b", "b", "b"},
                                                {"u", "v", "u", "v", "u", "v", "u", "v"}};
  const auto got = factorial_anova(y, f, {"A", "B"}, SsType::I);
  CHECK(std::isinf(got.terms[0].f));
  CHECK(got.terms[0].p == 0);
  CHECK(std::isnan(got.terms[1].f));
  CHECK(std::isnan(got.terms[1].p));
}
