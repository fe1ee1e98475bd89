// Precision-driven repetitions under the real binary (issue 38's acceptance): three cells whose
// run-to-run CVs are 0.5 %, 6 % and 25 % (min 3, max 12, precision 0.05), `scalebench run` killed
// with SIGKILL mid-matrix and continued with `run --resume`: the steady cell stops at 3 runs, the
// wild one at 12 by max, the noisy one between, and the stored runs, the report's per-cell counts
// and its reasons agree. Epochs are 1 s, so the machine's own jitter (a few ms) stays far below
// the steady cell's precision.
#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "test_support.hpp"

using namespace scalebench;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Epochs 2 and 3 take 1 + CV z s, z the cell's next fixed deviate (a counter file per CV);
// the warm-up epoch 0.2 s.
constexpr const char* kTrainer = R"(#!/bin/sh
n=$(cat "$1/$CV" 2>/dev/null || echo 0)
echo $((n + 1)) > "$1/$CV"
z=$(echo "0.5 -1.1 0.8 -0.3 1.4 -0.9 0.2 -1.6 1.0 0.1 -0.6 1.2" | cut -d' ' -f$((n % 12 + 1)))
e=$(awk "BEGIN { print 1 + $CV * $z }")
echo "Epoch 1/3"
sleep 0.2
echo "Epoch 2/3"
sleep "$e"
echo "Epoch 3/3"
sleep "$e"
echo "Training done: epochs=3"
)";

std::map<std::string, int> ok_runs(const fs::path& database) {
  std::map<std::string, int> out;
  sqlite3* handle = nullptr;
  if (sqlite3_open_v2(database.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(handle, 5000);
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(handle,
                           "SELECT condition, count(*) FROM runs WHERE status = 'ok' GROUP BY "
                           "condition",
                           -1, &statement, nullptr) == SQLITE_OK)
      while (sqlite3_step(statement) == SQLITE_ROW)
        out[reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))] =
            sqlite3_column_int(statement, 1);
    sqlite3_finalize(statement);
  }
  sqlite3_close(handle);
  return out;
}

int total(const std::map<std::string, int>& runs) {
  int n = 0;
  for (const auto& [condition, count] : runs) n += count;
  return n;
}

}  // namespace

TEST_CASE("precision rule under the real binary: kill -9 mid-matrix, --resume, the report agrees") {
  const fs::path binary = test::binary_dir() / "scalebench";
  if (!fs::exists(binary)) SCALEBENCH_SKIP("the scalebench binary is not built");
  test::TempDir dir;
  const auto trainer = dir / "trainer.sh";
  std::ofstream(trainer) << kTrainer;
  fs::create_directories(dir / "counters");
  const auto experiment = dir / "precise.json";
  std::ofstream(experiment) << R"({
    "name": "precise",
    "repetitions": {"min": 3, "max": 12, "precision": 0.05},
    "warmup_epochs": 1,
    "order": "randomized",
    "seed": 38,
    "conditions": [
      {"name": "steady", "launcher": "command", "np": [1], "env": {"CV": "0.005"},
       "command": ["sh", ")" + trainer.string() +
                                   R"(", ")" + (dir / "counters").string() + R"("]},
      {"name": "noisy", "launcher": "command", "np": [1], "env": {"CV": "0.06"},
       "command": ["sh", ")" + trainer.string() +
                                   R"(", ")" + (dir / "counters").string() + R"("]},
      {"name": "wild", "launcher": "command", "np": [1], "env": {"CV": "0.25"},
       "command": ["sh", ")" + trainer.string() +
                                   R"(", ")" + (dir / "counters").string() + R"("]}
    ]
  })";
  const auto database = dir / "p.db";
  const auto pid_file = dir / "pid";
  const std::string run = "'" + binary.string() + "' run '" + experiment.string() + "' --db '" +
                          database.string() + "'";
  REQUIRE(std::system((run + " >/dev/null 2>&1 & echo $! > '" + pid_file.string() + "'").c_str()) ==
          0);
  pid_t pid = 0;
  for (int i = 0; i < 100 && pid == 0; ++i) {
    std::ifstream(pid_file) >> pid;
    if (pid == 0) std::this_thread::sleep_for(20ms);
  }
  REQUIRE(pid > 0);
  // Killed once the first round and part of the next are stored: in the middle of the matrix.
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (total(ok_runs(database)) < 10 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(100ms);
  REQUIRE(total(ok_runs(database)) >= 10);
  ::kill(pid, SIGKILL);
  std::this_thread::sleep_for(300ms);
  CHECK(std::system((run + " --resume >/dev/null 2>&1").c_str()) == 0);

  const auto stored = ok_runs(database);
  CHECK(stored.at("steady") == 3);
  CHECK(stored.at("wild") == 12);
  CHECK(stored.at("noisy") > 3);
  CHECK(stored.at("noisy") < 12);
  const auto out = dir / "report.json";
  REQUIRE(std::system(("'" + binary.string() + "' report --db '" + database.string() +
                       "' --format json -o '" + out.string() + "' >/dev/null 2>&1")
                          .c_str()) == 0);
  std::ifstream in(out);
  const auto json = nlohmann::json::parse(in);
  std::map<std::string, std::string> reasons;
  for (const auto& row : json["rows"]) {
    const auto condition = row["condition"].get<std::string>();
    CHECK(row["runs"].get<int>() == stored.at(condition));
    reasons[condition] = row["stop_reason"].get<std::string>();
  }
  CHECK(reasons.at("steady") == "precision");
  CHECK(reasons.at("noisy") == "precision");
  CHECK(reasons.at("wild") == "max");
}
