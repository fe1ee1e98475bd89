// Weak scaling named (issue 37, item 3), the experiment's name relabelled everywhere and the
// study's setup (item 4): on the committed hold-out study (640 images per process per epoch, np 1
// to 8) and on hand-made runs with equal and with growing work.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "report/analysis/report_assembly.hpp"
#include "report/data/load_runs.hpp"
#include "report/data/setup.hpp"
#include "report/export/exporters.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

report::RunSet holdout_runs() {
  test::TempDir dir;
  const auto path = dir / "h.db";
  fs::copy_file(test::data_dir() / "db" / "scaling-model-holdout.db", path);
  const auto database = db::Database::open(path.string(), db::OpenMode::ReadOnly);
  return report::load_runs(database, {});
}

// Two runs per np of one condition; epoch time `seconds(np)`, images per epoch `images(np)`.
template <typename Seconds, typename Images>
std::vector<report::Run> runs_of(Seconds seconds, Images images) {
  std::vector<report::Run> runs;
  std::int64_t id = 0;
  for (const int np : {1, 2, 4})
    for (const double jitter : {0.95, 1.05}) {
      report::Run run;
      run.id = ++id;
      run.experiment = "w";
      run.condition = "mpirun";
      run.launcher = "mpirun";
      run.np = np;
      run.epochs.emplace_back(1, seconds(np) * jitter);
      run.epochs.emplace_back(2, seconds(np) / jitter);
      run.train_images = images(np);
      runs.push_back(std::move(run));
    }
  return runs;
}

const report::ReportRow& row_of(const report::ReportTable& table, int np) {
  for (const auto& row : table.rows)
    if (row.np == np) return row;
  FAIL("no row at np " << np);
  return table.rows.front();
}

}  // namespace

TEST_CASE("equal work per process is weak scaling: the speed-up is images/s over the base's") {
  // 1000 images per process; the epoch grows 10% per doubling.
  const auto table = report::build_report(
      "w", runs_of([](int np) { return np == 1   ? 10.0
                                       : np == 2 ? 11.0
                                                 : 12.1; },
                   [](int np) { return 1000LL * np; }));
  CHECK(table.weak_scaling);
  const auto& np4 = row_of(table, 4);
  // Scaled speed-up: 4 x 10 / 12.1; the ratio of epoch times alone would be 0.83.
  CHECK(*np4.speedup_vs_base == doctest::Approx(4 * 10.0 / 12.1));
  CHECK(*np4.speedup_vs_base ==
        doctest::Approx(*np4.images_per_second / *row_of(table, 1).images_per_second));
  // The interval is the epoch-time ratio's, times the constant 4.
  const auto strong = report::build_report(
      "w", runs_of([](int np) { return np == 1   ? 10.0
                                       : np == 2 ? 11.0
                                                 : 12.1; },
                   [](int) { return 4000LL; }));
  CHECK_FALSE(strong.weak_scaling);
  CHECK(*np4.speedup_ci_lower == doctest::Approx(*row_of(strong, 4).speedup_ci_lower * 4));
  CHECK(*np4.speedup_ci_upper == doctest::Approx(*row_of(strong, 4).speedup_ci_upper * 4));
  // Efficiency is the scaled efficiency either way: images/s over np times the reference's.
  CHECK(*np4.scaling_efficiency == doctest::Approx(10.0 / 12.1));
  CHECK(std::find(table.notes.begin(), table.notes.end(), report::kWeakScalingNote) !=
        table.notes.end());
  CHECK(std::find(strong.notes.begin(), strong.notes.end(), report::kWeakScalingNote) ==
        strong.notes.end());
}

TEST_CASE("weak scaling against a base without images: no scaled speed-up, not an unscaled one") {
  auto runs = runs_of([](int np) { return np == 1   ? 10.0
                                          : np == 2 ? 11.0
                                                    : 12.1; },
                      [](int np) { return 1000LL * np; });
  report::Run single = runs.front();
  single.id = 100;
  single.condition = single.launcher = "single";
  single.train_images.reset();  // a plain program that never said its images
  runs.push_back(single);
  single.id = 101;
  runs.push_back(single);
  report::ReportOptions options;
  options.base_label = "single";
  const auto table = report::build_report("w", runs, options);
  REQUIRE(table.weak_scaling);
  for (const auto& row : table.rows) {
    CAPTURE(row.label);
    if (row.is_base)
      CHECK(*row.speedup_vs_base == 1.0);
    else
      CHECK_FALSE(row.speedup_vs_base);
  }
}

TEST_CASE("work that is neither fixed nor per process is not called weak scaling") {
  const auto table = report::build_report(
      "w", runs_of([](int np) { return 10.0 / np; }, [](int np) { return 1000LL + np; }));
  CHECK_FALSE(table.weak_scaling);
  // Without images there is no way to tell: not weak.
  auto runs = runs_of([](int np) { return 10.0 / np; }, [](int np) { return 1000LL * np; });
  for (auto& run : runs) run.train_images.reset();
  CHECK_FALSE(report::build_report("w", runs).weak_scaling);
}

TEST_CASE("the hold-out study is weak scaling, named in the table, its caption and its notes") {
  const auto set = holdout_runs();
  const auto table = report::report_of(set, std::nullopt, "run", "auto");
  REQUIRE(table.weak_scaling);
  const auto markdown = report::make_exporter("markdown")->render(table);
  CHECK(markdown.find("| Scaled speed-up [95% CI] | Scaled efficiency [95% CI] |") !=
        std::string::npos);
  CHECK(markdown.find("- Weak scaling: every process trains the same images per epoch") !=
        std::string::npos);
  const auto latex = report::make_exporter("latex")->render(table);
  CHECK(latex.find("(weak scaling: the same images per process per epoch at every np, so speed-up "
                   "and efficiency are the scaled ones)") != std::string::npos);
  CHECK(latex.find("Scaled\\\\{}speed-up") != std::string::npos);  // the header, wrapped
  const auto json = report::make_exporter("json")->render(table);
  CHECK(json.find("\"weak_scaling\": true") != std::string::npos);
  // np 8: 8 x 640 images in 1.210 s against 640 in 0.806 s: 5.33 times the base's images/s.
  CHECK(*row_of(table, 8).speedup_vs_base ==
        doctest::Approx(*row_of(table, 8).images_per_second / *row_of(table, 1).images_per_second));
  CHECK(*row_of(table, 8).speedup_vs_base == doctest::Approx(5.33).epsilon(0.002));
}

TEST_CASE("the experiment's label reaches every heading and caption, stored names stay in data") {
  auto set = holdout_runs();
  set.labels.text["scaling-model-holdout"] = "Hold-out study (MLP)";
  const auto table = report::report_of(set, std::nullopt, "run", "auto");
  const auto markdown = report::make_exporter("markdown")->render(table);
  CHECK(markdown.find("## Experiment Hold-out study (MLP)\n") != std::string::npos);
  const auto html = report::make_exporter("html")->render(table);
  CHECK(html.find("<h1>Experiment Hold-out study (MLP)</h1>") != std::string::npos);
  CHECK(html.find("<title>scalebench: Hold-out study (MLP)</title>") != std::string::npos);
  const auto latex = report::make_exporter("latex")->render(table);
  CHECK(latex.find("\\caption{Epoch time by group, experiment Hold-out study (MLP)") !=
        std::string::npos);
  CHECK(latex.find("\\label{tab:scaling-model-holdout-run}") != std::string::npos);
  const auto json = report::make_exporter("json")->render(table);
  CHECK(json.find("\"experiment\": \"scaling-model-holdout\"") != std::string::npos);
}

TEST_CASE("the setup paragraph: program, images, warm-up, line forms, conditions, machine") {
  auto set = holdout_runs();
  set.labels.text["train"] = "Training";
  const auto setup = report::study_setup(set);
  REQUIRE(setup.size() == 6);
  CHECK(setup[0] == std::pair<std::string, std::string>{
                        "Program",
                        "Training: scalebench-train (model mlp, dataset synthetic, batch 32 per "
                        "process, epochs 4, threads 1 per process)"});
  CHECK(setup[1] ==
        std::pair<std::string, std::string>{
            "Images per epoch", "640 per process (weak scaling): 640 at np 1 to 5120 at np 8"});
  CHECK(setup[2] == std::pair<std::string, std::string>{"Warm-up", "none: every epoch counts"});
  CHECK(setup[3] == std::pair<std::string, std::string>{"Epochs marked by",
                                                        "scalebench-train's \"Epoch y/z\" lines"});
  CHECK(setup[4] ==
        std::pair<std::string, std::string>{"Conditions", "Training: mpirun, np 1, 2, 4, 8"});
  CHECK(setup[5].first == "Machine");
  CHECK(setup[5].second.starts_with("vm, 2 × Intel(R) Xeon(R) Processor, 24 GiB, Linux "));
  // A file with its own line forms and a warm-up says them.
  set.spec_json = R"({"command": ["python3", "train.py"], "line_forms": "lightning"})";
  set.warmup_epochs = 1;
  set.warmup_origin = "the experiment file's warmup_epochs";
  const auto other = report::study_setup(set);
  CHECK(other[0] == std::pair<std::string, std::string>{"Program", "python3 train.py"});
  CHECK(other[2].second ==
        "the first 1 epoch of each run left out (the experiment file's warmup_epochs)");
  CHECK(other[3].second == "line forms lightning");
}
