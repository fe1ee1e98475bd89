// report/analysis/plan.hpp on in-memory tables: the cells and pairs it plans, and its refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "report/analysis/plan.hpp"
#include "stats/power.hpp"

using namespace scalebench;

namespace {

report::ReportRow row(std::string label, std::vector<double> runs, bool base = false) {
  report::ReportRow r;
  r.label = std::move(label);
  r.runs = runs.size();
  r.run_epoch_seconds = std::move(runs);
  r.is_base = base;
  return r;
}

report::ReportTable table() {
  report::ReportTable t;
  t.experiment = "e";
  t.base_label = "a";
  t.rows = {row("a", {1.0, 1.2, 1.1}, true), row("b", {2.0, 2.2}), row("c", {0.9, 1.0, 1.1, 1.0})};
  return t;
}

}  // namespace

TEST_CASE("plan: cells, the family's pooled SD and the pairs against the base") {
  const auto plan = report::plan_of(table(), {.precision = 0.05});
  REQUIRE(plan.cells.size() == 3);
  CHECK(plan.cells[0].mean == doctest::Approx(1.1));
  CHECK(plan.cells[0].sd == doctest::Approx(0.1));
  CHECK(plan.cells[0].runs_needed == stats::runs_for_precision(1.1, plan.cells[0].sd, 0.05));
  CHECK(plan.family == 3);
  CHECK(plan.family_df == 6);
  // SS within: 0.02 + 0.02 + 0.02 = 0.06 on 6 d.f.
  CHECK(plan.family_sd == doctest::Approx(std::sqrt(0.01)));
  CHECK(plan.pairs.empty());

  const auto detect = report::plan_of(table(), {.detect = 0.1, .power = 0.9});
  REQUIRE(detect.pairs.size() == 2);
  CHECK(detect.base == "a");
  CHECK(detect.pairs[0].other == "b");
  CHECK(detect.pairs[1].other == "c");
  CHECK(detect.pairs[0].delta == doctest::Approx(0.11));
  // The pair (a, b): SS 0.02 + 0.02 on 3 d.f.
  CHECK(detect.pairs[0].sd == doctest::Approx(std::sqrt(0.04 / 3)));
  CHECK(detect.pairs[0].t_runs == stats::two_sample_t_runs(0.11, std::sqrt(0.04 / 3), 0.9));
  CHECK(detect.pairs[1].tukey_runs == stats::tukey_pair_runs(3, 0.11, 0.1, 0.9));
  CHECK(detect.pairs[0].tukey_n == detect.pairs[1].tukey_n);  // same delta, same family SD
  CHECK(detect.pairs[0].t_power_now ==
        doctest::Approx(stats::two_sample_t_power(2, 0.11, std::sqrt(0.04 / 3))));
}

TEST_CASE("plan: refusals name the option or the cell") {
  auto few = table();
  few.rows[1] = row("b", {2.0});
  CHECK_THROWS_WITH_AS(report::plan_of(few, {}),
                       "cell 'b' has 1 ok run: planning needs at least 2 per cell (their SD); run "
                       "more repetitions first",
                       report::ReportError);
  CHECK_THROWS_WITH_AS(report::plan_of(table(), {.precision = 0}),
                       "--precision 0: expected a fraction in (0, 1), e.g. 0.02 or 2%",
                       report::ReportError);
  CHECK_THROWS_AS(report::plan_of(table(), {.precision = 1}), report::ReportError);
  CHECK_THROWS_AS(report::plan_of(table(), {.detect = 0}), report::ReportError);
  CHECK_THROWS_AS(report::plan_of(table(), {.power = 1}), report::ReportError);
  auto epoch = table();
  epoch.unit = "epoch";
  CHECK_THROWS_AS(report::plan_of(epoch, {}), report::ReportError);
  auto one = table();
  one.rows.resize(1);
  CHECK_NOTHROW(report::plan_of(one, {}));
  CHECK_THROWS_WITH_AS(report::plan_of(one, {.detect = 0.05}),
                       "--detect needs two cells or more; the table has only 'a'",
                       report::ReportError);
}
