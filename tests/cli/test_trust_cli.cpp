// `scalebench` end to end on what used to lose or mix up results (issue "Results you can trust"):
// file names that are not files, resume, instances and pooling, failed conditions in the report,
// two concurrent writers behind a long write lock.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/cli.hpp"
#include "cli_support.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;
const auto cli_run = test::invoke;
namespace fs = std::filesystem;

namespace {

// An experiment whose "trainer" is a shell one-liner printing one epoch; `extra` goes before it.
std::string shell_experiment(const std::string& name, const std::string& extra, int repetitions = 2,
                             const std::string& more_conditions = "") {
  return R"({"name": ")" + name + R"(", "repetitions": )" + std::to_string(repetitions) +
         R"(, "conditions": [
    {"name": "fast", "launcher": "command", "np": [1],
     "command": ["sh", "-c", ")" +
         extra + R"( echo 'Epoch 1/1'; echo 'Training done: epochs=1'"]})" + more_conditions + "]}";
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("run refuses --db names that are not files, before running anything") {
  test::TempDir dir;
  write(dir / "e.json", shell_experiment("e", "touch " + (dir / "ran").string() + ";"));
  for (const auto& db : {std::string(), std::string(":memory:"), dir.path().string()}) {
    CAPTURE(db);
    const auto result = cli_run({"run", (dir / "e.json").string(), "--db", db});
    CHECK(result.status == 1);
    CHECK(result.err.find("scalebench: error:") == 0);
    CHECK_FALSE(fs::exists(dir / "ran"));
  }
}

TEST_CASE("run --resume runs only the cells that are not ok, into the same instance") {
  test::TempDir dir;
  const auto mark = (dir / "fixed").string();
  write(
      dir / "e.json",
      shell_experiment("resumable", "test -f " + mark + " || { echo 'disk full' >&2; exit 1; };", 3,
                       R"(, {"name": "other", "launcher": "command", "np": [1],
     "command": ["sh", "-c", "echo 'Epoch 1/1'; echo 'Training done: epochs=1'"]})"));
  const auto db = (dir / "r.db").string();
  const auto first = cli_run({"run", (dir / "e.json").string(), "--db", db});
  CHECK(first.status == 1);
  CHECK(first.err.find("3 cells have no ok run") != std::string::npos);

  // A report of a partly failed instance names the condition that has no ok run.
  const auto report = cli_run({"report", "--db", db});
  CHECK(report.status == 0);
  CHECK(report.out.find("fast np=1: 0 of 3 runs ok (3 failed); not in the table") !=
        std::string::npos);

  write(mark, "");
  const auto second = cli_run({"run", (dir / "e.json").string(), "--db", db, "--resume"});
  INFO(second.out, second.err);
  CHECK(second.status == 0);
  CHECK(second.out.find("resuming instance 1: 3 of 6 cells already ok, 3 to run") !=
        std::string::npos);
  const auto database = db::Database::open(db, db::OpenMode::ReadOnly);
  CHECK(database.experiments().size() == 1);
  const auto runs = database.runs();
  CHECK(runs.size() == 9);
  int ok = 0;
  for (const auto& run : runs) {
    if (run.status != db::RunStatus::Ok) continue;
    ++ok;
    if (run.condition == "fast") CHECK(run.attempt == 2);
  }
  CHECK(ok == 6);
  CHECK(database.experiment(1)->end_reason == "finished");

  const auto third = cli_run({"run", (dir / "e.json").string(), "--db", db, "--resume"});
  CHECK(third.status == 0);
  CHECK(database.runs().size() == 9);  // nothing left to run, nothing duplicated
}

TEST_CASE("report uses the latest instance, and pools only identical specs") {
  test::TempDir dir;
  const auto db = (dir / "r.db").string();
  write(dir / "e.json", shell_experiment("same", ""));
  REQUIRE(cli_run({"run", (dir / "e.json").string(), "--db", db}).status == 0);
  REQUIRE(cli_run({"run", (dir / "e.json").string(), "--db", db}).status == 0);

  const auto latest = cli_run({"report", "--db", db, "--format", "csv"});
  REQUIRE(latest.status == 0);
  const auto markdown = cli_run({"report", "--db", db});
  CHECK(markdown.out.find("Measured in instance 2") != std::string::npos);
  CHECK(markdown.out.find("holds 2 instances of \"same\"") != std::string::npos);
  const auto pooled = cli_run({"report", "--db", db, "--pool"});
  CHECK(pooled.status == 0);
  CHECK(pooled.out.find("Pooled 2 instances with an identical spec") != std::string::npos);

  // The same name, another spec: never pooled silently.
  write(dir / "e.json", shell_experiment("same", "", 3));
  REQUIRE(cli_run({"run", (dir / "e.json").string(), "--db", db}).status == 0);
  const auto refused = cli_run({"report", "--db", db, "--pool"});
  CHECK(refused.status == 1);
  CHECK(refused.err.find("have different specs (replace /repetitions)") != std::string::npos);
  CHECK(cli_run({"report", "--db", db, "--instance", "1", "--instance", "2"}).status == 0);
  CHECK(cli_run({"stats", "--db", db, "--instance", "1", "--instance", "3"}).status == 1);
  CHECK(cli_run({"report", "--db", db, "--instance", "9"}).err.find("no experiment instance 9") !=
        std::string::npos);
}

TEST_CASE("two concurrent writers wait out a write lock longer than the old 5 s timeout") {
  const auto scalebench = test::binary_dir() / "scalebench";
  REQUIRE(fs::exists(scalebench));
  test::TempDir dir;
  const auto db = (dir / "r.db").string();
  for (const std::string name : {"a", "b"})
    write(dir / (name + ".json"), shell_experiment(name, "", 15));
  REQUIRE(cli_run({"run", (dir / "a.json").string(), "--db", db, "--dry-run"}).status == 0);
  { auto created = db::Database::open(db); }

  sqlite3* holder = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &holder) == SQLITE_OK);
  REQUIRE(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  for (const std::string name : {"a", "b"}) {
    const auto command = "(" + scalebench.string() + " run " + (dir / (name + ".json")).string() +
                         " --db " + db + " > " + (dir / (name + ".log")).string() +
                         " 2>&1; echo $? > " + (dir / (name + ".rc")).string() + ") &";
    REQUIRE(std::system(command.c_str()) == 0);
  }
  std::this_thread::sleep_for(std::chrono::seconds(7));
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((!fs::exists(dir / "a.rc") || !fs::exists(dir / "b.rc")) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (const std::string name : {"a", "b"}) {
    std::ifstream rc(dir / (name + ".rc"));
    int code = -1;
    rc >> code;
    std::ifstream log(dir / (name + ".log"));
    INFO(std::string(std::istreambuf_iterator<char>(log), {}));
    CHECK(code == 0);
  }
  const auto database = db::Database::open(db, db::OpenMode::ReadOnly);
  CHECK(database.runs(std::string("a")).size() == 15);
  CHECK(database.runs(std::string("b")).size() == 15);
  CHECK(database.query_read_only("PRAGMA integrity_check").rows[0][0] == "ok");
  CHECK_FALSE(fs::exists(db + ".unsaved"));
}

TEST_CASE("instances whose specs differ only in \"labels\" pool, with the first one's labels") {
  test::TempDir dir;
  const auto db = (dir / "r.db").string();
  write(dir / "e.json", shell_experiment("same", ""));
  REQUIRE(cli_run({"run", (dir / "e.json").string(), "--db", db}).status == 0);
  auto labelled = shell_experiment("same", "");
  labelled.insert(labelled.rfind('}'), R"(, "labels": {"fast": "Fast one"})");
  write(dir / "e.json", labelled);
  REQUIRE(cli_run({"run", (dir / "e.json").string(), "--db", db}).status == 0);
  const auto pooled = cli_run({"report", "--db", db, "--pool"});
  INFO(pooled.err);
  CHECK(pooled.status == 0);
  CHECK(pooled.out.find("Pooled 2 instances") != std::string::npos);
  const auto latest = cli_run({"report", "--db", db});  // the latest instance: its labels
  CHECK(latest.out.find("| Fast one, np = 1 |") != std::string::npos);
}
