// Effect sizes (eta^2, partial eta^2, omega^2) against the formulas applied in R to R's tables
// (tests/data/stats/factorial_reference.txt), and by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "factorial_reference.hpp"
#include "stats/anova.hpp"
#include "stats/effect_size.hpp"
#include "stats/factorial_anova.hpp"

using scalebench::stats::effect_sizes;
using scalebench::stats::eta_squared;
using scalebench::stats::factorial_anova;
using scalebench::stats::omega_squared;
using scalebench::stats::one_way_anova;
using scalebench::stats::partial_eta_squared;
using scalebench::stats::SsType;
using scalebench::test::factorial_data;
using scalebench::test::factorial_records;

namespace {

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

}  // namespace

TEST_CASE("the three formulas, by hand") {
  // SS_term 30, df 2, SS_residual 60 on df 20 (MS 3), SS_total 100.
  CHECK(eta_squared(30, 100) == doctest::Approx(0.3).epsilon(1e-15));
  CHECK(partial_eta_squared(30, 60) == doctest::Approx(1.0 / 3).epsilon(1e-15));
  CHECK(omega_squared(30, 2, 3, 100) == doctest::Approx(24.0 / 103).epsilon(1e-15));
  // F < 1 (MS_term 1 < MS_residual 3): omega^2 is negative, reported as is.
  CHECK(omega_squared(2, 2, 3, 100) < 0);
  // No variation at all: 0/0.
  CHECK(std::isnan(eta_squared(0, 0)));
  CHECK(std::isnan(partial_eta_squared(0, 0)));
}

TEST_CASE("factorial ANOVA effect sizes match R's tables through the documented formulas") {
  for (const std::string name : {"warpbreaks", "toothgrowth", "warpbreaks_unbalanced",
                                 "epochs_unbalanced", "warpbreaks_unbalanced_additive"}) {
    const auto d = factorial_data(name);
    for (int k = 1; k <= 3; ++k) {
      CAPTURE(name);
      CAPTURE(k);
      const auto got = factorial_anova(d.response, d.factors, d.names,
                                       k == 1   ? SsType::I
                                       : k == 2 ? SsType::II
                                                : SsType::III,
                                       name != "warpbreaks_unbalanced_additive");
      const auto rows = factorial_records(name, "effect" + std::to_string(k));
      REQUIRE(rows.size() + 1 == got.terms.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        CHECK(got.terms[i].term == rows[i].words[0]);
        CHECK(relative_error(got.terms[i].eta_sq, std::stod(rows[i].words[1])) < 1e-10);
        CHECK(relative_error(got.terms[i].partial_eta_sq, std::stod(rows[i].words[2])) < 1e-10);
        CHECK(relative_error(got.terms[i].omega_sq, std::stod(rows[i].words[3])) < 1e-10);
      }
      const auto& residual = got.terms.back();
      CHECK(std::isnan(residual.eta_sq));
      CHECK(std::isnan(residual.partial_eta_sq));
      CHECK(std::isnan(residual.omega_sq));
    }
  }
}

TEST_CASE(
    "eta^2 uses the total SS of the response, so Type I etas and the residual share add up to 1") {
  const auto d = factorial_data("warpbreaks_unbalanced");
  const auto one = factorial_anova(d.response, d.factors, d.names, SsType::I);
  double sum = one.terms.back().ss / one.ss_total;
  for (std::size_t i = 0; i + 1 < one.terms.size(); ++i) sum += one.terms[i].eta_sq;
  CHECK(sum == doctest::Approx(1).epsilon(1e-13));
  // Type III main effects of an unbalanced design do not partition the total: the sum differs.
  const auto three = factorial_anova(d.response, d.factors, d.names, SsType::III);
  double sum3 = three.terms.back().ss / three.ss_total;
  for (std::size_t i = 0; i + 1 < three.terms.size(); ++i) sum3 += three.terms[i].eta_sq;
  CHECK(std::abs(sum3 - 1) > 0.01);
}

TEST_CASE(
    "one-way effect sizes: partial eta^2 equals eta^2, and they match the one-factor factorial "
    "ANOVA") {
  const auto d = factorial_data("warpbreaks");
  std::vector<std::vector<double>> groups(3);
  const std::vector<std::string> levels{"L", "M", "H"};
  for (std::size_t i = 0; i < d.response.size(); ++i) {
    for (std::size_t g = 0; g < 3; ++g) {
      if (d.factors[1][i] == levels[g]) groups[g].push_back(d.response[i]);
    }
  }
  const auto one_way = one_way_anova(groups);
  const auto es = effect_sizes(one_way);
  CHECK(es.eta_sq == doctest::Approx(es.partial_eta_sq).epsilon(1e-15));
  // R: 2034.2592592592584 / (2034.2592592592584 + 7198.5555555555538) (r_reference.txt)
  CHECK(relative_error(es.eta_sq, 2034.2592592592584 / 9232.8148148148121) < 1e-13);
  const auto factorial = factorial_anova(d.response, {d.factors[1]}, {"tension"});
  CHECK(relative_error(factorial.terms[0].eta_sq, es.eta_sq) < 1e-12);
  CHECK(relative_error(factorial.terms[0].omega_sq, es.omega_sq) < 1e-12);
}
