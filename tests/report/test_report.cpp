#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "report/analysis/report.hpp"
#include "stats/group_descriptives.hpp"
#include "stats/nested_anova.hpp"
#include "stats/ratio_interval.hpp"

using namespace scalebench;
using report::build_report;
using report::ReportError;

namespace {

// Adds one run's epochs, with `images` training images per epoch (absent when 0 is passed as -1).
void add_run(std::vector<report::Run>& runs, std::int64_t run_id, std::string condition,
             std::string launcher, int np, std::vector<double> durations, long long images = 1000,
             std::string experiment = "exp") {
  report::Run run;
  run.id = run_id;
  run.experiment = experiment;
  run.condition = condition;
  run.launcher = launcher;
  run.np = np;
  if (images >= 0) run.train_images = images;
  int epoch = 0;
  for (double d : durations) run.epochs.emplace_back(++epoch, d);
  runs.push_back(run);
}

bool has_note(const report::ReportTable& table, const std::string& part) {
  return std::any_of(table.notes.begin(), table.notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

std::vector<report::Run> paper_like() {
  std::vector<report::Run> samples;
  add_run(samples, 1, "single", "single", 1, {8, 9, 10});
  add_run(samples, 2, "mpirun", "mpirun", 1, {10, 11});
  add_run(samples, 3, "mpirun", "mpirun", 1, {12, 11});
  add_run(samples, 4, "mpirun", "mpirun", 2, {6, 6.5, 5.5});
  add_run(samples, 5, "mpirun", "mpirun", 4, {4, 4.5});
  return samples;
}

}  // namespace

TEST_CASE("labels: the condition for single, else condition and np") {
  CHECK(report::group_label("single", "single", 1) == "single");
  CHECK(report::group_label("mpirun", "mpirun", 2) == "mpirun np=2");
  CHECK(report::group_label("gloo", "srun", 16) == "gloo np=16");
}

TEST_CASE("groups in first-appearance order, base is the first launched np=1 group") {
  const auto table = build_report("exp", paper_like(), {.unit = "epoch"});
  CHECK(table.experiment == "exp");
  CHECK(table.unit == "epoch");
  CHECK(table.base_label == "mpirun np=1");
  REQUIRE(table.rows.size() == 4);
  CHECK(table.rows[0].label == "single");
  CHECK(table.rows[1].label == "mpirun np=1");
  CHECK(table.rows[2].label == "mpirun np=2");
  CHECK(table.rows[3].label == "mpirun np=4");

  const auto& base = table.rows[1];
  CHECK(base.is_base);
  CHECK_FALSE(table.rows[0].is_base);
  CHECK(base.condition == "mpirun");
  CHECK(base.launcher == "mpirun");
  CHECK(base.np == 1);
  CHECK(base.runs == 2);
  CHECK(base.epochs == 4);
  CHECK(base.mean_epoch_seconds == doctest::Approx(11));
  REQUIRE(base.sd_epoch_seconds);
  CHECK(*base.sd_epoch_seconds == doctest::Approx(0.816496580927726));  // sqrt(2/3)
  CHECK_FALSE(base.tukey_p_vs_base);
  CHECK(*base.speedup_vs_base == doctest::Approx(1));
  CHECK(*base.scaling_efficiency == doctest::Approx(1));
  CHECK(*base.images_per_second == doctest::Approx(4000.0 / 44));
}

TEST_CASE("throughput, speed-up and scaling efficiency follow docs/report.md") {
  const auto table = build_report("exp", paper_like());
  const auto& base = table.rows[1];
  const auto& np2 = table.rows[2];
  const auto& np4 = table.rows[3];
  const auto& single = table.rows[0];
  CHECK(*np2.images_per_second == doctest::Approx(3000.0 / 18));
  CHECK(*np2.speedup_vs_base == doctest::Approx(11.0 / 6));
  CHECK(*np2.scaling_efficiency == doctest::Approx((3000.0 / 18) / (2 * 4000.0 / 44)));
  CHECK(*np4.scaling_efficiency == doctest::Approx((2000.0 / 8.5) / (4 * 4000.0 / 44)));
  // A single-process group is compared with the base: its throughput over the base's.
  CHECK(*single.images_per_second == doctest::Approx(3000.0 / 27));
  CHECK(*single.scaling_efficiency == doctest::Approx((3000.0 / 27) / *base.images_per_second));
  CHECK(*single.speedup_vs_base == doctest::Approx(11.0 / 9));
}

TEST_CASE("unit run (the default): one mean per run, its SD, t interval and ANOVA on N = runs") {
  const auto table = build_report("exp", paper_like());
  CHECK(table.unit == "run");
  CHECK(has_note(table, "Unit of analysis: one run"));
  const auto& base = table.rows[1];  // runs 10.5 and 11.5
  CHECK(base.mean_epoch_seconds == doctest::Approx(11));
  CHECK(*base.sd_epoch_seconds == doctest::Approx(0.7071067811865476));
  // 11 -/+ qt(0.975, 1) x 0.5 (R: 12.70620473617471)
  CHECK(*base.mean_ci_lower == doctest::Approx(11 - 12.70620473617471 * 0.5).epsilon(1e-12));
  CHECK(*base.mean_ci_upper == doctest::Approx(11 + 12.70620473617471 * 0.5).epsilon(1e-12));
  // One run in a group: no SD and no interval, said.
  CHECK_FALSE(table.rows[2].sd_epoch_seconds);
  CHECK_FALSE(table.rows[2].mean_ci_lower);
  CHECK_FALSE(table.rows[2].speedup_ci_lower);
  CHECK(has_note(table, "groups with one run: single, mpirun np=2, mpirun np=4"));
  // Two runs: an interval on 1 d.f., said to say almost nothing (issue 22).
  CHECK(has_note(table, "Groups with 2 runs: mpirun np=1: their intervals rest on 1 degree"));
  CHECK_FALSE(has_note(table, "Intervals reaching below 0"));
  // Two runs far apart: the interval of a positive quantity reaches below 0, and is marked.
  std::vector<report::Run> spread;
  add_run(spread, 1, "mpirun", "mpirun", 1, {1, 1});
  add_run(spread, 2, "mpirun", "mpirun", 1, {3, 3});
  add_run(spread, 3, "mpirun", "mpirun", 2, {1, 1});
  add_run(spread, 4, "mpirun", "mpirun", 2, {1.1, 1.1});
  const auto wide = build_report("exp", spread);
  REQUIRE(wide.rows[0].mean_ci_lower);
  CHECK(*wide.rows[0].mean_ci_lower < 0);  // 2 -/+ 12.7 x 1
  CHECK(has_note(wide, "Intervals reaching below 0: mpirun np=1: an epoch time is positive"));
  // Five runs in four groups: d.f. (3, 1).
  REQUIRE(table.anova);
  CHECK(table.anova->df_between == 3);
  CHECK(table.anova->df_within == 1);
  CHECK_FALSE(has_note(table, "pseudo-replication"));
}

TEST_CASE("unit run: the speed-up's interval is the log-scale delta method on the run means") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "mpirun", "mpirun", 1, {10, 10});
  add_run(samples, 2, "mpirun", "mpirun", 1, {12, 12});
  add_run(samples, 3, "mpirun", "mpirun", 2, {5, 5});
  add_run(samples, 4, "mpirun", "mpirun", 2, {7, 7});
  const auto table = build_report("exp", samples);
  const auto& np2 = table.rows[1];
  CHECK(*np2.speedup_vs_base == doctest::Approx(11.0 / 6));
  // cv^2 = (1/11)^2 and (1/6)^2 (se = 1 for both), Welch d.f. = 2 (equal d.f. 1 each):
  // (a + b)^2 / (a^2 + b^2).
  const double a = 1.0 / 121, b = 1.0 / 36;
  const double df = (a + b) * (a + b) / (a * a + b * b);
  const auto ratio = stats::ratio_interval({11, 1, 1}, {6, 1, 1});
  CHECK(ratio.df == doctest::Approx(df));
  CHECK(*np2.speedup_ci_lower == doctest::Approx(ratio.ci.lower));
  CHECK(*np2.speedup_ci_upper == doctest::Approx(ratio.ci.upper));
  CHECK(*np2.speedup_ci_lower < 11.0 / 6);
  CHECK(*np2.speedup_ci_upper > 11.0 / 6);
  CHECK_FALSE(table.rows[0].speedup_ci_lower);  // the base
}

TEST_CASE("unit nested: the mixed model's means, intervals, F and Tukey") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "mpirun", "mpirun", 1, {10, 10.4, 10.2});
  add_run(samples, 2, "mpirun", "mpirun", 1, {11, 11.2, 11.3});
  add_run(samples, 3, "mpirun", "mpirun", 2, {5, 5.2, 5.1});
  add_run(samples, 4, "mpirun", "mpirun", 2, {6.1, 6.0, 6.2});
  const auto table = build_report("exp", samples, {.unit = "nested"});
  const auto fit =
      stats::nested_anova({{{10, 10.4, 10.2}, {11, 11.2, 11.3}}, {{5, 5.2, 5.1}, {6.1, 6.0, 6.2}}});
  REQUIRE(table.anova);
  CHECK(table.anova->f == doctest::Approx(*fit.f));
  CHECK(table.anova->df_within == doctest::Approx(*fit.df_den));
  CHECK(table.rows[0].mean_epoch_seconds == doctest::Approx(fit.means[0]));
  CHECK(*table.rows[1].tukey_p_vs_base == doctest::Approx(stats::nested_tukey(fit)[0].p_adjusted));
  CHECK(*table.rows[1].mean_ci_lower < fit.means[1]);
  CHECK(has_note(table, "epochs within runs"));
  // Balanced: the F of the run means (2 d.f. for the runs left after the groups).
  CHECK(table.anova->df_within == doctest::Approx(2).epsilon(1e-6));
}

TEST_CASE("an unknown unit is refused with the known ones") {
  CHECK_THROWS_WITH_AS(build_report("exp", paper_like(), {.unit = "epochs"}),
                       "unknown unit of analysis 'epochs'; the units: run, nested, epoch",
                       ReportError);
}

TEST_CASE("ANOVA over all groups and Tukey p of each row against the base") {
  // Pooled, as the reference study: its variances differ more than 4-fold ("auto" would use
  // Welch's F and Games-Howell; tests/report/test_one_inference.cpp).
  const auto table = build_report("exp", paper_like(), {.unit = "epoch", .pairwise = "tukey"});
  REQUIRE(table.anova);
  CHECK(table.anova->df_between == 3);
  CHECK(table.anova->df_within == 12 - 4);
  CHECK(table.anova->f > 0);
  CHECK(table.anova->p < 0.001);
  for (const auto& row : table.rows) {
    if (row.is_base) continue;
    REQUIRE(row.tukey_p_vs_base);
    CHECK(*row.tukey_p_vs_base >= 0);
    CHECK(*row.tukey_p_vs_base <= 1);
  }
  // np=4 (mean 4.25) is far from the base (mean 11); single (mean 9) is nearer.
  CHECK(*table.rows[3].tukey_p_vs_base < *table.rows[0].tukey_p_vs_base);
  CHECK(has_note(table, "pseudo-replication"));
}

TEST_CASE("the base can be chosen by label: an unknown label lists the labels") {
  const auto table = build_report("exp", paper_like(), {.base_label = "single"});
  CHECK(table.base_label == "single");
  CHECK(table.rows[0].is_base);
  CHECK_FALSE(table.rows[0].tukey_p_vs_base);
  CHECK(table.rows[1].tukey_p_vs_base);
  CHECK(*table.rows[1].speedup_vs_base == doctest::Approx(9.0 / 11));
  // The launched rows still scale against their own np=1 group.
  CHECK(*table.rows[1].scaling_efficiency == doctest::Approx(1));

  CHECK_THROWS_WITH_AS(
      build_report("exp", paper_like(), {.base_label = "mpirun np=3"}),
      "no group is labelled 'mpirun np=3'; the groups are: 'single', 'mpirun np=1', "
      "'mpirun np=2', 'mpirun np=4'",
      ReportError);
}

TEST_CASE("without a launched np=1 group the base is the first group and scaling is against it") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "mpirun", "mpirun", 2, {10, 11});
  add_run(samples, 2, "mpirun", "mpirun", 4, {6, 5});
  const auto table = build_report("exp", samples);
  CHECK(table.base_label == "mpirun np=2");
  CHECK(*table.rows[1].scaling_efficiency == doctest::Approx((2000.0 / 11) / (2 * 2000.0 / 21)));
}

TEST_CASE("one group: no ANOVA, no Tukey, and a note saying why") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "single", "single", 1, {1, 2, 3});
  const auto table = build_report("exp", samples);
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0].is_base);
  CHECK_FALSE(table.anova);
  CHECK(has_note(table, "only one group"));
}

TEST_CASE("a group with one epoch has no SD: all groups with one epoch give no ANOVA") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "mpirun", "mpirun", 1, {10});
  add_run(samples, 2, "mpirun", "mpirun", 2, {6, 7});
  auto table = build_report("exp", samples, {.unit = "epoch"});
  CHECK_FALSE(table.rows[0].sd_epoch_seconds);
  CHECK(table.rows[1].sd_epoch_seconds);
  CHECK(has_note(table, "one epoch: mpirun np=1"));
  CHECK(table.anova);

  samples.back().epochs.pop_back();  // run 2 keeps its first epoch only
  table = build_report("exp", samples, {.unit = "epoch"});
  CHECK_FALSE(table.anova);
  CHECK_FALSE(table.rows[1].tukey_p_vs_base);
  CHECK(has_note(table, "no within-group variance"));
}

TEST_CASE("no samples of the experiment: an error with a hint: other experiments are ignored") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "mpirun", "mpirun", 1, {10, 11}, 1000, "other");
  CHECK_THROWS_WITH_AS(build_report("exp", samples),
                       "no epochs with durations for experiment 'exp': did the runs fail? see "
                       "`scalebench query exp runs`",
                       ReportError);
  add_run(samples, 2, "mpirun", "mpirun", 2, {5, 6});
  const auto table = build_report("exp", samples);
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0].runs == 1);
}

TEST_CASE("unknown train_images: no images/s, no efficiency: partly known gets a note") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "mpirun", "mpirun", 1, {10, 11}, -1);
  add_run(samples, 2, "mpirun", "mpirun", 2, {5, 6}, -1);
  add_run(samples, 3, "mpirun", "mpirun", 2, {5, 6}, 1000);
  const auto table = build_report("exp", samples);
  CHECK_FALSE(table.rows[0].images_per_second);
  CHECK_FALSE(table.rows[1].images_per_second);
  CHECK_FALSE(table.rows[1].scaling_efficiency);
  CHECK(table.rows[1].speedup_vs_base);
  CHECK(has_note(table, "did not report train_images: mpirun np=2"));
}

TEST_CASE("groups that would share a label name their launcher") {
  std::vector<report::Run> samples;
  add_run(samples, 1, "gloo", "mpirun", 2, {5, 6});
  add_run(samples, 2, "gloo", "srun", 2, {5, 6});
  add_run(samples, 3, "gloo", "srun", 4, {3, 4});
  const auto table = build_report("exp", samples);
  CHECK(table.rows[0].label == "gloo [mpirun] np=2");
  CHECK(table.rows[1].label == "gloo [srun] np=2");
  CHECK(table.rows[2].label == "gloo np=4");
}

TEST_CASE("an invalid duration is reported, not averaged") {
  std::vector<report::Run> samples;
  add_run(samples, 7, "mpirun", "mpirun", 1, {10, -1});
  CHECK_THROWS_AS(build_report("exp", samples), ReportError);
}

namespace {

// Three mpirun groups of three runs each (one epoch per run, so the run means are the epochs):
// np=1 at about 10 s, np=2 and np=4 both at about 6 s.
std::vector<report::Run> letters_case() {
  std::vector<report::Run> samples;
  std::int64_t id = 0;
  for (const double d : {10.0, 10.2, 9.8}) add_run(samples, ++id, "mpirun", "mpirun", 1, {d});
  for (const double d : {6.0, 6.1, 5.9}) add_run(samples, ++id, "mpirun", "mpirun", 2, {d});
  for (const double d : {6.05, 5.95, 6.0}) add_run(samples, ++id, "mpirun", "mpirun", 4, {d});
  return samples;
}

}  // namespace

TEST_CASE("letters: the whole Tukey family's compact display, named in the table's order") {
  const auto table = build_report("exp", letters_case());
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[0].letters == "a");
  CHECK(table.rows[1].letters == "b");  // np=2 and np=4 do not differ
  CHECK(table.rows[2].letters == "b");
  // One group: no Tukey family, no letters.
  std::vector<report::Run> one;
  add_run(one, 1, "mpirun", "mpirun", 1, {1, 2});
  add_run(one, 2, "mpirun", "mpirun", 1, {1.5, 2.5});
  CHECK(!build_report("exp", one).rows[0].letters);
}

TEST_CASE("images/s and efficiency intervals: the speed-up's delta method, none at the base") {
  const auto table = build_report("exp", letters_case());
  const auto& base = table.rows[0];
  CHECK(!base.efficiency_ci_lower);  // efficiency 1 by definition
  REQUIRE(base.images_ci_lower);
  // images/s = images / mean: log(images/s) has the mean's relative error, t on n - 1 d.f.
  const double t = stats::students_t_quantile(0.975, 2);
  const double se = 0.2 / std::sqrt(3.0);  // SD of 10, 10.2, 9.8 is 0.2
  CHECK(*base.images_ci_lower == doctest::Approx(100.0 * std::exp(-t * se / 10.0)).epsilon(1e-12));
  CHECK(*base.images_ci_upper == doctest::Approx(100.0 * std::exp(t * se / 10.0)).epsilon(1e-12));
  for (std::size_t i = 1; i < 3; ++i) {
    const auto& row = table.rows[i];
    INFO(row.label);
    REQUIRE(row.efficiency_ci_lower);
    REQUIRE(row.speedup_ci_lower);
    // Efficiency = speed-up x np_base / np (same images per epoch): the same relative interval.
    const double scale = 1.0 / row.np;
    CHECK(*row.scaling_efficiency == doctest::Approx(*row.speedup_vs_base * scale));
    CHECK(*row.efficiency_ci_lower == doctest::Approx(*row.speedup_ci_lower * scale));
    CHECK(*row.efficiency_ci_upper == doctest::Approx(*row.speedup_ci_upper * scale));
    CHECK(*row.efficiency_ci_lower < *row.scaling_efficiency);
    CHECK(*row.scaling_efficiency < *row.efficiency_ci_upper);
  }
}
