// Progress bars measured for real (issue 22, acceptance): output captured from Keras 3's and
// Keras 2's own Progbar/ProgbarLogger (tests/data/orchestrator/progress, README there), replayed
// by a script on a fixed schedule through `scalebench run`, alone and under mpirun -np 2 with
// every rank printing. Every run ok, every epoch within 5% (or 20 ms) of the script's own clock
// (with several ranks: the ranks' clocks combined by the epoch rule, from their wall-clock lines),
// loss, accuracy and val_accuracy stored.
// In the timing suite, run serially (tests/CMakeLists.txt): the arrival of a line under a loaded
// machine (mpirun's forwarder starved by a parallel test) is not what is measured here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
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
  return std::nullopt;
}

// The script's own epoch clock, from its `CLOCK epoch=N seconds=S` lines (rank 0's).

}  // namespace

TEST_CASE("Keras 3 and Keras 2 progress bars, alone and with every rank printing, measured right") {
  SCALEBENCH_SKIP_IF(why_not());
  test::TempDir dir;
  const auto data = test::data_dir() / "orchestrator" / "progress";
  std::string levels;
  for (const char* fixture : {"keras3-verbose1-pipe", "keras3-verbose1-pty", "keras3-verbose2-pipe",
                              "keras3-verbose2-pty", "keras2-verbose1-pipe", "keras2-verbose1-pty",
                              "keras2-verbose2-pipe"}) {
    levels += std::string(levels.empty() ? "" : ",") + R"({"name": ")" + fixture +
              R"(", "args": [")" + (data / (std::string(fixture) + ".out")).string() +
              R"(", "0.04"]})";
  }
  const auto experiment = dir / "bars.json";
  std::ofstream(experiment) << R"({"name": "bars", "timeout_seconds": 60, "train_images": 384,
    "program": "/usr/bin/python3", "args": [")"
                            << (data / "replay.py").string() << R"("],
    "factors": {"fixture": [)"
                            << levels << R"(]},
    "conditions": [{"name": "single", "launcher": "single", "np": [1]},
                   {"name": "mpirun", "launcher": "mpirun", "np": [2]}]})";
  const auto db_path = (dir / "r.db").string();
  const auto run = test::invoke({"run", experiment.string(), "--db", db_path});
  INFO(run.out);
  INFO(run.err);
  CHECK(run.status == 0);

  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("bars");
  REQUIRE(runs.size() == 14);
  for (const auto& r : runs) {
    INFO(r.condition << " " << r.factors.back().second << ": " << r.error);
    CHECK(r.status == db::RunStatus::Ok);
    const auto epochs = test::epochs_on_clock(database, r.id, 3);
    for (const auto& epoch : epochs) {
      CAPTURE(epoch.epoch);
      CHECK(epoch.loss);
      CHECK(epoch.accuracy);
      CHECK(epoch.test_accuracy);  // Keras's val_accuracy
    }
    // The last epoch ends at its own end line, not at model.evaluate()'s after it.
    CHECK(epochs.back().end_rule == "epoch_end_line");
    if (r.np == 2) {
      // Both ranks printed: each rank's end of each epoch is stored.
      const auto spread = test::scalar(
          database, "SELECT count(*) FROM epoch_rank_ends WHERE run_id = " + std::to_string(r.id));
      CHECK(spread == "6");
    }
  }
}
