// Any epoch marker, measured for real (issue 22, acceptance): scripts printing pytorch/examples'
// mnist/main.py form, Lightning's progress bar and Hugging Face Trainer's log dicts
// (tests/data/orchestrator/forms; Hugging Face's per epoch and per step), run unedited by
// `scalebench run` with their presets: every run ok, every epoch within 20 ms of the script's own
// clock, the test (Lightning: validation) accuracy and each epoch's own loss stored.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli/cli_support.hpp"
#include "cli/script_clock.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;

TEST_CASE("pytorch-examples, lightning and hf-trainer forms measured with their presets") {
  SCALEBENCH_SKIP_IF(std::system("test -x /usr/bin/python3") == 0
                         ? std::nullopt
                         : std::optional<std::string>("needs /usr/bin/python3"));
  test::TempDir dir;
  const auto forms = test::data_dir() / "orchestrator" / "forms";
  const auto experiment = dir / "forms.json";
  std::ofstream(experiment) << R"({"name": "forms", "timeout_seconds": 60, "train_images": 640,
    "program": "/usr/bin/python3",
    "factors": {"script": [
      {"name": "pytorch-examples", "line_forms": "pytorch-examples", "args": [")"
                            << (forms / "pytorch_examples_fake.py").string() << R"("]},
      {"name": "lightning", "line_forms": "lightning", "args": [")"
                            << (forms / "lightning_fake.py").string() << R"("]},
      {"name": "hf-trainer", "line_forms": "hf-trainer", "args": [")"
                            << (forms / "hf_trainer_fake.py").string() << R"("]},
      {"name": "hf-trainer-per-step", "line_forms": "hf-trainer", "args": [")"
                            << (forms / "hf_trainer_fake.py").string() << R"(", "per-step"]}]},
    "conditions": [{"name": "single", "launcher": "single"}]})";
  const auto db_path = (dir / "r.db").string();
  const auto run = test::invoke({"run", experiment.string(), "--db", db_path});
  INFO(run.out);
  INFO(run.err);
  CHECK(run.status == 0);
  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("forms");
  REQUIRE(runs.size() == 4);
  for (const auto& r : runs) {
    const std::string form = r.factors.at(0).second;
    INFO(form << ": " << r.error);
    CHECK(r.status == db::RunStatus::Ok);
    const auto epochs = database.epochs(r.id);
    const auto clock = test::script_clock(database, r.id);
    REQUIRE(epochs.size() == 3);
    REQUIRE(clock.size() == 3);
    for (const auto& epoch : epochs) {
      INFO("epoch " << epoch.epoch << " " << epoch.end_rule.value_or("-"));
      REQUIRE(epoch.duration_seconds);
      // Hugging Face's first epoch starts with the process (its start-up): the rule of that form.
      if (!(form.starts_with("hf-trainer") && epoch.epoch == 1))
        CHECK(std::abs(*epoch.duration_seconds - clock.at(epoch.epoch)) <= 0.020);
      // Lightning's val_acc is the validation accuracy; the others print a test accuracy.
      CHECK((form == "lightning" ? epoch.validation_accuracy : epoch.test_accuracy));
      REQUIRE(epoch.loss);
      // Each loss with its own epoch: per epoch, the epoch's log; per step, its last step's.
      if (form == "hf-trainer")
        CHECK(*epoch.loss == doctest::Approx(0.7 / epoch.epoch).epsilon(1e-3));
      if (form == "hf-trainer-per-step")
        CHECK(*epoch.loss == doctest::Approx(0.7 / epoch.epoch - 0.03).epsilon(1e-3));
    }
  }
}

TEST_CASE("a user pattern that backtracks exponentially cannot freeze run: its timeout holds") {
  // The line `aaa...a!` (60 a's) against ^(a|aa)+...$ in every field a user writes: a backtracking
  // engine never returned, and `run` ignored its timeout and Ctrl-C. RE2 matches in linear time.
  test::TempDir dir;
  const auto experiment = dir / "nasty.json";
  const std::string line = std::string(60, 'a') + "!";
  std::ofstream(experiment) << R"({"name": "nasty", "timeout_seconds": 3, "repetitions": 1,
    "program": "/bin/sh", "args": ["-c", "for i in 1 2 3 4 5; do echo )"
                            << line << R"(; done; echo Epoch 1/1; sleep 60"],
    "line_forms": {"epoch_start": "^(a|aa)+(?<epoch>\\d+)$", "epoch_end": "^(a|aa)+$",
                   "metrics": {"loss": "^(a|aa)+(?<value>\\d+)$"}},
    "conditions": [{"name": "single", "launcher": "single",
                    "line_tags": {"pattern": "^(a|aa)+(?<rank>\\d+): "}}]})";
  const auto db_path = (dir / "r.db").string();
  const auto run = test::invoke({"run", experiment.string(), "--db", db_path});
  INFO(run.out);
  INFO(run.err);
  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("nasty");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].status == db::RunStatus::Timeout);
  CHECK(runs[0].wall_seconds < 30);
}
