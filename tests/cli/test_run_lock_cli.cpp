// One `scalebench run` per experiment instance at a time (issue 23, item 2), with the real
// binary: two `run --resume` of one instance started together run its cells once (the second
// refuses, naming the holder), another experiment into the same database goes on meanwhile, and
// a holder killed with -9 leaves no lock that blocks the next one.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace scalebench;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A Keras-style trainer whose runs are ok, unless the file named by its first argument exists
// (then it fails at once: an instance with every cell still to run).
constexpr const char* kTrainer = R"(#!/bin/sh
if [ -e "$1" ]; then echo "told to fail" >&2; exit 3; fi
echo "Epoch 1/2"
sleep "$2"
echo "Epoch 2/2"
sleep "$2"
echo "Training done: epochs=2"
)";

void write_experiment(const fs::path& path, const std::string& name, const fs::path& trainer,
                      const fs::path& fail_flag, int repetitions, const std::string& seconds) {
  std::ofstream(path) << R"({"name": ")" << name << R"(", "repetitions": )" << repetitions
                      << R"(, "conditions": [{"name": "sh", "launcher": "command", "np": [1],
                      "command": ["sh", ")"
                      << trainer.string() << R"(", ")" << fail_flag.string() << R"(", ")" << seconds
                      << R"("]}]})";
}

// Started `scalebench ARGS...` processes, their stdout and stderr in a file each; the destructor
// kills and reaps those still running, so a failing case leaves nothing behind.
struct Started {
  pid_t pid = -1;
  fs::path output;
};
class Processes {
 public:
  explicit Processes(fs::path dir) : dir_(std::move(dir)) {}
  ~Processes() {
    for (auto& process : started_)
      if (process.pid > 0) {
        ::kill(process.pid, SIGKILL);
        int status = 0;
        ::waitpid(process.pid, &status, 0);
      }
  }
  Processes(const Processes&) = delete;
  Processes& operator=(const Processes&) = delete;

  std::size_t start(const std::vector<std::string>& arguments) {
    const std::string binary = (test::binary_dir() / "scalebench").string();
    std::vector<std::string> args{binary};
    args.insert(args.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const auto output = dir_ / ("output" + std::to_string(started_.size()) + ".txt");
    const int out_fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(out_fd >= 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(null_fd, 0);
      ::dup2(out_fd, 1);
      ::dup2(out_fd, 2);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(out_fd);
    ::close(null_fd);
    started_.push_back({pid, output});
    return started_.size() - 1;
  }

  pid_t pid(std::size_t index) const { return started_[index].pid; }

  // The exit status (-1: ended by a signal, or still running after `limit`, then killed).
  int wait(std::size_t index, std::chrono::seconds limit = 120s) {
    auto& process = started_[index];
    const auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (::waitpid(process.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(process.pid, SIGKILL);
        ::waitpid(process.pid, &status, 0);
        process.pid = -1;
        return -1;
      }
      std::this_thread::sleep_for(10ms);
    }
    process.pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string output(std::size_t index) const {
    std::ifstream file(started_[index].output);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

 private:
  fs::path dir_;
  std::vector<Started> started_;
};

std::string query(const fs::path& database, const std::string& sql) {
  sqlite3* handle = nullptr;
  std::string result = "(error)";
  if (sqlite3_open_v2(database.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(handle, 5000);
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      const auto* value = sqlite3_column_text(statement, 0);
      result = value ? reinterpret_cast<const char*>(value) : "";
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(handle);
  return result;
}

std::optional<std::string> why_no_binary() {
  if (fs::exists(test::binary_dir() / "scalebench")) return std::nullopt;
  return "build the scalebench binary first";
}

std::string host_name() {
  char buffer[256] = {};
  ::gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

}  // namespace

TEST_CASE("two run --resume of one instance started together: one runs it, the other refuses") {
  SCALEBENCH_SKIP_IF(why_no_binary());
  test::TempDir dir;
  const auto trainer = dir / "trainer.sh";
  std::ofstream(trainer) << kTrainer;
  const auto fail_flag = dir / "fail";
  const auto database = dir / "lock.db";
  const auto experiment = dir / "six.json";
  const auto other = dir / "other.json";
  write_experiment(experiment, "six", trainer, fail_flag, 6, "0.25");
  write_experiment(other, "other", trainer, fail_flag, 2, "0.05");
  Processes processes(dir.path());

  // An instance whose six cells all failed: `--resume` has all six to run.
  std::ofstream(fail_flag) << "";
  const auto first = processes.start({"run", experiment.string(), "--db", database.string()});
  CHECK(processes.wait(first) == 1);
  REQUIRE(query(database, "SELECT count(*) FROM runs WHERE status = 'failed'") == "6");
  fs::remove(fail_flag);

  const auto a = processes.start(
      {"run", experiment.string(), "--db", database.string(), "--resume", "--quiet"});
  const auto b = processes.start(
      {"run", experiment.string(), "--db", database.string(), "--resume", "--quiet"});
  // Another experiment into the same database meanwhile: not this instance, so it goes on.
  std::this_thread::sleep_for(300ms);
  const auto c = processes.start({"run", other.string(), "--db", database.string(), "--quiet"});
  const pid_t pid_a = processes.pid(a), pid_b = processes.pid(b);
  const int status_a = processes.wait(a), status_b = processes.wait(b);
  const int status_c = processes.wait(c);
  const auto out_a = processes.output(a), out_b = processes.output(b);
  INFO("first --resume (pid " << pid_a << ", exit " << status_a << "):\n" << out_a);
  INFO("second --resume (pid " << pid_b << ", exit " << status_b << "):\n" << out_b);
  INFO("other experiment (exit " << status_c << "):\n" << processes.output(c));

  CHECK(((status_a == 0 && status_b == 1) || (status_a == 1 && status_b == 0)));
  const bool a_won = status_a == 0;
  const auto& refused = a_won ? out_b : out_a;
  const pid_t holder = a_won ? pid_a : pid_b;
  // One line, naming the holder's pid and host and since when, and the lock file.
  CHECK(refused.find("scalebench: error: experiment \"six\" is already being run into") !=
        std::string::npos);
  CHECK(refused.find("by pid " + std::to_string(holder) + " on host " + host_name() + " since ") !=
        std::string::npos);
  CHECK(refused.find("lock.db.run-") != std::string::npos);
  CHECK(std::count(refused.begin(), refused.end(), '\n') == 1);
  CHECK(status_c == 0);

  // One ok run per cell of the instance (11 ok runs for 6 cells without the lock).
  CHECK(query(database,
              "SELECT count(*) FROM runs JOIN experiments e ON e.id = runs.experiment_id "
              "WHERE e.name = 'six' AND status = 'ok'") == "6");
  CHECK(query(database,
              "SELECT max(n) FROM (SELECT count(*) AS n FROM runs WHERE status = 'ok' "
              "GROUP BY experiment_id, condition, np, repetition)") == "1");
  // The lock file goes with its holder.
  std::vector<fs::path> left;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    if (entry.path().extension() == ".lock") left.push_back(entry.path());
  CHECK(left.empty());
}

TEST_CASE("a run --resume killed with -9 leaves no lock behind that blocks the next one") {
  SCALEBENCH_SKIP_IF(why_no_binary());
  test::TempDir dir;
  const auto trainer = dir / "trainer.sh";
  std::ofstream(trainer) << kTrainer;
  const auto database = dir / "lock.db";
  const auto experiment = dir / "slow.json";
  write_experiment(experiment, "slow", trainer, dir / "fail", 3, "0.4");
  Processes processes(dir.path());

  const auto killed = processes.start({"run", experiment.string(), "--db", database.string()});
  // Once it holds the lock (its file names it), kill it mid-run.
  const auto until = std::chrono::steady_clock::now() + 20s;
  bool locked = false;
  while (!locked && std::chrono::steady_clock::now() < until) {
    for (const auto& entry : fs::directory_iterator(dir.path()))
      if (entry.path().extension() == ".lock") {
        std::ifstream file(entry.path());
        std::string text;
        std::getline(file, text);
        locked = text.find("pid " + std::to_string(processes.pid(killed))) == 0;
      }
    if (!locked) std::this_thread::sleep_for(10ms);
  }
  REQUIRE(locked);
  std::this_thread::sleep_for(500ms);
  ::kill(processes.pid(killed), SIGKILL);
  CHECK(processes.wait(killed) == -1);

  const auto next = processes.start(
      {"run", experiment.string(), "--db", database.string(), "--resume", "--quiet"});
  const int status = processes.wait(next);
  INFO(processes.output(next));
  CHECK(status == 0);
  CHECK(query(database, "SELECT count(*) FROM runs WHERE status = 'ok'") == "3");
}
