// Launching one process and receiving its output lines, stamped on arrival.
// The runner only sees this interface, so tests drive it with FakeExecutor (no processes).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/line_parser.hpp"

namespace scalebench::orchestrator {

struct LaunchSpec {
  std::vector<std::string> argv;               // argv[0] is the program; no shell involved
  std::map<std::string, std::string> env;      // added to (or replacing in) the inherited environment
  std::optional<std::chrono::milliseconds> timeout;
};

struct StampedLine {
  std::int64_t monotonic_ns = 0;  // steady clock when the line arrived
  std::int64_t wall_ns = 0;       // system clock (Unix epoch) when the line arrived
  Stream stream = Stream::Stdout;
  std::string text;               // raw bytes without the newline
  bool unterminated = false;      // the process ended without writing the final newline
};

struct ProcessOutcome {
  std::optional<int> exit_code;   // absent when ended by a signal or never started
  std::optional<int> signal;
  bool timed_out = false;
  bool interrupted = false;       // the user pressed Ctrl-C (see request_interrupt)
  std::string launch_error;       // non-empty when the process could not be started
  std::int64_t start_monotonic_ns = 0;
  std::int64_t end_monotonic_ns = 0;
  std::int64_t start_wall_ns = 0;
  std::int64_t end_wall_ns = 0;
};

using LineCallback = std::function<void(StampedLine&&)>;

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs the process to completion, calling on_line for each line in arrival order.
  virtual ProcessOutcome execute(const LaunchSpec& spec, const LineCallback& on_line) = 0;
};

// Real processes through Boost.Process: stdout and stderr read as they arrive; on timeout or
// interrupt the whole process group gets SIGTERM, then SIGKILL after a grace period.
class ProcessExecutor final : public Executor {
 public:
  explicit ProcessExecutor(std::chrono::milliseconds kill_grace = std::chrono::seconds(5))
      : kill_grace_(kill_grace) {}
  ProcessOutcome execute(const LaunchSpec& spec, const LineCallback& on_line) override;

 private:
  std::chrono::milliseconds kill_grace_;
};

// Asks a running ProcessExecutor to stop its process (async-signal-safe; for SIGINT handlers).
void request_interrupt() noexcept;
bool interrupt_requested() noexcept;

// A scripted process for tests: lines at fixed offsets from a fixed start, then an outcome.
struct FakeLine {
  double offset_seconds = 0;
  Stream stream = Stream::Stdout;
  std::string text;
  bool unterminated = false;
};
struct FakeProcess {
  std::vector<FakeLine> lines;
  std::optional<int> exit_code = 0;
  std::optional<int> signal;
  bool timed_out = false;
  std::string launch_error;
  double duration_seconds = 0;  // defaults to the last line's offset
};

class FakeExecutor final : public Executor {
 public:
  using Script = std::function<FakeProcess(const LaunchSpec&)>;
  explicit FakeExecutor(Script script) : script_(std::move(script)) {}
  ProcessOutcome execute(const LaunchSpec& spec, const LineCallback& on_line) override;
  const std::vector<LaunchSpec>& launched() const { return launched_; }

 private:
  Script script_;
  std::vector<LaunchSpec> launched_;
  std::int64_t clock_ns_ = 1'000'000'000'000;  // each fake run starts where the last ended
};

}  // namespace scalebench::orchestrator
