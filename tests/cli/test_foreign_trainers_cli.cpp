// A plain Python script printing Keras-style lines, run for real by `scalebench run`: measured
// right when its lines arrive as printed (PYTHONUNBUFFERED=1 by default), and never stored as an
// ok run with 0-second epochs when its output is block-buffered (issue "Other people's trainers").
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/cli_support.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

constexpr const char* kScript = R"(import time
for epoch in range(1, 4):
    print(f"Epoch {epoch}/3")
    time.sleep(0.3)
    print(f"10/10 - loss: {1.0 / epoch:.3f} - accuracy: 0.5")
print("bye")
)";

std::optional<std::string> why_no_python() {
  if (std::system("test -x /usr/bin/python3") == 0) return std::nullopt;
  return "needs /usr/bin/python3";
}

}  // namespace

TEST_CASE(
    "a Python script's Keras lines are measured: its block-buffered twin is not ok, unless through "
    "a pty") {
  SCALEBENCH_SKIP_IF(why_no_python());
  test::TempDir dir;
  std::ofstream(dir / "train.py") << kScript;
  const auto experiment = dir / "py.json";
  std::ofstream(experiment) << R"({"name": "py", "timeout_seconds": 60, "train_images": 640,
    "program": "/usr/bin/python3", "args": [")"
                            << (dir / "train.py").string() << R"("],
    "conditions": [
      {"name": "default", "launcher": "single"},
      {"name": "buffered", "launcher": "single", "env": {"PYTHONUNBUFFERED": ""}},
      {"name": "pty", "launcher": "single", "env": {"PYTHONUNBUFFERED": ""}, "stdout": "pty"}
    ]})";
  const auto db_path = (dir / "r.db").string();
  const auto run = test::invoke({"run", experiment.string(), "--db", db_path});
  INFO(run.out);
  INFO(run.err);
  CHECK(run.status == 1);  // the buffered cell is not ok

  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("py");
  REQUIRE(runs.size() == 3);
  const auto& good = runs[0];
  CHECK(good.condition == "default");
  CHECK(good.status == db::RunStatus::Ok);
  CHECK(good.train_images == 640);
  REQUIRE(good.images_per_second);
  const auto epochs = database.epochs(good.id);
  REQUIRE(epochs.size() == 3);
  for (const auto& epoch : epochs) {
    REQUIRE(epoch.duration_seconds);
    CHECK(*epoch.duration_seconds > 0.25);
    CHECK(*epoch.duration_seconds < 2.0);
  }
  CHECK(epochs[2].end_rule == "epoch_end_line");
  CHECK(good.env_json.find(R"("PYTHONUNBUFFERED":"1")") != std::string::npos);

  const auto& buffered = runs[1];
  CHECK(buffered.condition == "buffered");
  CHECK(buffered.status == db::RunStatus::Incomplete);
  CHECK(buffered.error.find("arrived in one burst") != std::string::npos);

  // The same buffered script through a pseudo-terminal line-buffers as on a terminal.
  const auto& pty = runs[2];
  CHECK(pty.condition == "pty");
  CHECK(pty.status == db::RunStatus::Ok);
  const auto pty_epochs = database.epochs(pty.id);
  REQUIRE(pty_epochs.size() == 3);
  for (const auto& epoch : pty_epochs) {
    REQUIRE(epoch.duration_seconds);
    CHECK(*epoch.duration_seconds > 0.25);
  }

  // The buffered run's epochs are stored, but no report or statistic uses them: it is not ok.
  for (const auto& sample : database.epoch_samples("py"))
    CHECK((sample.run_id == good.id || sample.run_id == pty.id));
}
