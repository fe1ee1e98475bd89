// Every epoch right under every launcher (issue 34, acceptance): a script that prints as training
// scripts do (tests/data/orchestrator/launchers/replay_forms.py: tqdm bars on stdout and on
// stderr, Lightning's TQDMProgressBar and end line, Keras 2 lines on every rank), replayed on a
// fixed schedule through the real launchers: a plain process, mpirun -np 1, mpirun -np 2 with
// every rank printing, torchrun with 2 ranks. Every stored epoch is within 5 % or 20 ms of the
// script's own clock (the ranks' clocks combined by the epoch rule), every run ok; the same replay
// read with a broken form is not ok and says why.
// In the timing suite, run serially (tests/CMakeLists.txt): the arrival of a line under a loaded
// machine (mpirun's forwarder starved by a parallel test) is not what is measured here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli/cli_support.hpp"
#include "cli/script_clock.hpp"
#include "db/database.hpp"
#include "db/db_support.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {

std::optional<std::string> why_not() {
  if (std::system("test -x /usr/bin/python3") != 0) return "needs /usr/bin/python3";
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return "needs mpirun";
  if (std::system("command -v torchrun >/dev/null 2>&1") != 0)
    return "needs torchrun (apt-get install python3-torch; scripts/install-deps.sh does)";
  return std::nullopt;
}

std::string level_of(const db::RunRecord& run, const std::string& factor) {
  for (const auto& [name, value] : run.factors)
    if (name == factor) return value;
  return "";
}

}  // namespace

TEST_CASE("every form through plain, mpirun -np 1 and 2, and torchrun: each epoch as printed") {
  SCALEBENCH_SKIP_IF(why_not());
  test::TempDir dir;
  const auto script = test::data_dir() / "orchestrator" / "launchers" / "replay_forms.py";
  const auto experiment = dir / "launchers.json";
  // Each form with its preset; Lightning prints on rank 0 only (as Lightning does), the others
  // on every rank.
  std::ofstream(experiment) << R"({"name": "launchers", "timeout_seconds": 90,
    "train_images": 384, "program": "/usr/bin/python3", "args": [")"
                            << script.string() << R"("],
    "factors": {"form": [
      {"name": "tqdm-stdout", "args": ["tqdm-stdout"], "line_forms": "tqdm"},
      {"name": "tqdm-stderr", "args": ["tqdm-stderr"], "line_forms": "tqdm"},
      {"name": "lightning", "args": ["lightning"], "line_forms": "lightning"},
      {"name": "keras", "args": ["keras"]}]},
    "conditions": [{"name": "plain", "launcher": "single", "np": [1]},
                   {"name": "mpirun", "launcher": "mpirun", "np": [1, 2]},
                   {"name": "torchrun", "launcher": "torchrun", "np": [2]}]})";
  const auto db_path = (dir / "r.db").string();
  const auto run = test::run_binary({"run", experiment.string(), "--db", db_path});
  INFO(run.out);
  CHECK(run.status == 0);

  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("launchers");
  REQUIRE(runs.size() == 16);
  for (const auto& r : runs) {
    const auto form = level_of(r, "form");
    INFO(r.condition << " np=" << r.np << " " << form << ": " << r.error);
    CHECK(r.status == db::RunStatus::Ok);
    const auto epochs = test::epochs_on_clock(database, r.id, 3);
    for (const auto& epoch : epochs) CHECK(epoch.loss);
    if (form == "lightning") {
      // fit's end line ends the last epoch (trainer.test() after it is not in it); val_acc is the
      // validation accuracy, and the test table's test_acc the test accuracy.
      CHECK(epochs.back().end_rule == "epoch_end_line");
      CHECK(epochs[1].validation_accuracy == doctest::Approx(0.7));
      CHECK(epochs.back().test_accuracy == doctest::Approx(0.72));
    }
    if (form == "keras") CHECK(epochs.back().end_rule == "epoch_end_line");
    if (r.np == 2 && form != "lightning") {
      // Both ranks printed and were told apart: each rank's end of each epoch is stored (a bar's
      // by the rank's next bar, so not the last epoch's; Keras's by each rank's end line).
      CHECK(test::scalar(database, "SELECT count(*) FROM epoch_rank_ends WHERE run_id = " +
                                       std::to_string(r.id)) == (form == "keras" ? "6" : "4"));
    }
  }
}

TEST_CASE("the same replay read with a broken form is not ok and names the rule") {
  SCALEBENCH_SKIP_IF(why_not());
  test::TempDir dir;
  const auto script = test::data_dir() / "orchestrator" / "launchers" / "replay_forms.py";
  const auto experiment = dir / "broken.json";
  // `epoch N done` is printed when the epoch's work is done: taken for a start, every epoch is
  // shifted by one and the last is a sliver between it and the run's last line.
  std::ofstream(experiment) << R"({"name": "broken", "timeout_seconds": 60, "train_images": 384,
    "program": "/usr/bin/python3", "args": [")"
                            << script.string() << R"(", "tqdm-stdout"],
    "line_forms": {"epoch_start": "^epoch (?<epoch>\\d+) done", "total_epochs": 3},
    "conditions": [{"name": "mpirun", "launcher": "mpirun", "np": [2]}]})";
  const auto db_path = (dir / "r.db").string();
  const auto run = test::run_binary({"run", experiment.string(), "--db", db_path});
  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("broken");
  REQUIRE(runs.size() == 1);
  INFO(runs[0].error);
  CHECK(runs[0].status == db::RunStatus::Incomplete);
  CHECK(runs[0].error.find("epoch 3 (the last) lasted") != std::string::npos);
  // Ended by the run's last line or, where that came first, the exit: the rule is named.
  CHECK(runs[0].error.find("by the rule `") != std::string::npos);
}

TEST_CASE("every rank's Keras lines through a launcher that cannot tag: the last rank ends it") {
  // mpirun without --tag-output: both ranks' lines on one stream, nothing telling them apart. A
  // slower rank's end line arrives after the faster one began the next epoch; the last epoch
  // ends at the second end line, not the first.
  SCALEBENCH_SKIP_IF(why_not());
  test::TempDir dir;
  const auto script = test::data_dir() / "orchestrator" / "launchers" / "replay_forms.py";
  const auto experiment = dir / "untagged.json";
  std::ofstream(experiment) << R"({"name": "untagged", "timeout_seconds": 60, "train_images": 384,
    "program": "/usr/bin/python3", "args": [")"
                            << script.string() << R"(", "keras"],
    "conditions": [{"name": "untagged", "launcher": "command", "np": [2],
      "command": ["mpirun", "-np", "{np}", "{program}", "{args}"],
      "env": {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}}]})";
  const auto db_path = (dir / "r.db").string();
  const auto run = test::run_binary({"run", experiment.string(), "--db", db_path});
  INFO(run.out);
  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("untagged");
  REQUIRE(runs.size() == 1);
  INFO(runs[0].error);
  CHECK(runs[0].status == db::RunStatus::Ok);
  const auto epochs = test::epochs_on_clock(database, runs[0].id, 3);
  CHECK(epochs.back().end_rule == "epoch_end_line");
}
