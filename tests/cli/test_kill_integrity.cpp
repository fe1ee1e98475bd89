// `scalebench run` killed from outside, as the real binary: kill -9 at random moments (the
// database stays intact, every stored run is complete, no trainer is left behind), and SIGHUP,
// SIGQUIT, SIGTERM and a closed stdout pipe (the current run stored as interrupted, a non-zero
// exit, no trainer left behind).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/process_child.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A Keras-style trainer that also leaves a background child behind, as a data loader might.
constexpr const char* kTrainer = R"(#!/bin/sh
sleep 60 &
echo "Epoch 1/2"
sleep "$2"
echo "Epoch 2/2"
sleep "$2"
echo "Training done: epochs=2"
)";

// The experiment: `repetitions` runs of the trainer, each tagged with `marker` in its argv and
// environment (inherited by its background child), so that its processes can be found.
void write_experiment(const fs::path& path, const fs::path& trainer, const std::string& marker,
                      int repetitions, const std::string& epoch_seconds) {
  std::ofstream(path) << R"({
    "name": "kill",
    "repetitions": )" << repetitions
                      << R"(,
    "conditions": [{"name": "sh", "launcher": "command", "np": [1],
                    "command": ["sh", ")"
                      << trainer.string() << R"(", ")" << marker << R"(", ")" << epoch_seconds
                      << R"("],
                    "env": {"SCALEBENCH_TEST_MARKER": ")"
                      << marker << R"("}}]
  })";
}

// Live processes (zombies excepted) whose argv or environment holds the marker.
std::vector<pid_t> processes_with(const std::string& marker) {
  std::vector<pid_t> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    const auto stat = test::read_proc_text(entry.path() / "stat");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z') continue;
    if (test::read_proc_text(entry.path() / "cmdline").find(marker) != std::string::npos ||
        test::read_proc_text(entry.path() / "environ").find("SCALEBENCH_TEST_MARKER=" + marker) !=
            std::string::npos)
      found.push_back(pid);
  }
  return found;
}

// Waits up to `grace` for the marker's processes to go; kills and counts those that stay.
std::size_t orphans_after(const std::string& marker, std::chrono::milliseconds grace) {
  const auto until = std::chrono::steady_clock::now() + grace;
  auto left = processes_with(marker);
  while (!left.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
    left = processes_with(marker);
  }
  for (const pid_t pid : left) ::kill(pid, SIGKILL);
  return left.size();
}

struct Scalebench {
  pid_t pid = -1;
  int stdout_fd = -1;  // read end of its stdout when asked for, else -1
};

// `scalebench run EXPERIMENT --db DB`, its stderr and (unless captured) stdout to /dev/null.
Scalebench start_run(const fs::path& experiment, const fs::path& database, bool capture_stdout) {
  const std::string binary = (test::binary_dir() / "scalebench").string();
  std::vector<std::string> args{binary, "run", experiment.string(), "--db", database.string()};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int out[2] = {-1, -1};
  if (capture_stdout) REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  Scalebench started;
  started.pid = ::fork();
  REQUIRE(started.pid >= 0);
  if (started.pid == 0) {
    ::dup2(null_fd, 0);
    ::dup2(capture_stdout ? out[1] : null_fd, 1);
    ::dup2(null_fd, 2);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(null_fd);
  if (capture_stdout) {
    ::close(out[1]);
    started.stdout_fd = out[0];
  }
  return started;
}

// The wait status, or nothing if it did not end within `limit` (then it is killed).
std::optional<int> wait_at_most(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return std::nullopt;
    }
    std::this_thread::sleep_for(5ms);
  }
  return status;
}

bool wait_for_process(const std::string& marker, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (processes_with(marker).empty()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// One integer from a query, through the SQLite C API (read-write, so that a hot journal left
// by a killed writer is rolled back as the next scalebench would).
struct Sqlite {
  sqlite3* handle = nullptr;
  explicit Sqlite(const fs::path& path) {
    if (sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      sqlite3_close(handle);
      handle = nullptr;
    }
    if (handle) sqlite3_busy_timeout(handle, 5000);
  }
  ~Sqlite() { sqlite3_close(handle); }
  Sqlite(const Sqlite&) = delete;
  Sqlite& operator=(const Sqlite&) = delete;
  std::string text(const std::string& sql) const {
    sqlite3_stmt* statement = nullptr;
    std::string result = "(error)";
    if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      const auto* value = sqlite3_column_text(statement, 0);
      result = value ? reinterpret_cast<const char*>(value) : "";
    }
    sqlite3_finalize(statement);
    return result;
  }
};

constexpr const char* kIncompleteOkRuns =
    "SELECT count(*) FROM runs AS r WHERE r.status = 'ok' AND "
    "(SELECT count(*) FROM epochs AS e WHERE e.run_id = r.id) != 2";

std::optional<std::string> why_no_binary() {
  if (fs::exists(test::binary_dir() / "scalebench")) return std::nullopt;
  return "build the scalebench binary first";
}

// The fake trainer every case runs, written into `dir`.
fs::path write_trainer(const test::TempDir& dir) {
  const auto trainer = dir / "trainer.sh";
  std::ofstream(trainer) << kTrainer;
  return trainer;
}

}  // namespace

TEST_CASE(
    "kill -9 of scalebench run at random moments: database intact, runs complete, no orphans") {
  SCALEBENCH_SKIP_IF(why_no_binary());
  test::TempDir dir;
  const auto trainer = write_trainer(dir);
  const auto database = dir / "kill.db";
  std::mt19937 random(20260916);  // fixed seed: the same delays on every run of the test
  std::uniform_int_distribution<int> delay_ms(0, 600);
  constexpr int kKills = 30;
  int intact = 0, with_runs = 0;
  std::size_t orphans = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int kill = 0; kill < kKills; ++kill) {
    const std::string marker = "sbkill" + std::to_string(::getpid()) + "x" + std::to_string(kill);
    const auto experiment = dir / ("kill-" + std::to_string(kill) + ".json");
    write_experiment(experiment, trainer, marker, 50, "0.02");
    const auto child = start_run(experiment, database, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    ::kill(child.pid, SIGKILL);
    int status = 0;
    ::waitpid(child.pid, &status, 0);

    const auto left = orphans_after(marker, 2s);
    orphans += left;
    bool ok = true;
    if (fs::exists(database)) {
      const Sqlite db(database);
      REQUIRE(db.handle);
      const auto integrity = db.text("PRAGMA integrity_check");
      const auto incomplete = db.text(kIncompleteOkRuns);
      INFO("kill " << kill << ": integrity_check " << integrity << ", incomplete ok runs "
                   << incomplete);
      CHECK(integrity == "ok");
      CHECK(incomplete == "0");
      ok = integrity == "ok" && incomplete == "0";
      with_runs += db.text("SELECT count(*) FROM runs") != "0";
    }
    CHECK_MESSAGE(left == 0, "kill " << kill << " left " << left << " processes of its tree");
    intact += ok;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const Sqlite db(database);
  MESSAGE("random kill -9: kills "
          << kKills << ", intact " << intact << ", orphans " << orphans << ", runs stored "
          << (db.handle ? db.text("SELECT count(*) FROM runs") : "0") << " (" << seconds << " s)");
  CHECK(intact == kKills);
  CHECK(orphans == 0);
  CHECK(with_runs > 0);  // some kills came after runs were stored: the check saw real data
  CHECK(seconds < 60);
}

TEST_CASE(
    "SIGHUP, SIGQUIT and SIGTERM stop scalebench run: run stored as interrupted, no orphans") {
  SCALEBENCH_SKIP_IF(why_no_binary());
  test::TempDir dir;
  const auto trainer = write_trainer(dir);
  for (const int signal : {SIGHUP, SIGQUIT, SIGTERM}) {
    CAPTURE(signal);
    const std::string marker = "sbsig" + std::to_string(::getpid()) + "x" + std::to_string(signal);
    const auto experiment = dir / ("signal-" + std::to_string(signal) + ".json");
    const auto database = dir / ("signal-" + std::to_string(signal) + ".db");
    write_experiment(experiment, trainer, marker, 3, "30");  // the first epoch lasts 30 s
    const auto child = start_run(experiment, database, false);
    REQUIRE(wait_for_process(marker, 10s));
    ::kill(child.pid, signal);
    const auto status = wait_at_most(child.pid, 15s);
    REQUIRE(status);
    const bool failed_exit = WIFEXITED(*status) && WEXITSTATUS(*status) != 0;
    CHECK(failed_exit);
    CHECK(orphans_after(marker, 2s) == 0);
    const Sqlite db(database);
    REQUIRE(db.handle);
    CHECK(db.text("SELECT group_concat(status) FROM runs") == "interrupted");
  }
}

TEST_CASE("scalebench run | head -1: a closed stdout ends it cleanly, non-zero, without orphans") {
  SCALEBENCH_SKIP_IF(why_no_binary());
  test::TempDir dir;
  const auto trainer = write_trainer(dir);
  const std::string marker = "sbpipe" + std::to_string(::getpid());
  const auto experiment = dir / "pipe.json";
  const auto database = dir / "pipe.db";
  constexpr int kRepetitions = 20;
  write_experiment(experiment, trainer, marker, kRepetitions, "0.05");
  auto child = start_run(experiment, database, true);
  // As head -1: read the first line, then close the pipe.
  char c = 0;
  std::string first;
  while (::read(child.stdout_fd, &c, 1) == 1 && c != '\n') first += c;
  ::close(child.stdout_fd);
  CHECK(first.find("scalebench: experiment") == 0);
  const auto status = wait_at_most(child.pid, 20s);
  REQUIRE(status);
  INFO("wait status " << *status);
  CHECK(WIFEXITED(*status));  // not killed by SIGPIPE
  const bool failed_exit = WIFEXITED(*status) && WEXITSTATUS(*status) != 0;
  CHECK(failed_exit);
  CHECK(orphans_after(marker, 2s) == 0);
  const Sqlite db(database);
  REQUIRE(db.handle);
  CHECK(db.text("PRAGMA integrity_check") == "ok");
  CHECK(std::stoi(db.text("SELECT count(*) FROM runs")) < kRepetitions);  // it stopped early
}

TEST_CASE("kill -9 of run: a setsid grandchild dies too, where a cgroup per run can be made") {
  // It left the run's process group and session, so neither the group kill nor the death signal
  // reached it; in the run's own cgroup the reaper kills it with the rest.
  SCALEBENCH_SKIP_IF(why_no_binary());
  {
    scalebench::orchestrator::process::RunCgroup probe;
    SCALEBENCH_SKIP_IF(probe.dir() != nullptr
                           ? std::nullopt
                           : std::optional<std::string>("no writable cgroup v2 here (docs: "
                                                        "launchers.md, what a kill -9 leaves)"));
  }
  test::TempDir dir;
  const std::string marker = "setsid-" + std::to_string(::getpid());
  const auto trainer = dir / "escape.sh";
  std::ofstream(trainer) << "#!/bin/sh\nsetsid sleep 300 &\necho 'Epoch 1/1'\nsleep 300\n";
  write_experiment(dir / "e.json", trainer, marker, 1, "1");
  const auto run = start_run(dir / "e.json", dir / "r.db", false);
  // Both sleeps carry the marker in their environment; wait for the setsid one.
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (processes_with(marker).size() < 3 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  REQUIRE(processes_with(marker).size() >= 3);  // sh, its sleep, the setsid sleep
  ::kill(run.pid, SIGKILL);
  CHECK(wait_at_most(run.pid, 5s));
  CHECK(orphans_after(marker, 5s) == 0);
}
