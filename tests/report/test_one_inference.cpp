// One inference per table (issue 37, item 1): on the Table 2 fixture, whose vgg16 runs' variances
// differ 757-fold, the p-values and letters are Games-Howell's and agree with the rows' own
// intervals; with Tukey's pooled variance the hvd np=2 row had p = 0.031 beside a speed-up
// interval [0.52, 3.22] that covers the base.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "report/analysis/pairwise.hpp"
#include "report/analysis/report_assembly.hpp"
#include "report/data/load_runs.hpp"
#include "report/export/exporters.hpp"
#include "stats/games_howell.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

report::FactorReport table2_by_model() {
  test::TempDir dir;
  const auto path = dir / "t2.db";
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", path);
  const auto database = db::Database::open(path.string(), db::OpenMode::ReadOnly);
  return report::factor_report_of(report::load_runs(database, {}, {}, {.allreduce_runs = true}),
                                  "model");
}

const report::ReportRow& row_of(const report::ReportTable& block, const std::string& label) {
  for (const auto& row : block.rows)
    if (row.label == label) return row;
  FAIL("no row " << label);
  return block.rows.front();
}

}  // namespace

TEST_CASE("Table 2: no row's p-value contradicts its own interval") {
  const auto report = table2_by_model();
  REQUIRE(report.levels == std::vector<std::string>{"vgg16", "inception_v3"});
  const auto& vgg16 = report.blocks[0];
  CHECK(vgg16.pairwise == "Games-Howell");
  REQUIRE(vgg16.anova);
  CHECK(vgg16.anova->welch);
  const auto& np2 = row_of(vgg16, "hvd np=2");
  const auto& base = row_of(vgg16, "hvd np=1");
  REQUIRE(np2.speedup_ci_lower);
  CHECK(*np2.speedup_ci_lower < 1);  // the interval covers the base ...
  CHECK(*np2.speedup_ci_upper > 1);
  REQUIRE(np2.tukey_p_vs_base);
  CHECK(*np2.tukey_p_vs_base > 0.05);  // ... and so does the test (Tukey's pooled p was 0.031)
  // The p is stats::games_howell's (checked against rstatix in tests/stats) on the run means.
  std::vector<std::vector<double>> groups;
  std::size_t base_index = 0, np2_index = 0;
  for (std::size_t i = 0; i < vgg16.rows.size(); ++i) {
    groups.push_back(vgg16.rows[i].run_epoch_seconds);
    if (vgg16.rows[i].label == "hvd np=1") base_index = i;
    if (vgg16.rows[i].label == "hvd np=2") np2_index = i;
  }
  int matched = 0;
  for (const auto& pair : stats::games_howell(groups))
    if (std::minmax(pair.a, pair.b) == std::minmax(base_index, np2_index)) {
      CHECK(*np2.tukey_p_vs_base == pair.p_adjusted);
      ++matched;
    }
  CHECK(matched == 1);
  REQUIRE(np2.letters);
  REQUIRE(base.letters);
  CHECK(np2.letters->find_first_of(*base.letters) != std::string::npos);  // a shared letter
  // Every block: where the speed-up's interval covers 1 the p-value is not below 0.05.
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows) {
      if (row.is_base || !row.speedup_ci_lower || !row.tukey_p_vs_base) continue;
      CAPTURE(row.label);
      if (*row.speedup_ci_lower < 1 && *row.speedup_ci_upper > 1)
        CHECK(*row.tukey_p_vs_base >= 0.05);
    }
  // inception_v3's variances are within 4-fold: pooled, as before.
  CHECK(report.blocks[1].pairwise == "Tukey");
  CHECK_FALSE(report.blocks[1].anova->welch);
  // The tables say which test it was.
  const auto markdown = report::make_exporter("markdown")->render(report);
  CHECK(markdown.find("Tukey or Games-Howell vs base") != std::string::npos);
  CHECK(markdown.find("Welch F=") != std::string::npos);
  CHECK(markdown.find("model vgg16: Group variances differ 757-fold") != std::string::npos);
  const auto latex = report::make_exporter("latex")->render(report);
  CHECK(latex.find("(Tukey or Games-Howell, 95\\%)") != std::string::npos);
}

TEST_CASE("pooling is kept while the variances differ at most 4-fold, else Games-Howell") {
  CHECK_FALSE(report::variance_ratio({{1, 2}}));    // one group with a variance
  CHECK_FALSE(report::variance_ratio({{1}, {2}}));  // none
  // Variances 0.5 and 2 (SDs 0.707 and 1.414): 4-fold, pooled still.
  CHECK(*report::variance_ratio({{1, 2}, {1, 3}, {5}}) == doctest::Approx(4.0));
  CHECK_FALSE(report::choose_pairwise({{1, 2}, {1, 3}}, "run", 60).games_howell);
  CHECK_FALSE(report::choose_pairwise({{1, 2}, {1, 3}}, "run", 60).note);
  const auto unequal = report::choose_pairwise({{1, 2}, {1, 4}}, "run", 60);  // 0.5 and 4.5
  CHECK(*unequal.ratio == doctest::Approx(9.0));
  CHECK(unequal.games_howell);
  CHECK(unequal.note->find("Group variances differ 9-fold") == 0);
  // One observation in a group: Games-Howell cannot be used, and the note says so.
  const auto single = report::choose_pairwise({{1, 2}, {1, 4}, {3}}, "run", 60);
  CHECK_FALSE(single.games_howell);
  CHECK(single.note->find("Games-Howell needs two runs in every group") != std::string::npos);
  CHECK(std::isinf(*report::variance_ratio({{1, 1}, {1, 2}})));
  CHECK(*report::variance_ratio({{1, 1}, {2, 2}}) == 1.0);
}
