#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>
// Boost 1.74's asio uses std::exchange without including <utility>: keep this order.
// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on

#include "orchestrator/executor.hpp"
#include "orchestrator/process_child.hpp"

extern char** environ;  // NOLINT: POSIX

namespace scalebench::orchestrator {
namespace {

using process::ChildSetup;
using process::Pipe;
using process::RunningChild;
using process::Subreaper;
using process::UniqueFd;

namespace asio = boost::asio;

// Plain lock-free atomics: the only state a signal handler touches.
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);
std::atomic<bool> g_interrupt{false};
std::atomic<int> g_stop_signal{0};
std::atomic<int> g_wake_write_fd{-1};  // a byte here wakes a running execute() at once

// The read end of the wake pipe, created once and never closed, so that a signal handler never
// writes to a descriptor number that was closed and reused.
int wake_read_fd() {
  static const int fd = [] {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    g_wake_write_fd.store(fds[1]);
    return fds[0];
  }();
  return fd;
}

void drain(int fd) {
  std::array<char, 256> sink{};
  while (::read(fd, sink.data(), sink.size()) > 0) {
  }
}

extern "C" void on_stop_signal(int signal) { request_stop(signal); }

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

std::string errno_text(int error) { return std::strerror(error); }

// A bare program name through the orchestrator's PATH, as execvp would (but before fork).
std::filesystem::path search_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (;;) {
    const auto colon = dirs.find(':');
    const auto dir = dirs.substr(0, colon);
    const auto candidate = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / name;
    std::error_code ignored;
    if (std::filesystem::is_regular_file(candidate, ignored) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (colon == std::string_view::npos) return {};
    dirs.remove_prefix(colon + 1);
  }
}

// The program to exec: a path as given, a bare name through PATH. Empty, with `error` set, where
// there is none: that is told before anything is opened or forked.
std::filesystem::path find_program(const std::vector<std::string>& argv, std::string& error) {
  if (argv.empty()) {
    error = "empty command line";
    return {};
  }
  std::filesystem::path program = argv[0];
  if (program.filename() == program) program = search_path(argv[0]);
  if (program.empty() || !std::filesystem::exists(program)) {
    error = "program not found: " + argv[0];
    return {};
  }
  return program;
}

// What execve gets, built before fork (after it the child makes only async-signal-safe calls).
// This run's environment is a copy of the orchestrator's with the spec's entries, never setenv.
struct ExecImage {
  ExecImage(const std::filesystem::path& program_path, const LaunchSpec& spec)
      : args(spec.argv), program(program_path.string()) {
    for (char** entry = environ; entry && *entry; ++entry) {
      const std::string_view text(*entry);
      const auto key = text.substr(0, text.find('='));
      if (!spec.env.count(std::string(key))) environment.emplace_back(text);
    }
    for (const auto& [key, value] : spec.env) environment.push_back(key + "=" + value);
    for (auto& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
  }
  ExecImage(const ExecImage&) = delete;  // envp and argv point into the strings
  ExecImage& operator=(const ExecImage&) = delete;

  std::vector<std::string> environment, args;
  std::vector<char*> envp, argv;
  std::string program;
};

// The descriptors of one run, opened before fork: the program's stdout (a pipe, or a pty), its
// stderr, its exec status, the reaper's lifeline, the go byte, and /dev/null for its stdin.
struct RunPipes {
  Pipe out, err, status, reaper, go;
  UniqueFd null_fd;

  bool all_open() const {
    return out.read.get() >= 0 && err.read.get() >= 0 && status.read.get() >= 0 &&
           reaper.read.get() >= 0 && go.read.get() >= 0 && null_fd.get() >= 0;
  }
};

RunPipes open_run_pipes(bool stdout_pty) {
  return RunPipes{stdout_pty ? process::make_pty() : process::make_pipe(),
                  process::make_pipe(),
                  process::make_pipe(),
                  process::make_pipe(),
                  process::make_pipe(),
                  UniqueFd(process::above_standard(::open("/dev/null", O_RDONLY | O_CLOEXEC)))};
}

ChildSetup child_setup(const ExecImage& image, const RunPipes& pipes) {
  return ChildSetup{
      image.program.c_str(), image.argv.data(),     image.envp.data(),     ::getpid(),
      pipes.null_fd.get(),   pipes.out.write.get(), pipes.err.write.get(), pipes.status.write.get(),
      pipes.go.read.get(),   pipes.go.write.get()};
}

// Lets the child exec, now that the reaper holds its group, and waits for execve's answer: EOF on
// the status pipe means it succeeded, otherwise the pipe carries its errno.
std::optional<int> let_exec(RunPipes& pipes) {
  const char go = 1;
  ssize_t sent = 0;
  do sent = ::write(pipes.go.write.get(), &go, 1);
  while (sent < 0 && errno == EINTR);
  pipes.go.write.reset();

  int exec_error = 0;
  ssize_t got = 0;
  do got = ::read(pipes.status.read.get(), &exec_error, sizeof exec_error);
  while (got < 0 && errno == EINTR);
  if (got > 0) return exec_error;
  pipes.status.read.reset();
  return std::nullopt;
}

// The parent's side of the fork: the group made here too, the child's ends of the pipes closed,
// the reaper started, then the child let exec. The launch error, or "" with the program running;
// `child` holds it either way (already finished where it could not start).
std::string release_child(pid_t pid, const std::string& program, RunPipes& pipes,
                          const Subreaper& subreaper, process::RunCgroup& cgroup,
                          std::optional<RunningChild>& child) {
  ::setpgid(pid, pid);  // also here, so that the group exists before any kill(-pid)
  cgroup.add(pid);      // before exec: every descendant is born in it
  pipes.out.write.reset();
  pipes.err.write.reset();
  pipes.status.write.reset();
  pipes.null_fd.reset();
  pipes.go.read.reset();

  const pid_t reaper_pid = ::fork();
  if (reaper_pid == 0)
    process::reaper(pipes.reaper.read.get(), pid, cgroup.dir() != nullptr ? &cgroup : nullptr);
  const int reaper_errno = errno;
  pipes.reaper.read.reset();
  child.emplace(pid, reaper_pid, std::move(pipes.reaper.write), subreaper);
  if (reaper_pid < 0) {
    std::string error = "cannot start the reaper for " + program + ": " + errno_text(reaper_errno);
    pipes.go.write.reset();  // EOF: the child exits without exec
    child->finish();
    return error;
  }
  if (const auto exec_error = let_exec(pipes)) {
    std::string error = "cannot start " + program + ": " + errno_text(*exec_error);
    child->finish();
    return error;
  }
  return {};
}

struct PipeReader {
  asio::posix::stream_descriptor pipe;
  Stream stream;
  std::array<char, 1 << 16> buffer{};
  LineSplitter splitter;
  bool open = true;
};

// A deadline past any clock's range would overflow steady_clock: such a timeout is no timeout.
std::optional<std::chrono::milliseconds> usable_timeout(
    std::optional<std::chrono::milliseconds> t) {
  if (t && *t > std::chrono::hours(24 * 365 * 100)) return std::nullopt;
  return t;
}

constexpr auto kExitPollInterval = std::chrono::milliseconds(2);  // only without pidfd_open
constexpr auto kDrainQuiet = std::chrono::milliseconds(100);  // after exit: pipes empty this long
constexpr auto kDrainLimit = std::chrono::seconds(1);  // after exit: writers outside the group

// One run's event loop, from the exec to the end of its output: reads stdout and stderr as bytes
// arrive and stamps each line, notices the exit through a pidfd, enforces the timeout and answers
// a stop (SIGTERM to the group, SIGKILL after the grace), and after the exit drains the pipes.
// Every handler runs inside run(), on this thread; the members are the state they share. The
// process stays unreaped (its group id reserved) until RunningChild::finish().
class RunWatcher {
 public:
  RunWatcher(pid_t pid, pid_t reaper_pid, const Subreaper& subreaper, UniqueFd stdout_read,
             UniqueFd stderr_read, int wake_fd, std::chrono::milliseconds kill_grace,
             const LineCallback& on_line, ProcessOutcome& outcome)
      : pid_(pid),
        reaper_pid_(reaper_pid),
        subreaper_(subreaper),
        kill_grace_(kill_grace),
        on_line_(on_line),
        outcome_(outcome),
        out_{asio::posix::stream_descriptor(io_, stdout_read.release()),
             Stream::Stdout,
             {},
             {},
             true},
        err_{asio::posix::stream_descriptor(io_, stderr_read.release()),
             Stream::Stderr,
             {},
             {},
             true},
        wake_(own_wake_descriptor(io_, wake_fd)) {}
  RunWatcher(const RunWatcher&) = delete;
  RunWatcher& operator=(const RunWatcher&) = delete;

  // Until the exit was noticed and both pipes are closed; sets outcome.timed_out or interrupted
  // where it stopped the group.
  void run(std::optional<std::chrono::milliseconds> timeout) {
    watch_exit();
    if (const auto usable = usable_timeout(timeout)) {
      deadline_.expires_after(*usable);
      deadline_.async_wait([this](const boost::system::error_code& error) {
        if (!error) stop_group(true);
      });
    }
    if (wake_.is_open()) watch_stop();
    if (g_interrupt.load()) stop_group(false);  // asked between the check before fork and now
    read_more(out_);
    read_more(err_);
    io_.run();
  }

  // When the exit was noticed: the run's end, and the stamp of what was read after it.
  std::int64_t exit_monotonic_ns() const { return exit_mono_; }
  std::int64_t exit_wall_ns() const { return exit_wall_; }

 private:
  // The loop's own copy of the wake pipe's read end, which it may close; none without the pipe.
  static asio::posix::stream_descriptor own_wake_descriptor(asio::io_context& io, int wake_fd) {
    asio::posix::stream_descriptor wake(io);
    if (const int own = wake_fd >= 0 ? ::fcntl(wake_fd, F_DUPFD_CLOEXEC, 3) : -1; own >= 0)
      wake.assign(own);
    return wake;
  }

  void read_more(PipeReader& reader) {
    reader.pipe.async_read_some(asio::buffer(reader.buffer),
                                [this, &reader](const boost::system::error_code& error,
                                                std::size_t n) { on_read(reader, error, n); });
  }

  void on_read(PipeReader& reader, const boost::system::error_code& error, std::size_t n) {
    // Every line completed by this chunk arrived now: stamp before doing anything else. A chunk
    // read after the exit was noticed was written before it: stamped at the exit.
    const auto mono = exited_ ? exit_mono_ : monotonic_now_ns();
    const auto wall = exited_ ? exit_wall_ : wall_now_ns();
    lines_.clear();
    started_.clear();
    arrivals_.clear();
    reader.splitter.feed(std::string_view(reader.buffer.data(), n), lines_, &started_, mono,
                         &arrivals_);
    for (std::size_t i = 0; i < lines_.size(); ++i)
      on_line_(StampedLine{mono, wall, reader.stream, std::move(lines_[i]), false, started_[i],
                           std::move(arrivals_[i])});
    if (error) {
      reader.open = false;
      const auto since = reader.splitter.pending_since();
      auto arrivals = reader.splitter.take_pending_arrivals();
      if (auto rest = reader.splitter.finish())
        on_line_(StampedLine{mono, wall, reader.stream, std::move(*rest), true, since,
                             std::move(arrivals)});
      boost::system::error_code ignored;
      reader.pipe.close(ignored);
      after_pipe_closed();
      return;
    }
    last_data_mono_ = monotonic_now_ns();
    read_more(reader);
  }

  void close_pipes() {
    boost::system::error_code ignored;
    out_.pipe.close(ignored);
    err_.pipe.close(ignored);
  }
  void after_pipe_closed() {
    if (!out_.open && !err_.open) {
      drain_quiet_.cancel();
      drain_limit_.cancel();
    }
  }

  // The timeout or a stop: SIGTERM to the group now, SIGKILL after the grace, once per run.
  void stop_group(bool timed_out) {
    if (exited_ || term_sent_) return;
    outcome_.timed_out = timed_out;
    outcome_.interrupted = !timed_out;
    ::kill(-pid_, SIGTERM);
    subreaper_.signal_escaped(SIGTERM, pid_,
                              reaper_pid_);  // those that left the group: the same grace
    term_sent_ = true;
    grace_.expires_after(kill_grace_);
    grace_.async_wait([this](const boost::system::error_code& error) {
      if (!error && !exited_) ::kill(-pid_, SIGKILL);
    });
  }

  // After the exit: the quiet timer closes the pipes once nothing came for kDrainQuiet (what was
  // in them is read by then), the limit closes them whatever writers outside the group do.
  void wait_quiet() {
    drain_quiet_.expires_after(kDrainQuiet);
    drain_quiet_.async_wait([this](const boost::system::error_code& error) {
      if (error || (!out_.open && !err_.open)) return;
      if (monotonic_now_ns() - last_data_mono_ < std::chrono::nanoseconds(kDrainQuiet).count()) {
        wait_quiet();
        return;
      }
      close_pipes();
    });
  }

  void on_exit() {
    if (exited_) return;
    exited_ = true;
    exit_mono_ = monotonic_now_ns();
    exit_wall_ = wall_now_ns();
    // Children that outlive it (a background `sleep`, ranks left behind) go now; killed, they
    // close their ends of the pipes, which ends the reads once drained. So do those that left
    // the group and were reparented to us by now (the rest go in RunningChild::finish()).
    ::kill(-pid_, SIGKILL);
    subreaper_.signal_escaped(SIGKILL, pid_, reaper_pid_);
    deadline_.cancel();
    grace_.cancel();
    exit_poll_.cancel();
    boost::system::error_code ignored;
    wake_.cancel(ignored);
    if (!out_.open && !err_.open) return;
    last_data_mono_ = exit_mono_;
    wait_quiet();
    drain_limit_.expires_after(kDrainLimit);
    drain_limit_.async_wait([this](const boost::system::error_code& error) {
      if (!error) close_pipes();
    });
  }

  // The exit, noticed when it happens: a pidfd becomes readable when the process ends.
  void watch_exit() {
#ifdef SYS_pidfd_open
    const int raw_pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
    if (raw_pidfd >= 0) {
      ::fcntl(raw_pidfd, F_SETFD, FD_CLOEXEC);
      pidfd_.assign(raw_pidfd);
    }
#endif
    if (pidfd_.is_open()) {
      pidfd_.async_wait(asio::posix::stream_descriptor::wait_read,
                        [this](const boost::system::error_code&) { on_exit(); });
    } else {
      poll_exit();
    }
  }

  // No pidfd_open (Linux before 5.3): poll without reaping, so the group id stays reserved.
  void poll_exit() {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid_) {
      on_exit();
      return;
    }
    exit_poll_.expires_after(kExitPollInterval);
    exit_poll_.async_wait([this](const boost::system::error_code& error) {
      if (!error) poll_exit();
    });
  }

  // A stop asked during the run (a byte on the wake pipe) stops the group at once.
  void watch_stop() {
    wake_.async_wait(asio::posix::stream_descriptor::wait_read,
                     [this](const boost::system::error_code& error) {
                       if (error || exited_) return;
                       drain(wake_.native_handle());
                       if (g_interrupt.load()) stop_group(false);
                       if (!term_sent_) watch_stop();
                     });
  }

  const pid_t pid_, reaper_pid_;
  const Subreaper& subreaper_;
  const std::chrono::milliseconds kill_grace_;
  const LineCallback& on_line_;
  ProcessOutcome& outcome_;
  // Declared in the order the descriptors are opened, so that they close in reverse.
  asio::io_context io_;
  PipeReader out_, err_;
  asio::posix::stream_descriptor wake_;
  bool exited_ = false;
  std::int64_t exit_mono_ = 0, exit_wall_ = 0;
  std::int64_t last_data_mono_ = 0;
  bool term_sent_ = false;
  asio::steady_timer deadline_{io_}, grace_{io_}, exit_poll_{io_}, drain_quiet_{io_},
      drain_limit_{io_};
  std::vector<std::string> lines_;
  std::vector<std::int64_t> started_;               // when each line's first byte arrived
  std::vector<std::vector<ByteArrival>> arrivals_;  // and each of its later chunks
  asio::posix::stream_descriptor pidfd_{io_};
};

}  // namespace

void request_stop(int signal) noexcept {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signal);
  g_interrupt.store(true);
  const int fd = g_wake_write_fd.load();
  if (fd >= 0) {
    const int saved_errno = errno;
    const char byte = 1;
    (void)!::write(fd, &byte, 1);
    errno = saved_errno;
  }
}
void request_interrupt() noexcept { request_stop(0); }
bool interrupt_requested() noexcept { return g_interrupt.load(); }
int stop_signal() noexcept { return g_stop_signal.load(); }
void clear_interrupt() noexcept {
  g_interrupt.store(false);
  g_stop_signal.store(0);
}

StopSignalHandlers::StopSignalHandlers() {
  wake_read_fd();  // the wake pipe exists before any handler may write to it
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  ::sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // database and terminal writes go on; execute() is woken by pipe
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    ::sigaction(kSignals[i], &action, &previous_[i]);
}

StopSignalHandlers::~StopSignalHandlers() {
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    ::sigaction(kSignals[i], &previous_[i], nullptr);
}

ProcessOutcome ProcessExecutor::execute(const LaunchSpec& spec, const LineCallback& on_line) {
  ProcessOutcome outcome;
  outcome.start_monotonic_ns = monotonic_now_ns();
  outcome.start_wall_ns = wall_now_ns();
  const auto finish_now = [&] {
    outcome.end_monotonic_ns = monotonic_now_ns();
    outcome.end_wall_ns = wall_now_ns();
    return outcome;
  };

  const std::filesystem::path program = find_program(spec.argv, outcome.launch_error);
  if (program.empty()) return finish_now();
  const ExecImage image(program, spec);

  const int wake_fd = wake_read_fd();
  if (wake_fd >= 0) drain(wake_fd);  // bytes of stops asked before: the flag below tells
  if (g_interrupt.load()) {
    outcome.interrupted = true;  // a stop was asked: start nothing more
    return finish_now();
  }

  // The locals below are destroyed in reverse: the loop, the child (killed and reaped, where a
  // line callback threw), the subreaper, the descriptors.
  RunPipes pipes = open_run_pipes(spec.stdout_pty);
  if (!pipes.all_open()) {
    outcome.launch_error = "cannot start " + image.program + ": " + errno_text(errno);
    return finish_now();
  }
  const ChildSetup setup = child_setup(image, pipes);
  const Subreaper subreaper;  // before the fork: every descendant of the run is ours to find
  process::RunCgroup cgroup;  // where the machine allows: a setsid descendant cannot leave it
  const pid_t pid = ::fork();
  if (pid < 0) {
    outcome.launch_error = "cannot start " + image.program + ": " + errno_text(errno);
    return finish_now();
  }
  if (pid == 0) process::exec_child(setup);
  outcome.start_monotonic_ns = monotonic_now_ns();
  outcome.start_wall_ns = wall_now_ns();
  std::optional<RunningChild> child;
  outcome.launch_error = release_child(pid, image.program, pipes, subreaper, cgroup, child);
  if (!outcome.launch_error.empty()) return finish_now();
  outcome.launched = true;

  RunWatcher watcher(pid, child->reaper_pid(), subreaper, std::move(pipes.out.read),
                     std::move(pipes.err.read), wake_fd, kill_grace_, on_line, outcome);
  watcher.run(spec.timeout);

  const int status = child->finish();
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.end_monotonic_ns = watcher.exit_monotonic_ns();
  outcome.end_wall_ns = watcher.exit_wall_ns();
  return outcome;
}

std::filesystem::path find_on_path(const std::string& name) { return search_path(name); }

}  // namespace scalebench::orchestrator
