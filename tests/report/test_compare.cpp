// scalebench compare on run-level observations: matching cells, the ratio's interval, Welch's
// p, the verdicts at a threshold, and the cells one side lacks.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "report/analysis/compare.hpp"
#include "report/export/compare_export.hpp"
#include "stats/ratio_interval.hpp"

using namespace scalebench;
using report::Verdict;

namespace {

report::Observations runs(const std::string& source,
                          const std::vector<std::pair<std::string, std::vector<double>>>& cells) {
  report::Observations data;
  data.source = source;
  data.response = "mean epoch seconds of a run";
  data.unit = "run";
  data.factor_names = {"group"};
  data.levels.resize(1);
  for (const auto& [cell, values] : cells)
    for (const double v : values) {
      data.values.push_back(v);
      data.levels[0].push_back(cell);
    }
  return data;
}

}  // namespace

TEST_CASE("compare: each shared cell's ratio, interval, Welch p and verdict") {
  const auto baseline = runs("old", {{"mpirun np=1", {10.0, 10.02, 9.98}},
                                     {"mpirun np=2", {6.0, 6.1, 5.9}},
                                     {"mpirun np=4", {4.0, 4.4, 3.6}},
                                     {"mpirun np=8", {3.0, 3.02, 2.98}},
                                     {"single", {11.0}}});
  const auto candidate = runs("new", {{"mpirun np=1", {10.0, 10.02, 9.98}},
                                      {"mpirun np=2", {6.6, 6.7, 6.5}},
                                      {"mpirun np=4", {4.0, 4.6, 3.6}},
                                      {"mpirun np=8", {2.7, 2.71, 2.69}},
                                      {"single", {11.0, 11.1}},
                                      {"mpirun np=16", {2.0, 2.1}}});
  const auto c = report::compare_observations(baseline, candidate, {0.95, 0.02});
  REQUIRE(c.rows.size() == 5);
  CHECK(c.rows[0].cell == "mpirun np=1");
  // Identical runs: ratio 1, an interval well inside +-2%: no difference, and shown to be small.
  CHECK(c.rows[0].ratio == doctest::Approx(1));
  CHECK(c.rows[0].verdict == Verdict::NoDifference);
  CHECK(c.rows[0].within_threshold);
  // np=2 10% slower on tight runs: slower, with the interval and p of the stats functions.
  const auto& np2 = c.rows[1];
  CHECK(np2.ratio == doctest::Approx(6.6 / 6.0));
  const auto interval =
      stats::ratio_interval({6.6, 0.1 / std::sqrt(3.0), 2}, {6.0, 0.1 / std::sqrt(3.0), 2});
  CHECK(*np2.ratio_lower == doctest::Approx(interval.ci.lower));
  CHECK(*np2.ratio_upper == doctest::Approx(interval.ci.upper));
  // The p is the interval's own test (log scale), not Welch on the raw means (0.00183 here):
  // the verdict and the CI beside it can never disagree.
  CHECK(*np2.p == doctest::Approx(interval.p));
  CHECK(*np2.p == doctest::Approx(0.0019099904).epsilon(1e-6));  // numerical t tail in Python
  CHECK(np2.verdict == Verdict::Slower);
  // np=4: noisy runs, no significant change, and an interval wider than +-2%: no difference
  // detected, but not shown to be small either.
  CHECK(c.rows[2].verdict == Verdict::NoDifference);
  CHECK_FALSE(c.rows[2].within_threshold);
  // np=8: 10% faster.
  CHECK(c.rows[3].verdict == Verdict::Faster);
  // One baseline run: too few to tell, and said.
  CHECK(c.rows[4].verdict == Verdict::TooFewRuns);
  CHECK_FALSE(c.rows[4].p);
  CHECK(c.only_in_candidate == std::vector<std::string>{"mpirun np=16"});
  CHECK(c.only_in_baseline.empty());
  CHECK_FALSE(c.notes.empty());

  // The gate: np=2 is 10% slower; a 5% gate catches it, a 20% gate does not.
  CHECK(report::slower_than(c, 0.05).size() == 1);
  CHECK(report::slower_than(c, 0.20).empty());

  const auto text = report::render_comparison_text(c);
  CHECK(text.find("baseline:  old\ncandidate: new\n") == 0);
  CHECK(text.find("slower") != std::string::npos);
  CHECK(text.find("only in the candidate (not compared): mpirun np=16") != std::string::npos);
  const auto json = report::comparison_json(c);
  CHECK(json["cells"].size() == 5);
  CHECK(json["cells"][1]["verdict"] == "slower");
  CHECK(json["cells"][4]["ratio_ci"].is_null());
  CHECK(json["threshold"] == 0.02);
}

TEST_CASE("compare: the threshold decides what counts as a change") {
  const auto baseline = runs("a", {{"x", {6.0, 6.1, 5.9}}});
  const auto candidate = runs("b", {{"x", {6.6, 6.7, 6.5}}});
  // 10% slower, interval about [1.06, 1.14]: slower at 5%; no difference at 15%, where the whole
  // interval is inside the band; at 12% no difference, but the interval crosses the band.
  CHECK(report::compare_observations(baseline, candidate, {0.95, 0.05}).rows[0].verdict ==
        Verdict::Slower);
  const auto at15 = report::compare_observations(baseline, candidate, {0.95, 0.15}).rows[0];
  CHECK(at15.verdict == Verdict::NoDifference);
  CHECK(at15.within_threshold);
  const auto at12 = report::compare_observations(baseline, candidate, {0.95, 0.12}).rows[0];
  CHECK(at12.verdict == Verdict::NoDifference);
  CHECK_FALSE(at12.within_threshold);
}

TEST_CASE("compare: no shared cell, or bad options, are named errors") {
  CHECK_THROWS_WITH_AS(
      report::compare_observations(runs("a", {{"x", {1, 2}}}), runs("b", {{"y", {1, 2}}})),
      doctest::Contains("share no cell"), report::InputError);
  CHECK_THROWS_AS(report::compare_observations(runs("a", {{"x", {1, 2}}}),
                                               runs("b", {{"x", {1, 2}}}), {1.5, 0.02}),
                  report::InputError);
}

TEST_CASE("compare: durations near the largest double give finite numbers, never nan") {
  // 1e308 seconds (a corrupt or hand-made database): the sum of two overflowed, the mean and the
  // ratio printed -nan.
  const auto c =
      report::compare_observations(runs("a", {{"x", {1e308, 1.2e308, 1.1e308}}}),
                                   runs("b", {{"x", {1.1e308, 1.3e308, 1.2e308}}}), {0.95, 0.02});
  REQUIRE(c.rows.size() == 1);
  const auto& row = c.rows[0];
  CHECK(row.baseline_mean == doctest::Approx(1.1e308));
  CHECK(row.ratio == doctest::Approx(1.2 / 1.1));
  REQUIRE(row.ratio_lower);
  CHECK(std::isfinite(*row.ratio_lower));
  CHECK(std::isfinite(*row.ratio_upper));
  CHECK(std::isfinite(*row.p));
  const auto text = report::render_comparison_text(c);
  CHECK(text.find("nan") == std::string::npos);
  CHECK(text.find("inf") == std::string::npos);
  // A value that is not a finite number is refused, naming its cell.
  CHECK_THROWS_WITH_AS(
      report::compare_observations(runs("a", {{"x", {1, INFINITY}}}), runs("b", {{"x", {1, 2}}})),
      doctest::Contains("x"), report::InputError);
}
