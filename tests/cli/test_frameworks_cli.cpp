// The acceptance of issue "Other people's trainers": experiments/frameworks-mixed-quick.json run
// by the built binary stores ok runs with epochs for our trainer under mpirun and for the plain
// PyTorch DDP script (examples/torch_ddp_train.py) under torchrun and under mpirun, np 1 and 2;
// the script prints no line only scalebench reads, and its own epoch clock agrees with the
// line-timed epochs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

std::optional<std::string> why_no_torch() {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return "needs mpirun";
  if (std::system("command -v torchrun >/dev/null 2>&1") != 0)
    return "needs torchrun (apt-get install python3-torch; scripts/install-deps.sh does)";
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    return "needs python3-torch (scripts/install-deps.sh installs it)";
  return std::nullopt;
}

std::string level(const db::RunRecord& run, const std::string& factor) {
  for (const auto& [name, value] : run.factors)
    if (name == factor) return value;
  return "";
}

}  // namespace

TEST_CASE("frameworks-mixed-quick: our trainer and the PyTorch DDP script, mpirun and torchrun") {
  SCALEBENCH_SKIP_IF(why_no_torch());
  test::TempDir dir;
  const auto db_path = (dir / "mixed.db").string();
  const auto run = test::run_binary(
      {"run", (test::source_dir() / "experiments/frameworks-mixed-quick.json").string(), "--db",
       db_path});
  INFO(run.out);
  REQUIRE(run.status == 0);

  const auto database = db::Database::open(db_path, db::OpenMode::ReadOnly);
  const auto runs = database.runs("frameworks-mixed-quick");
  REQUIRE(runs.size() == 6);
  std::map<std::string, int> cells;
  for (const auto& r : runs) {
    const auto framework = level(r, "framework");
    const auto cell = r.condition + "/" + framework + "/np" + std::to_string(r.np);
    INFO(cell);
    ++cells[cell];
    CHECK(r.status == db::RunStatus::Ok);
    CHECK(r.train_images == 512);
    const auto epochs = database.epochs(r.id);
    REQUIRE(epochs.size() == 2);
    for (const auto& epoch : epochs) {
      REQUIRE(epoch.duration_seconds);
      REQUIRE(epoch.trainer_seconds);  // ours: epoch_seconds; the script's: Keras's time item
      CHECK(std::abs(*epoch.duration_seconds - *epoch.trainer_seconds) < 0.25);
    }
    if (framework == "pytorch-ddp") {
      // Nothing only scalebench reads: no header, no `Training done:`; the last epoch ends at
      // the script's end-of-epoch line.
      for (const auto& line : database.lines(r.id)) {
        CHECK(line.text.find("scalebench-train ") != 0);
        CHECK(line.text.find("Training done:") == std::string::npos);
        CHECK(line.text.find("epoch_seconds") == std::string::npos);
      }
      CHECK(epochs.back().end_rule == "epoch_end_line");
      CHECK(r.launcher == r.condition);
    } else {
      CHECK(epochs.back().end_rule == "training_done");
    }
  }
  CHECK(cells == std::map<std::string, int>{{"mpirun/pytorch-ddp/np1", 1},
                                            {"mpirun/pytorch-ddp/np2", 1},
                                            {"mpirun/scalebench-train/np1", 1},
                                            {"mpirun/scalebench-train/np2", 1},
                                            {"torchrun/pytorch-ddp/np1", 1},
                                            {"torchrun/pytorch-ddp/np2", 1}});
}
