#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <utility>  // before Boost 1.74's asio, which uses std::exchange without it
#include <atomic>
#include <boost/asio.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <chrono>

#include "orchestrator/executor.hpp"

namespace scalebench::orchestrator {
namespace {

namespace bp = boost::process;
namespace asio = boost::asio;

std::atomic<bool> g_interrupt{false};

std::int64_t monotonic_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
std::int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Puts the child in a process group of its own, so that a timeout can stop mpirun together
// with every rank it started.
struct NewProcessGroup : bp::extend::handler {
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);
  }
};

struct PipeReader {
  bp::async_pipe pipe;
  Stream stream;
  std::array<char, 1 << 16> buffer{};
  LineSplitter splitter;
  bool open = true;
};

}  // namespace

void request_interrupt() noexcept { g_interrupt.store(true); }
bool interrupt_requested() noexcept { return g_interrupt.load(); }

ProcessOutcome ProcessExecutor::execute(const LaunchSpec& spec, const LineCallback& on_line) {
  ProcessOutcome outcome;
  outcome.start_monotonic_ns = monotonic_now_ns();
  outcome.start_wall_ns = wall_now_ns();
  const auto finish_now = [&] {
    outcome.end_monotonic_ns = monotonic_now_ns();
    outcome.end_wall_ns = wall_now_ns();
    return outcome;
  };

  if (spec.argv.empty()) {
    outcome.launch_error = "empty command line";
    return finish_now();
  }
  boost::filesystem::path program = spec.argv[0];
  if (program.filename() == program) program = bp::search_path(spec.argv[0]);
  if (program.empty() || !boost::filesystem::exists(program)) {
    outcome.launch_error = "program not found: " + spec.argv[0];
    return finish_now();
  }

  asio::io_context io;
  PipeReader out{bp::async_pipe(io), Stream::Stdout, {}, {}, true};
  PipeReader err{bp::async_pipe(io), Stream::Stderr, {}, {}, true};
  auto environment = boost::this_process::environment();
  for (const auto& [key, value] : spec.env) environment[key] = value;

  std::error_code launch_error;
  bp::child child(bp::exe = program, bp::args = std::vector<std::string>(spec.argv.begin() + 1,
                                                                        spec.argv.end()),
                  bp::std_out > out.pipe, bp::std_err > err.pipe, bp::std_in < bp::null,
                  environment, NewProcessGroup{}, launch_error);
  outcome.start_monotonic_ns = monotonic_now_ns();
  outcome.start_wall_ns = wall_now_ns();
  if (launch_error) {
    outcome.launch_error = "cannot start " + program.string() + ": " + launch_error.message();
    return finish_now();
  }
  const pid_t group = child.id();

  std::vector<std::string> lines;
  std::function<void(PipeReader&)> read_more = [&](PipeReader& reader) {
    reader.pipe.async_read_some(
        asio::buffer(reader.buffer), [&](const boost::system::error_code& error, std::size_t n) {
          // Every line completed by this chunk arrived now: stamp before doing anything else.
          const auto mono = monotonic_now_ns();
          const auto wall = wall_now_ns();
          lines.clear();
          reader.splitter.feed(std::string_view(reader.buffer.data(), n), lines);
          for (auto& text : lines) on_line(StampedLine{mono, wall, reader.stream, std::move(text)});
          if (error) {
            reader.open = false;
            if (auto rest = reader.splitter.finish())
              on_line(StampedLine{mono, wall, reader.stream, std::move(*rest), true});
            return;
          }
          read_more(reader);
        });
  };
  read_more(out);
  read_more(err);

  // A watchdog polls the child: deadline, Ctrl-C, and descendants that keep the pipes open
  // after the child itself has exited.
  using Clock = std::chrono::steady_clock;
  const auto deadline = spec.timeout ? std::optional(Clock::now() + *spec.timeout) : std::nullopt;
  std::optional<Clock::time_point> term_sent;
  std::optional<Clock::time_point> exited_at;
  bool kill_sent = false;
  asio::steady_timer timer(io);
  std::function<void()> watch = [&] {
    timer.expires_after(std::chrono::milliseconds(50));
    timer.async_wait([&](const boost::system::error_code&) {
      const auto now = Clock::now();
      std::error_code ignored;
      const bool running = !exited_at && child.running(ignored);
      if (!running && !exited_at) exited_at = now;
      if (running && !term_sent) {
        const bool timed_out = deadline && now >= *deadline;
        if (timed_out || g_interrupt.load()) {
          outcome.timed_out = timed_out;
          outcome.interrupted = !timed_out;
          ::kill(-group, SIGTERM);
          term_sent = now;
        }
      }
      if (term_sent && !kill_sent && now - *term_sent >= kill_grace_) {
        ::kill(-group, SIGKILL);
        kill_sent = true;
      }
      if (exited_at && (out.open || err.open) && now - *exited_at >= std::chrono::seconds(2)) {
        // Grandchildren still hold the pipes: stop them and stop reading.
        ::kill(-group, SIGKILL);
        boost::system::error_code close_error;
        out.pipe.close(close_error);
        err.pipe.close(close_error);
      }
      if (running || out.open || err.open) watch();
    });
  };
  watch();
  io.run();

  std::error_code wait_error;
  child.wait(wait_error);
  const int status = child.native_exit_code();
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return finish_now();
}

}  // namespace scalebench::orchestrator
