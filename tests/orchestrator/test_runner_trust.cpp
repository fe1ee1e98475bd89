// The runner under hostile output, failures, a busy database, resume and retries (issue "Results
// you can trust"): through the fake executor and a real database file, plus one real process.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <csignal>
#include <fstream>

#include "orchestrator/runner.hpp"
#include "runner_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

using test::context_for;

FakeProcess good_run() {
  FakeProcess process;
  process.lines = {{0.1, Stream::Stdout, "Epoch 1/2"},
                   {0.6, Stream::Stdout, "Epoch 2/2"},
                   {1.1, Stream::Stdout, "Training done: epochs=2"}};
  return process;
}

FakeProcess failed_run() {
  FakeProcess process;
  process.lines = {{0.1, Stream::Stderr, "CUDA out of memory"}};
  process.exit_code = 1;
  return process;
}

const char* kTwoConditions = R"({"name":"trust","repetitions":2,"conditions":[
  {"name":"a","launcher":"single","env":{"OMP_NUM_THREADS":"1"}},
  {"name":"b","launcher":"single"}]})";

std::size_t count_status(const std::vector<db::RunRecord>& runs, db::RunStatus status) {
  return static_cast<std::size_t>(
      std::count_if(runs.begin(), runs.end(), [&](const auto& r) { return r.status == status; }));
}

}  // namespace

TEST_CASE("runs whose lines used to abort the matrix are stored, and the matrix goes on") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(
      R"({"name":"hostile","repetitions":5,"conditions":[{"name":"c","launcher":"single"}]})",
      "h.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  int call = 0;
  FakeExecutor executor([&](const LaunchSpec&) {
    FakeProcess process;
    switch (call++) {
      case 0:  // out of order: used to fail CHECK (duration_seconds >= 0) and stop the matrix
        process.lines = {{0.1, Stream::Stdout, "Epoch 2/2"},
                         {0.5, Stream::Stdout, "Epoch 1/2"},
                         {0.9, Stream::Stdout, "Training done: epochs=2"}};
        break;
      case 1:  // `Training done:` before the last epoch
        process.lines = {{0.1, Stream::Stdout, "Epoch 1/2"},
                         {0.2, Stream::Stdout, "Training done: x=1"},
                         {0.5, Stream::Stdout, "Epoch 2/2"}};
        break;
      case 2:  // an absurd total: used to run out of memory
        process.lines = {{0.1, Stream::Stdout, "Epoch 1/100000000"}};
        break;
      case 3:  // garbage and escape sequences
        process.lines = {{0.1, Stream::Stderr, std::string("\x1b]0;pwned\x07\xff\xfe\0", 13)}};
        process.exit_code = 3;
        break;
      default:
        return good_run();
    }
    return process;
  });
  const auto outcome =
      run_experiment(experiment, plans, executor, database, context_for(experiment));
  CHECK(outcome.runs == 5);
  const auto runs = database.runs("hostile");
  REQUIRE(runs.size() == 5);
  CHECK(runs[0].status == db::RunStatus::Incomplete);
  CHECK(runs[0].error.find("out of order") != std::string::npos);
  CHECK(runs[1].status == db::RunStatus::Incomplete);
  CHECK(runs[2].status == db::RunStatus::Incomplete);
  CHECK(runs[2].error.find("99999999 missing") != std::string::npos);
  CHECK(runs[3].status == db::RunStatus::Failed);
  // The reason is the line as a terminal shows it: the title sequence and the NUL print nothing
  // (so nothing in it can drive a terminal), the bad bytes are U+FFFD; the stored line keeps them.
  CHECK(runs[3].error == "exit code 3 (stderr: \xEF\xBF\xBD\xEF\xBF\xBD)");
  CHECK(runs[4].status == db::RunStatus::Ok);
  const auto instance = database.experiment(outcome.experiment_id);
  CHECK(instance->end_reason == "finished");
  CHECK(instance->cells == 5);
}

TEST_CASE("each run records the env its condition gave it") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(kTwoConditions, "t.json");
  FakeExecutor executor([](const LaunchSpec&) { return good_run(); });
  run_experiment(experiment, expand_matrix(experiment, {"scalebench-train", false}), executor,
                 database, context_for(experiment));
  const auto runs = database.runs("trust");
  REQUIRE(runs.size() == 4);
  // PYTHONUNBUFFERED=1 is every run's default (a Python program's lines arrive as printed).
  CHECK(runs[0].env_json == R"({"OMP_NUM_THREADS":"1","PYTHONUNBUFFERED":"1"})");
  CHECK(runs[1].env_json == R"({"PYTHONUNBUFFERED":"1"})");
  // b does not inherit a's variables.
  CHECK(executor.launched()[1].env ==
        std::map<std::string, std::string>{{"PYTHONUNBUFFERED", "1"}});
}

TEST_CASE(
    "--retries re-runs a failed cell, storing every attempt; --resume runs only cells not ok") {
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(kTwoConditions, "t.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});

  // First invocation: b fails every time; a fails once and succeeds on its retry.
  std::map<std::string, int> calls;
  FakeExecutor flaky([&](const LaunchSpec& spec) {
    const bool is_a = spec.env.contains("OMP_NUM_THREADS");
    const int n = calls[is_a ? "a" : "b"]++;
    if (is_a && n == 0) return failed_run();
    return is_a ? good_run() : failed_run();
  });
  RunnerOptions options;
  options.retries = 1;
  const auto first =
      run_experiment(experiment, plans, flaky, database, context_for(experiment), nullptr, options);
  CHECK(first.cells == 4);
  CHECK(first.cells_ok == 2);
  CHECK(first.runs == 1 + 1 + 2 + 1 + 2);  // a: fail+ok, b: fail+fail, a: ok, b: fail+fail
  auto runs = database.runs_of_instances({first.experiment_id});
  CHECK(count_status(runs, db::RunStatus::Ok) == 2);
  CHECK(runs[1].attempt == 2);
  CHECK(runs[1].status == db::RunStatus::Ok);

  // Resume with a fixed b: only b's two cells run, as attempt 3, into the same instance.
  FakeExecutor fixed([](const LaunchSpec&) { return good_run(); });
  auto instance = resume_instance(database, context_for(experiment), plans);
  CHECK(instance.record.id == first.experiment_id);
  CHECK(instance.pending.size() == 2);
  CHECK(instance.cells_ok == 2);
  const auto second = run_instance(experiment, instance, fixed, database);
  CHECK(second.cells_ok == 4);
  CHECK(fixed.launched().size() == 2);
  runs = database.runs_of_instances({first.experiment_id});
  CHECK(count_status(runs, db::RunStatus::Ok) == 4);
  CHECK(runs.back().attempt == 3);
  CHECK(database.experiments().size() == 1);

  // Nothing left: a resume runs nothing and duplicates nothing.
  auto done = resume_instance(database, context_for(experiment), plans);
  CHECK(done.pending.empty());
  run_instance(experiment, done, fixed, database);
  CHECK(database.runs_of_instances({first.experiment_id}).size() == runs.size());

  // Another spec cannot be resumed into this instance.
  const auto changed = parse_experiment(
      R"({"name":"trust","repetitions":3,"conditions":[{"name":"a","launcher":"single"}]})",
      "t.json");
  CHECK_THROWS_AS(resume_instance(database, context_for(changed),
                                  expand_matrix(changed, {"scalebench-train", false})),
                  ExperimentError);
}

namespace {
// A run observer that keeps what it is told about side files and lost runs.
struct SideFileLog final : RunObserver {
  std::vector<std::string> side, lost;
  void on_side_file(const std::filesystem::path& file, const std::string& why) override {
    side.push_back(file.string() + " | " + why);
  }
  void on_run_lost(const std::string& why) override { lost.push_back(why); }
};

// Runs kTwoConditions into a database another connection keeps locked; side files go to
// `side_directory` and `fallback`.
ExperimentOutcome run_locked(const std::string& path, const std::filesystem::path& side_directory,
                             const std::filesystem::path& fallback, SideFileLog& log,
                             FakeExecutor& executor) {
  auto database = db::Database::open(path);
  const auto experiment = parse_experiment(kTwoConditions, "t.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  auto instance = start_instance(database, context_for(experiment), plans);
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  database.set_busy_timeout(20);
  RunnerOptions options;
  options.store_attempts = 2;
  options.store_retry_delay = std::chrono::milliseconds(5);
  options.side_directory = side_directory;
  options.fallback_side_directory = fallback;
  const auto outcome = run_instance(experiment, instance, executor, database, &log, options);
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  return outcome;
}
}  // namespace

TEST_CASE("a database locked by another process: retried, then the run goes to a side file") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  SideFileLog log;
  FakeExecutor executor([](const LaunchSpec&) { return good_run(); });
  const auto outcome = run_locked(path, {}, dir / "fallback", log, executor);
  const auto experiment = parse_experiment(kTwoConditions, "t.json");

  CHECK(outcome.runs == 4);
  REQUIRE(outcome.side_files.size() == 4);
  CHECK(outcome.side_files[0].parent_path() == std::filesystem::path(path + ".unsaved"));
  CHECK(log.side.size() == 4);
  const auto side = db::Database::open(outcome.side_files[0].string(), db::OpenMode::ReadOnly);
  const auto side_runs = side.runs();
  REQUIRE(side_runs.size() == 1);
  CHECK(side_runs[0].status == db::RunStatus::Ok);
  CHECK(side.lines(side_runs[0].id).size() == 3);
  CHECK(side.experiments()[0].spec_json == experiment.spec_json);
  CHECK(db::Database::open(path, db::OpenMode::ReadOnly).runs().empty());
}

TEST_CASE("a side file that cannot be made beside the database goes to the fallback, named") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  std::ofstream(path + ".unsaved") << "a regular file where the side directory would go";
  SideFileLog log;
  FakeExecutor executor([](const LaunchSpec&) { return good_run(); });
  const auto outcome = run_locked(path, path + ".unsaved", dir / "fallback", log, executor);
  CHECK(outcome.runs == 4);
  CHECK(outcome.ok == 4);
  REQUIRE(outcome.side_files.size() == 4);
  CHECK(outcome.side_files[0].parent_path() == dir / "fallback");
  REQUIRE(log.side.size() == 4);
  CHECK(log.side[0].find("side file refused at " + path + ".unsaved/instance") !=
        std::string::npos);
  CHECK(log.lost.empty());
  const auto side = db::Database::open(outcome.side_files[3].string(), db::OpenMode::ReadOnly);
  REQUIRE(side.runs().size() == 1);
  CHECK(side.lines(side.runs()[0].id).size() == 3);
}

TEST_CASE("a run nothing can take is lost with its reasons, and the matrix goes on") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  std::ofstream(path + ".unsaved") << "x";
  std::ofstream(dir / "fallback") << "x";
  SideFileLog log;
  FakeExecutor executor([](const LaunchSpec&) { return good_run(); });
  const auto outcome = run_locked(path, path + ".unsaved", dir / "fallback", log, executor);
  CHECK(executor.launched().size() == 4);  // every cell was still run
  CHECK(outcome.runs == 0);
  CHECK(outcome.ok == 0);
  CHECK(outcome.cells_ok == 0);
  REQUIRE(outcome.lost_runs.size() == 4);
  CHECK(outcome.lost_runs[0].find("side file refused at " + (dir / "fallback").string()) !=
        std::string::npos);
  CHECK(log.lost.size() == 4);
}

namespace {
// Asks for a stop on its N-th call, just before handing the launch to the fake: the window
// between the runner's own check and the launch.
class StopBeforeLaunch final : public Executor {
 public:
  StopBeforeLaunch(int stop_on_call, FakeExecutor::Script script)
      : stop_on_call_(stop_on_call), fake_(std::move(script)) {}
  ProcessOutcome execute(const LaunchSpec& spec, const LineCallback& on_line) override {
    if (++calls_ == stop_on_call_) request_stop(SIGTERM);
    return fake_.execute(spec, on_line);
  }
  const FakeExecutor& fake() const { return fake_; }

 private:
  int stop_on_call_;
  int calls_ = 0;
  FakeExecutor fake_;
};
}  // namespace

TEST_CASE("a stop during a run stores that run as interrupted and launches nothing after it") {
  clear_interrupt();
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(kTwoConditions, "t.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  int call = 0;
  FakeExecutor executor([&](const LaunchSpec&) {
    auto process = good_run();
    if (++call == 2) process.stop_during_run = SIGINT;
    return process;
  });
  const auto outcome =
      run_experiment(experiment, plans, executor, database, context_for(experiment));
  const int signal = stop_signal();
  clear_interrupt();
  CHECK(outcome.interrupted);
  CHECK(signal == SIGINT);
  CHECK(executor.launched().size() == 2);
  const auto runs = database.runs_of_instances({outcome.experiment_id});
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].status == db::RunStatus::Ok);
  CHECK(runs[1].status == db::RunStatus::Interrupted);
  CHECK(database.experiments()[0].end_reason == "interrupted");
}

TEST_CASE("a stop between the runner's check and the launch stores no run for the cell") {
  clear_interrupt();
  test::TempDir dir;
  auto database = db::Database::open((dir / "r.db").string());
  const auto experiment = parse_experiment(kTwoConditions, "t.json");
  const auto plans = expand_matrix(experiment, {"scalebench-train", false});
  StopBeforeLaunch executor(3, [](const LaunchSpec&) { return good_run(); });
  const auto outcome =
      run_experiment(experiment, plans, executor, database, context_for(experiment));
  clear_interrupt();
  CHECK(outcome.interrupted);
  CHECK(outcome.runs == 2);
  CHECK(executor.fake().launched().size() == 2);
  const auto runs = database.runs_of_instances({outcome.experiment_id});
  REQUIRE(runs.size() == 2);  // the refused third launch is no run: no bogus "interrupted" row
  CHECK(count_status(runs, db::RunStatus::Ok) == 2);
  // --resume then runs exactly the two cells that never ran.
  auto instance = resume_instance(database, context_for(experiment), plans);
  CHECK(instance.pending.size() == 2);
}
