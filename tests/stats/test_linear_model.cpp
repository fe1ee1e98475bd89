// The least-squares core against R's lm (longley, in tests/data/stats/factorial_reference.txt) and
// against exact answers.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "factorial_reference.hpp"
#include "stats/linear_model.hpp"

using scalebench::stats::ColumnMajorMatrix;
using scalebench::stats::least_squares;
using scalebench::stats::sequential_anova;
using scalebench::stats::StatsError;
using scalebench::stats::TermColumns;
using scalebench::test::factorial_records;

namespace {

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

ColumnMajorMatrix with_intercept(const std::vector<std::vector<double>>& columns) {
  const std::size_t n = columns.front().size();
  ColumnMajorMatrix x{n, columns.size() + 1, std::vector<double>(n, 1.0)};
  for (const auto& c : columns) x.values.insert(x.values.end(), c.begin(), c.end());
  return x;
}

}  // namespace

TEST_CASE("an exact line is recovered exactly, with zero residuals") {
  const std::vector<double> xs{0, 1, 2, 3, 4};
  std::vector<double> y;
  for (double v : xs) y.push_back(1 + 2 * v);
  const auto fit = least_squares(with_intercept({xs}), y);
  CHECK(fit.coefficients[0] == doctest::Approx(1).epsilon(1e-14));
  CHECK(fit.coefficients[1] == doctest::Approx(2).epsilon(1e-14));
  CHECK(fit.rss < 1e-28);
  CHECK(fit.df_residual == 3);
  for (double r : fit.residuals) CHECK(std::abs(r) < 1e-14);
}

TEST_CASE("least squares matches R's lm on longley (condition number ~ 2e7)") {
  const auto data = factorial_records("longley", "lmdata");
  const auto want = factorial_records("longley", "lm").at(0).words;
  std::vector<double> y;
  std::vector<std::vector<double>> cols(6);
  for (const auto& r : data) {
    y.push_back(std::stod(r.words[0]));
    for (std::size_t j = 0; j < 6; ++j) cols[j].push_back(std::stod(r.words[1 + j]));
  }
  const auto fit = least_squares(with_intercept(cols), y);
  // Perturbation theory allows each side ~cond x eps ~ 5e-9 relative error in the coefficients;
  // both are Householder QR in the same column order, and agree to 2e-14 (rss to 2e-15) measured.
  CHECK(relative_error(fit.rss, std::stod(want[0])) < 1e-10);
  CHECK(fit.df_residual == std::stod(want[1]));
  for (std::size_t j = 0; j < 7; ++j) {
    CAPTURE(j);
    CHECK(relative_error(fit.coefficients[j], std::stod(want[2 + j])) < 1e-9);
  }
  // Residuals from Q agree with y - X beta.
  double ss = 0;
  for (double r : fit.residuals) ss += r * r;
  CHECK(relative_error(ss, fit.rss) < 1e-12);
}

TEST_CASE("a rank-deficient design or too few observations is refused") {
  const std::vector<double> a{1, 2, 3, 4};
  const std::vector<double> twice{2, 4, 6, 8};
  CHECK_THROWS_WITH_AS(least_squares(with_intercept({a, twice}), {1, 3, 2, 5}),
                       doctest::Contains("column 2"), StatsError);
  CHECK_THROWS_AS(least_squares(with_intercept({{1.0, 2.0}, {3.0, 1.0}}), {1, 2}), StatsError);
  CHECK_THROWS_AS(least_squares(with_intercept({a}), {1, 2, 3}), StatsError);
  CHECK_THROWS_AS(least_squares(with_intercept({a}), {1, 2, std::nan(""), 4}), StatsError);
  // sequential_anova names the term, not the column.
  CHECK_THROWS_WITH_AS(sequential_anova({1, 3, 2, 5}, {{"a", {a}}, {"twice_a", {twice}}}),
                       doctest::Contains("term twice_a"), StatsError);
}

TEST_CASE("sequential sums of squares add up to the total and do not depend on a constant offset") {
  const std::vector<double> y{3.1, 2.7, 4.4, 5.0, 6.2, 5.9, 8.1, 7.7};
  const std::vector<double> x1{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> x2{0, 1, 0, 1, 0, 1, 0, 1};
  const auto s = sequential_anova(y, {{"x1", {x1}}, {"x2", {x2}}});
  CHECK(s.df_residual == 5);
  CHECK(relative_error(s.ss[0] + s.ss[1] + s.rss, s.ss_total) < 1e-14);
  // Shifted by 2^20 the values are rounded to 2^-32 (~2e-10 relative to their spread), and the
  // centring inside keeps the fit free of the offset: the SS agree to that rounding.
  std::vector<double> shifted = y;
  for (double& v : shifted) v += 1048576.0;
  const auto t = sequential_anova(shifted, {{"x1", {x1}}, {"x2", {x2}}});
  CHECK(relative_error(t.ss[0], s.ss[0]) < 1e-9);
  CHECK(relative_error(t.rss, s.rss) < 1e-9);
}
