// Launching one process and receiving its output lines, stamped on arrival.
// The runner only sees this interface, so tests drive it with FakeExecutor (no processes).
#pragma once

#include <signal.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/line_parser.hpp"

namespace scalebench::orchestrator {

struct LaunchSpec {
  std::vector<std::string> argv;           // argv[0] is the program; no shell involved
  std::map<std::string, std::string> env;  // added to (or replacing in) a copy of the
                                           // orchestrator's environment, for this run alone
  std::optional<std::chrono::milliseconds> timeout;
  // Stdout through a pseudo-terminal instead of a pipe: C stdio and Python line-buffer on a
  // terminal, so lines arrive as printed (stderr stays a pipe, so the two streams stay apart).
  bool stdout_pty = false;
};

struct StampedLine {
  std::int64_t monotonic_ns = 0;  // steady clock when the line arrived
  std::int64_t wall_ns = 0;       // system clock (Unix epoch) when the line arrived
  Stream stream = Stream::Stdout;
  std::string text;           // raw bytes without the newline
  bool unterminated = false;  // the process ended without writing the final newline
  // Steady clock when the line's first byte arrived (a progress bar's line begins long before
  // its newline); 0: not known (a line whose first byte must date an epoch then says so).
  std::int64_t first_byte_ns = 0;
  // Where each later chunk of the line began and when it arrived, in byte order (empty: the
  // line arrived in one read). Under a launcher that tags every chunk (mpirun --tag-output), a
  // tag in the middle of the line is dated by its chunk: each rank's line by its own first byte.
  std::vector<ByteArrival> arrivals;
};

struct ProcessOutcome {
  std::optional<int> exit_code;  // absent when ended by a signal or never started
  std::optional<int> signal;
  bool timed_out = false;
  bool interrupted = false;  // a stop was asked (Ctrl-C, SIGTERM...; see request_stop)
  // False when no process ran: launch_error says why, or, with interrupted, a stop had been asked
  // before the launch (such an outcome is no run: do not store it).
  bool launched = false;
  std::string launch_error;  // non-empty when the process could not be started
  std::int64_t start_monotonic_ns = 0;
  std::int64_t end_monotonic_ns = 0;  // when the process exited (not when its pipes closed)
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

// Real processes (fork/exec, read through Asio): stdout and stderr read as they arrive; the exit
// is noticed when it happens (pidfd; polling where the kernel has none). Each run gets its own
// environment and its own process group. On timeout or stop the group gets SIGTERM, then SIGKILL
// after the grace period; when the process exits, whatever is left of its group gets SIGKILL, and
// the pipes are drained of what is already there. During a run the orchestrator is a child
// subreaper (PR_SET_CHILD_SUBREAPER): a descendant that leaves the group (setsid, setpgid) and
// loses its parent is reparented to it, gets the group's signals (SIGTERM at a timeout or stop,
// SIGKILL at the end) and is reaped before execute() returns, its own descendants likewise.
// If the orchestrator dies (even by kill -9) the
// group is killed too: PR_SET_PDEATHSIG for the process itself, and a small per-run reaper process
// that kills the group when its pipe from the orchestrator closes (mpirun's ranks included); a
// descendant that left the group is not found then (it is reparented to init).
// Call execute() from the main thread: PR_SET_PDEATHSIG follows the thread that forked.
class ProcessExecutor final : public Executor {
 public:
  explicit ProcessExecutor(std::chrono::milliseconds kill_grace = std::chrono::seconds(5))
      : kill_grace_(kill_grace) {}
  ProcessOutcome execute(const LaunchSpec& spec, const LineCallback& on_line) override;

 private:
  std::chrono::milliseconds kill_grace_;
};

// A bare program name through PATH, as execvp finds it; empty where there is none.
std::filesystem::path find_on_path(const std::string& name);

// Stop requests, for signal handlers (async-signal-safe). Once a stop is asked, a running
// ProcessExecutor stops its process and every later execute() starts nothing (outcome.launched is
// false). request_stop records the first signal that asked, for an exit status of 128 + signal.
void request_interrupt() noexcept;  // request_stop(0): a stop asked by no signal
void request_stop(int signal) noexcept;
bool interrupt_requested() noexcept;
int stop_signal() noexcept;  // the signal that first asked for the stop; 0 if none or none asked
void clear_interrupt() noexcept;  // forget the request (tests; a process that runs again)

// While alive, SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE call request_stop(signal) instead of
// ending the process (SIGPIPE: a closed `| head`; the write then fails with EPIPE), so that the
// current run is stopped and stored. The previous dispositions come back on destruction. Children
// started by ProcessExecutor get default dispositions and an empty signal mask.
class StopSignalHandlers {
 public:
  static constexpr std::array<int, 5> kSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
  StopSignalHandlers();
  ~StopSignalHandlers();
  StopSignalHandlers(const StopSignalHandlers&) = delete;
  StopSignalHandlers& operator=(const StopSignalHandlers&) = delete;

 private:
  std::array<struct sigaction, kSignals.size()> previous_{};
};

// A scripted process for tests: lines at fixed offsets from a fixed start, then an outcome. Like
// ProcessExecutor it launches nothing once a stop was asked (not called, not in launched()).
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
  // Non-zero: this signal asks for a stop during the run (request_stop at its end), so the
  // outcome is interrupted and later launches are refused, as with ProcessExecutor.
  int stop_during_run = 0;
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
