// stats::interaction_contrast against R: scripts/reference/interaction_contrast.R (its output
// is committed beside it as interaction_contrast.out).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "stats/interaction_contrast.hpp"

using namespace scalebench::stats;

namespace {

std::vector<double> logs(std::initializer_list<double> values) {
  std::vector<double> out;
  for (double v : values) out.push_back(std::log(v));
  return out;
}

}  // namespace

TEST_CASE("interaction contrast of log(images/s): R's lm(log(ips) ~ framework * np)") {
  const std::array<std::array<std::vector<double>, 2>, 2> cells = {{
      {logs({1320, 1290, 1350}), logs({2400, 2300, 2450})},
      {logs({1190, 1150, 1210}), logs({2250, 2200, 2310, 2280})},
  }};
  const auto c = interaction_contrast(cells);
  CHECK(c.estimate == doctest::Approx(0.056394987176600457).epsilon(1e-12));
  CHECK(c.se == doctest::Approx(0.028269534265280286).epsilon(1e-12));
  CHECK(c.t == doctest::Approx(1.9949032993395626).epsilon(1e-12));
  CHECK(c.p == doctest::Approx(0.077184346417403599).epsilon(1e-10));
  CHECK(c.df == 9);
  CHECK(c.ci.lower == doctest::Approx(-0.0075551422505726398).epsilon(1e-10));
  CHECK(c.ci.upper == doctest::Approx(0.12034511660377356).epsilon(1e-10));
}

TEST_CASE("interaction contrast: edge cases are explicit") {
  using Cells = std::array<std::array<std::vector<double>, 2>, 2>;
  // One observation per cell: no residual degrees of freedom.
  CHECK_THROWS_AS(interaction_contrast(Cells{{{{{1}, {2}}}, {{{3}, {4}}}}}), StatsError);
  // An empty cell.
  CHECK_THROWS_AS(interaction_contrast(Cells{{{{{1, 2}, {}}}, {{{3}, {4}}}}}), StatsError);
  // A bad confidence level, a non-finite value.
  CHECK_THROWS_AS(interaction_contrast(Cells{{{{{1, 1}, {2}}}, {{{3}, {4}}}}}, 1.0), StatsError);
  CHECK_THROWS_AS(interaction_contrast(Cells{
                      {{{{1, std::numeric_limits<double>::quiet_NaN()}, {2}}}, {{{3}, {4}}}}}),
                  StatsError);
  // Zero residual variance: the point itself, and a certain difference.
  const auto exact = interaction_contrast(Cells{{{{{1, 1}, {2}}}, {{{3}, {5}}}}});
  CHECK(exact.estimate == 1.0);
  CHECK(exact.se == 0.0);
  CHECK(exact.ci.lower == 1.0);
  CHECK(exact.ci.upper == 1.0);
  CHECK(exact.p == 0.0);
  const auto none = interaction_contrast(Cells{{{{{1, 1}, {2}}}, {{{3}, {4}}}}});
  CHECK(none.estimate == 0.0);
  CHECK(none.p == 1.0);
}
