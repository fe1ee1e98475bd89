// Warm-up exclusion, one definition (issue 22, item 4): --skip-epochs on report, stats, plot and
// compare, and the experiment file's "warmup_epochs" as their default; the notes say it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "db/database.hpp"
#include "report/data/run_set.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

TEST_CASE("drop_warmup_epochs: each run's first N epochs, unless the run has no more than N") {
  std::vector<report::Run> runs(2);
  for (int run = 1; run <= 2; ++run) {
    runs[run - 1].id = run;
    for (int epoch = 1; epoch <= (run == 1 ? 3 : 1); ++epoch)
      runs[run - 1].epochs.emplace_back(epoch, epoch == 1 ? 2.0 : 1.0);
  }
  auto dropped = runs;
  CHECK(report::drop_warmup_epochs(dropped, 1) == 1);  // run 2 has one epoch: kept
  REQUIRE(dropped[0].epochs.size() == 2);
  CHECK(dropped[0].epochs[0].number == 2);
  CHECK(dropped[0].mean_epoch_seconds() == 1.0);
  REQUIRE(dropped[1].epochs.size() == 1);
  CHECK(dropped[1].epochs[0].number == 1);
  auto none = runs;
  CHECK(report::drop_warmup_epochs(none, 0) == 0);
  CHECK(none[0].epochs.size() == 3);
}

TEST_CASE("--skip-epochs on report, stats, plot and compare, and warmup_epochs as the default") {
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  // The Table 2 fixture's first epochs are 1.1-2.2x the others.
  const auto all = test::invoke({"report", "--db", db, "--format", "json"});
  const auto skip = test::invoke({"report", "--db", db, "--format", "json", "--skip-epochs", "1"});
  REQUIRE(all.status == 0);
  REQUIRE(skip.status == 0);
  CHECK(all.out.find("Warm-up left out") == std::string::npos);
  CHECK(skip.out.find("Warm-up left out: epoch 1 of each run (--skip-epochs)") !=
        std::string::npos);
  CHECK(skip.out != all.out);

  const auto stats = test::invoke({"stats", "--db", db, "--skip-epochs", "1"});
  INFO(stats.err);
  REQUIRE(stats.status == 0);
  CHECK(stats.out.find("Warm-up left out: epoch 1 of each run") != std::string::npos);

  const auto compare = test::invoke(
      {"compare", "--db", db, "--instance", "1", "--to-db", db, "--skip-epochs", "1", "--json"});
  INFO(compare.err);
  CHECK(compare.status == 0);

  const auto plot =
      test::invoke({"plot", "--db", db, "--skip-epochs", "1", "--output", (dir / "f").string()});
  INFO(plot.err);
  CHECK(plot.status == 0);

  const auto negative = test::invoke({"report", "--db", db, "--skip-epochs", "-1"});
  CHECK(negative.status != 0);
  CHECK(negative.err.find("--skip-epochs") != std::string::npos);
}

TEST_CASE("an experiment's warmup_epochs is what report and stats leave out by default") {
  SCALEBENCH_SKIP_IF(fs::exists("/usr/bin/python3")
                         ? std::nullopt
                         : std::optional<std::string>("needs /usr/bin/python3"));
  test::TempDir dir;
  const auto script = dir / "train.py";
  std::ofstream(script) << "import time\nfor e in range(1, 4):\n    print(f'Epoch {e}/3')\n"
                           "    time.sleep(0.3 if e == 1 else 0.1)\n"
                           "    print('10/10 - loss: 0.5')\n";
  const auto experiment = dir / "w.json";
  std::ofstream(experiment) << R"({"name": "w", "warmup_epochs": 1, "repetitions": 3,
    "train_images": 100, "program": "/usr/bin/python3", "args": [")"
                            << script.string() << R"("],
    "conditions": [{"name": "a", "launcher": "single"}, {"name": "b", "launcher": "single"}]})";
  const auto db = (dir / "r.db").string();
  const auto run = test::invoke({"run", experiment.string(), "--db", db});
  INFO(run.err);
  REQUIRE(run.status == 0);
  const auto report = test::invoke({"report", "--db", db});
  REQUIRE(report.status == 0);
  CHECK(report.out.find("Warm-up left out: epoch 1 of each run (the experiment file's "
                        "\"warmup_epochs\")") != std::string::npos);
  // Without the 0.3 s first epoch each run's mean is about 0.1 s, with it about 0.17 s.
  const auto mean_of_a = [](const std::string& text) {
    const auto at = text.find("| a | ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + 6, 8));
  };
  CHECK(mean_of_a(report.out) < 0.14);
  const auto everything = test::invoke({"report", "--db", db, "--skip-epochs", "0"});
  CHECK(everything.out.find("Warm-up left out") == std::string::npos);
  CHECK(mean_of_a(everything.out) > 0.14);
}
