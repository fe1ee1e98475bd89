// The statistics assembly of `scalebench stats` (report/analysis/statistics.hpp) on R's warpbreaks,
// against R 4.2's aov and TukeyHSD (values printed by scripts/reference/stats_reference.R and R's
// own printout).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "db/database.hpp"
#include "report/analysis/report.hpp"
#include "report/analysis/statistics.hpp"
#include "report/data/csv_table.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {
const std::string kWarpbreaks = (test::data_dir() / "cli" / "warpbreaks.csv").string();
}

TEST_CASE("one factor from CSV: ANOVA and Tukey match R") {
  const auto report = report::analyze_observations(
      report::observations_from_csv(kWarpbreaks, "breaks", {"tension"}), 2, 0.95);
  REQUIRE(report.anova.size() == 2);
  // R: summary(aov(breaks ~ tension, warpbreaks))
  CHECK(report.anova[0].term == "tension");
  CHECK(report.anova[0].df == 2);
  CHECK(report.anova[0].ss == doctest::Approx(2034.2592592592594).epsilon(1e-12));
  CHECK(*report.anova[0].f == doctest::Approx(7.2061138808711682).epsilon(1e-10));
  CHECK(*report.anova[0].p == doctest::Approx(0.0017528167458527).epsilon(1e-8));
  CHECK(report.anova[1].term == "Residuals");
  CHECK(report.anova[1].df == 51);
  // R: TukeyHSD(aov(breaks ~ tension, warpbreaks)) prints M-L, H-L, H-M
  REQUIRE(report.tukey.size() == 3);
  CHECK(report.tukey[0].a == "M");
  CHECK(report.tukey[0].b == "L");
  CHECK(report.tukey[0].diff == doctest::Approx(-10.0).epsilon(1e-12));
  CHECK(report.tukey[0].lwr == doctest::Approx(-19.55982).epsilon(1e-6));
  CHECK(report.tukey[0].p_adj == doctest::Approx(0.0384598).epsilon(1e-5));
  CHECK(report.tukey[2].a == "H");
  CHECK(report.tukey[2].b == "M");
  CHECK(report.tukey[2].upr == doctest::Approx(4.8376022).epsilon(1e-6));
  CHECK(report.tukey[2].p_adj == doctest::Approx(0.4630831).epsilon(1e-6));
}

TEST_CASE("summary statistics: the reference study's Table 1 re-analysed") {
  // Means and SDs as printed (n = 51 per group, FACTS.md): F is 1119.95, not the printed 1191.61,
  // and the Tukey p-values are real numbers, not the 0.001 / 0.9 clipping limits.
  const auto report = report::analyze_summary_file(
      (test::data_dir() / "cli" / "horovodrunner_table1.csv").string(), 0.95);
  REQUIRE(report.anova.size() == 2);
  CHECK(report.anova[0].df == 7);
  CHECK(report.anova[1].df == 400);
  CHECK(*report.anova[0].f == doctest::Approx(1119.95).epsilon(1e-5));
  CHECK(*report.anova[0].p > 1e-259);
  CHECK(*report.anova[0].p < 1e-257);
  REQUIRE(report.tukey.size() == 28);
  for (const auto& pair : report.tukey) {
    CHECK(pair.p_adj != 0.001);
    CHECK(pair.p_adj != 0.9);
  }
  CHECK(report.tukey[0].a == "hvd.np=8 (driver)");
  CHECK(report.tukey[0].b == "Single");
  CHECK(report.tukey[0].diff == doctest::Approx(2.21));
  CHECK(report.tests.at(0).test == "Welch ANOVA");
}

TEST_CASE("two factors from CSV: type III table with interaction, as car::Anova prints it") {
  // R: options(contrasts = c("contr.sum", "contr.poly")); car::Anova(lm(breaks ~ wool * tension),
  // type = 3)
  const auto report = report::analyze_observations(
      report::observations_from_csv(kWarpbreaks, "breaks", {"wool", "tension"}), 3, 0.95);
  CHECK(report.ss_type == "III");
  REQUIRE(report.anova.size() == 4);
  CHECK(report.anova[0].term == "wool");
  CHECK(report.anova[2].term == "wool:tension");
  CHECK(report.anova[3].term == "Residuals");
  CHECK(*report.anova[0].f == doctest::Approx(3.7653).epsilon(1e-4));
  CHECK(*report.anova[1].p == doctest::Approx(0.0006926).epsilon(1e-3));
  CHECK(*report.anova[2].f == doctest::Approx(4.1891).epsilon(1e-4));
  CHECK(report.anova[3].df == 48);
  // Balanced (9 per cell): R's TukeyHSD gives the same pairs, so no warning about unbalanced
  // designs.
  CHECK_FALSE(report.tukey.empty());
  for (const auto& warning : report.warnings)
    CHECK(warning.find("unbalanced") == std::string::npos);
}

TEST_CASE("two factors, one cell short: the Tukey pairs say they differ from R's there") {
  test::TempDir dir;
  const auto short_cell = dir / "short.csv";
  {
    std::ifstream in(kWarpbreaks);
    std::ofstream out(short_cell);
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    lines.pop_back();  // the last observation: its cell has 8, the others 9
    for (const auto& l : lines) out << l << '\n';
  }
  const auto report = report::analyze_observations(
      report::observations_from_csv(short_cell.string(), "breaks", {"wool", "tension"}), 3, 0.95);
  CHECK_FALSE(report.tukey.empty());
  bool warned = false;
  for (const auto& warning : report.warnings)
    warned = warned || warning.find("unbalanced design") != std::string::npos;
  CHECK(warned);
}

namespace {

// Two groups (mpirun np=1 and np=2), two runs each, three epochs per run.
std::string make_results_database(const test::TempDir& dir) {
  const auto path = (dir / "r.db").string();
  auto database = db::Database::open(path);
  db::ExperimentRecord experiment;
  experiment.name = "scaling";
  const auto id = database.insert_experiment(experiment);
  const double epoch_times[2][2][3] = {{{10, 11, 12}, {12, 13, 14}}, {{5, 6, 7}, {6, 6, 6}}};
  for (int np = 1; np <= 2; ++np) {
    for (int repetition = 1; repetition <= 2; ++repetition) {
      db::RunBundle bundle;
      bundle.run.experiment_id = id;
      bundle.run.experiment = "scaling";
      bundle.run.condition = "mpirun";
      bundle.run.launcher = "mpirun";
      bundle.run.np = np;
      bundle.run.repetition = repetition;
      bundle.run.status = db::RunStatus::Ok;
      for (int e = 0; e < 3; ++e)
        bundle.epochs.push_back(
            {0, e + 1, 3, e * 10.0, epoch_times[np - 1][repetition - 1][e], {}, {}, {}});
      database.insert_run(bundle);
    }
  }
  return path;
}

}  // namespace

TEST_CASE("from the results database: per run by default, per epoch with a warning") {
  test::TempDir dir;
  const auto path = make_results_database(dir);
  const auto per_run = report::observations_from_database(path, {}, {}, "run");
  CHECK(per_run.unit == "run");
  CHECK(per_run.values == std::vector<double>{11, 13, 6, 6});
  CHECK(per_run.levels[0] ==
        std::vector<std::string>{"mpirun np=1", "mpirun np=1", "mpirun np=2", "mpirun np=2"});
  CHECK(per_run.warnings.empty());
  const auto report = report::analyze_observations(per_run, 2, 0.95);
  CHECK(report.anova[1].df == 2);  // 4 runs - 2 groups

  const auto per_epoch = report::observations_from_database(
      path, report::InstanceQuery{std::string("scaling"), {}, false}, {"np"}, "epoch");
  CHECK(per_epoch.values.size() == 12);
  CHECK(per_epoch.levels[0][0] == "1");
  REQUIRE(per_epoch.warnings.size() == 1);
  CHECK(per_epoch.warnings[0].find("pseudo-replication") != std::string::npos);
  CHECK(report::analyze_observations(per_epoch, 2, 0.95).anova[1].df == 10);

  CHECK_THROWS_AS(report::observations_from_database(path, {}, {"model"}, "run"),
                  report::InputError);
  CHECK_THROWS_AS(report::observations_from_database(
                      path, report::InstanceQuery{std::string("nope"), {}, false}, {}, "run"),
                  report::ReportError);
}

TEST_CASE(
    "two factors: Tukey per factor and per cell with the model's error term, as R's TukeyHSD") {
  // R: TukeyHSD(aov(breaks ~ wool * tension, warpbreaks)), printed with %.17g.
  const auto report = report::analyze_observations(
      report::observations_from_csv(kWarpbreaks, "breaks", {"wool", "tension"}), 2, 0.95);
  REQUIRE(report.tukey.size() == 1 + 3 + 15);
  const auto& wool = report.tukey[0];
  CHECK(wool.factor == "wool");
  CHECK(wool.a == "B");
  CHECK(wool.b == "A");
  CHECK(wool.diff == doctest::Approx(-5.7777777777777821).epsilon(1e-12));
  CHECK(wool.lwr == doctest::Approx(-11.76457983415056).epsilon(1e-8));
  CHECK(wool.p_adj == doctest::Approx(0.058212975956185908).epsilon(1e-8));
  const auto& tension = report.tukey[1];
  CHECK(tension.factor == "tension");
  CHECK(tension.p_adj == doctest::Approx(0.022855398402122584).epsilon(1e-8));
  const auto& cell = report.tukey[4];  // first cell pair in order of appearance: A:M - A:L
  CHECK(cell.factor == "wool:tension");
  CHECK(cell.a == "A:M");
  CHECK(cell.b == "A:L");
  CHECK(cell.p_adj == doctest::Approx(0.0029580437903139467).epsilon(1e-8));
}

TEST_CASE("one factor: the robust family comes along") {
  const auto report = report::analyze_observations(
      report::observations_from_csv(kWarpbreaks, "breaks", {"tension"}), 2, 0.95);
  REQUIRE(report.tests.size() == 4);
  CHECK(report.tests[0].test == "Welch ANOVA");
  CHECK(report.tests[1].test == "Kruskal-Wallis");
  CHECK(report.games_howell.size() == 3);
  REQUIRE(report.groups.size() == 3);
  CHECK(report.groups[0].ci_lower.has_value());
  // R: multcomp::cld(glht(aov(breaks ~ tension, warpbreaks), mcp(tension = "Tukey"))).
  CHECK(report.groups[0].letters == "a");
  CHECK(report.groups[1].letters == "b");
  CHECK(report.groups[2].letters == "b");
}

TEST_CASE("--base keeps the pairs against one level, read as other - base") {
  auto report = report::analyze_observations(
      report::observations_from_csv(kWarpbreaks, "breaks", {"tension"}), 2, 0.95);
  report::keep_pairs_against(report, "M");
  REQUIRE(report.tukey.size() == 2);
  // R's M-L row (diff -10, lwr -19.55982, upr -0.4401756) turned to L-M.
  CHECK(report.tukey[0].a == "L");
  CHECK(report.tukey[0].b == "M");
  CHECK(report.tukey[0].diff == doctest::Approx(10.0));
  CHECK(report.tukey[0].lwr == doctest::Approx(0.4401756).epsilon(1e-6));
  CHECK(report.tukey[0].upr == doctest::Approx(19.55982).epsilon(1e-6));
  CHECK(report.tukey[0].p_adj == doctest::Approx(0.0384598).epsilon(1e-5));
  CHECK(report.tukey[1].a == "H");  // R's H-M row unchanged
  CHECK(report.games_howell.size() == 2);
  CHECK_THROWS_AS(report::keep_pairs_against(report, "X"), report::InputError);
}

namespace {

// The quickstart's shape: single at np=1, mpirun at np=1 and 2; two runs each, whose two epochs
// equal the run's mean: single 10, 11; mpirun np=1 10.5, 11.5; mpirun np=2 6, 7.
std::string make_quickstart_shaped_database(const test::TempDir& dir) {
  const auto path = (dir / "q.db").string();
  auto database = db::Database::open(path);
  db::ExperimentRecord experiment;
  experiment.name = "quick";
  const auto id = database.insert_experiment(experiment);
  struct Cell {
    const char* condition;
    int np;
    double means[2];
  };
  for (const Cell& cell :
       {Cell{"single", 1, {10, 11}}, Cell{"mpirun", 1, {10.5, 11.5}}, Cell{"mpirun", 2, {6, 7}}}) {
    for (int repetition = 1; repetition <= 2; ++repetition) {
      db::RunBundle bundle;
      bundle.run.experiment_id = id;
      bundle.run.experiment = "quick";
      bundle.run.condition = bundle.run.launcher = cell.condition;
      bundle.run.np = cell.np;
      bundle.run.repetition = repetition;
      const double mean = cell.means[repetition - 1];
      for (int e = 0; e < 2; ++e) bundle.epochs.push_back({0, e + 1, 2, e * 1.0, mean, {}, {}, {}});
      database.insert_run(bundle);
    }
  }
  return path;
}

}  // namespace

TEST_CASE("an empty cell: a refusal naming it and --no-interaction, or the additive model") {
  test::TempDir dir;
  const auto path = make_quickstart_shaped_database(dir);
  const auto data = report::observations_from_database(path, {}, {"condition", "np"}, "run");
  REQUIRE(data.values.size() == 6);
  std::string refusal;
  try {
    report::analyze_observations(data, 2, 0.95);
  } catch (const report::InputError& error) {
    refusal = error.what();
  }
  CHECK(refusal.find("cell condition=single, np=2 has no observation") != std::string::npos);
  CHECK(refusal.find("--no-interaction fits the additive model condition + np") !=
        std::string::npos);

  // Additive, type II, by hand: the model fits the three cell means, so SS_residual = 1.5 on
  // 6 - 3 d.f.; SS_condition = RSS(np only) - 1.5 = 1.75 - 1.5; SS_np = RSS(condition only) - 1.5
  // = 21.75 - 1.5.
  const auto report = report::analyze_observations(data, 2, 0.95, false);
  REQUIRE(report.anova.size() == 3);
  CHECK(report.anova[0].term == "condition");
  CHECK(report.anova[0].df == 1);
  CHECK(report.anova[0].ss == doctest::Approx(0.25).epsilon(1e-12));
  CHECK(*report.anova[0].f == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(*report.anova[0].p == doctest::Approx(0.5305).epsilon(1e-3));  // t(3) = sqrt(0.5)
  CHECK(report.anova[1].term == "np");
  CHECK(report.anova[1].ss == doctest::Approx(20.25).epsilon(1e-12));
  CHECK(*report.anova[1].f == doctest::Approx(40.5).epsilon(1e-12));
  CHECK(*report.anova[1].p == doctest::Approx(0.007666).epsilon(1e-3));
  CHECK(report.anova[2].term == "Residuals");
  CHECK(report.anova[2].df == 3);
  CHECK(report.anova[2].ss == doctest::Approx(1.5).epsilon(1e-12));
  // The observed condition means (10.5 vs 8.75) carry np's effect: no Tukey pairs, and why.
  CHECK(report.tukey.empty());
  const auto says = [&](const std::string& text) {
    return std::any_of(report.warnings.begin(), report.warnings.end(),
                       [&](const auto& w) { return w.find(text) != std::string::npos; });
  };
  CHECK(says("no Tukey pairs: the cells are empty or unequal"));
  CHECK(says("additive model condition + np: no condition:np term"));
  CHECK_THROWS_AS(report::analyze_observations(
                      report::observations_from_database(path, {}, {"np"}, "run"), 2, 0.95, false),
                  report::InputError);
}

TEST_CASE("the additive model on a balanced design keeps the per-factor Tukey pairs") {
  const auto report = report::analyze_observations(
      report::observations_from_csv(kWarpbreaks, "breaks", {"wool", "tension"}), 2, 0.95, false);
  REQUIRE(report.anova.size() == 3);  // wool, tension, Residuals: no wool:tension
  CHECK(report.anova[2].df == 54 - 4);
  CHECK(report.tukey.size() == 1 + 3);  // wool B-A; tension M-L, H-L, H-M; no cells
  for (const auto& pair : report.tukey) CHECK(pair.factor != "wool:tension");
}
