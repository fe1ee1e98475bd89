#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
// Boost 1.74's asio uses std::exchange without including <utility>: keep this order.
// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on

#include "orchestrator/executor.hpp"

extern char** environ;  // NOLINT: POSIX

namespace scalebench::orchestrator {
namespace {

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

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// A descriptor number of 3 or more: the child dup2s its pipes onto 0, 1 and 2, which must not
// already be one of them (where the orchestrator itself runs with a standard stream closed).
int above_standard(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

struct Pipe {
  UniqueFd read, write;
};
Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  return Pipe{UniqueFd(above_standard(fds[0])), UniqueFd(above_standard(fds[1]))};
}

// A pseudo-terminal in the pipe's place: read = the master, write = the terminal the child
// writes to. Raw mode, so that the terminal passes bytes through (no "\n" -> "\r\n").
Pipe make_pty() {
  UniqueFd master(above_standard(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)));
  if (master.get() < 0 || ::grantpt(master.get()) != 0 || ::unlockpt(master.get()) != 0) return {};
  std::array<char, 128> name{};
  if (::ptsname_r(master.get(), name.data(), name.size()) != 0) return {};
  UniqueFd terminal(above_standard(::open(name.data(), O_RDWR | O_NOCTTY | O_CLOEXEC)));
  if (terminal.get() < 0) return {};
  struct termios mode {};
  if (::tcgetattr(terminal.get(), &mode) == 0) {
    ::cfmakeraw(&mode);
    ::tcsetattr(terminal.get(), TCSANOW, &mode);
  }
  return Pipe{std::move(master), std::move(terminal)};
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

// Everything the child needs, prepared before fork: after fork only async-signal-safe calls.
struct ChildSetup {
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  pid_t parent = 0;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  int exec_status_fd = -1;  // close-on-exec: EOF means exec succeeded, else it carries errno
  // The child execs only after a byte here: the orchestrator sends it once the reaper runs, so
  // that nothing the program starts can outlive an orchestrator killed between the two forks.
  int go_read_fd = -1, go_write_fd = -1;
};

[[noreturn]] void exec_child(const ChildSetup& setup) {
  ::setpgid(0, 0);  // a group of its own: mpirun and every rank it starts are stopped together
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != setup.parent) ::_exit(127);  // the orchestrator died before prctl
  ::close(setup.go_write_fd);  // so that the orchestrator's death reads as EOF below
  char go = 0;
  ssize_t got = 0;
  do got = ::read(setup.go_read_fd, &go, 1);
  while (got < 0 && errno == EINTR);
  if (got != 1) ::_exit(127);  // the orchestrator died, or gave up, before the reaper ran
  // Handlers are reset by exec, but ignored signals stay ignored and the mask is inherited.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigemptyset(&default_action.sa_mask);
  for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &default_action, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(setup.stdin_fd, 0) < 0 || ::dup2(setup.stdout_fd, 1) < 0 ||
      ::dup2(setup.stderr_fd, 2) < 0) {
    const int error = errno;
    (void)!::write(setup.exec_status_fd, &error, sizeof error);
    ::_exit(127);
  }
  ::execve(setup.program, setup.argv, setup.envp);
  const int error = errno;
  (void)!::write(setup.exec_status_fd, &error, sizeof error);
  ::_exit(127);
}

// The per-run reaper: out of the run's process group and the orchestrator's, deaf to the stop
// signals, it blocks on a pipe whose only write end the orchestrator holds. EOF (the orchestrator
// closed it at the end of the run, or died) kills the run's whole group.
[[noreturn]] void reaper(int read_fd, pid_t group) {
  ::setpgid(0, 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1,
                     SIGUSR2, SIGALRM})
    ::sigaction(signal, &ignore, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Hold nothing of the orchestrator's: its stdout, the trainer's pipes, the wake pipe.
  if (::dup2(read_fd, 0) < 0) ::_exit(1);
  if (::close_range(1, ~0U, 0) != 0)
    for (int fd = 1; fd < 65536; ++fd) ::close(fd);
  char byte = 0;
  for (;;) {
    const ssize_t n = ::read(0, &byte, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  ::kill(-group, SIGKILL);
  ::_exit(0);
}

pid_t wait_for(pid_t pid, int* status) {
  for (;;) {
    const pid_t got = ::waitpid(pid, status, 0);
    if (got >= 0 || errno != EINTR) return got;
  }
}

// The processes whose parent is `parent`, from /proc/<pid>/stat (the per-task "children" files
// need CONFIG_PROC_CHILDREN, which not every kernel has).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  std::array<char, 512> buffer{};
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::array<char, 64> path{};
    std::snprintf(path.data(), path.size(), "/proc/%ld/stat", pid);
    const int fd = ::open(path.data(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const ssize_t got = ::read(fd, buffer.data(), buffer.size() - 1);
    ::close(fd);
    if (got <= 0) continue;
    const std::string_view stat(buffer.data(), static_cast<std::size_t>(got));
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so from the last ')'.
    const auto paren = stat.rfind(')');
    if (paren == std::string_view::npos || paren + 4 >= stat.size()) continue;
    const std::string rest(stat.substr(paren + 4));  // past ") S "
    if (std::strtol(rest.c_str(), nullptr, 10) == parent) found.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return found;
}

// Makes the orchestrator a child subreaper for one run: a descendant of the run that leaves the
// process group (setsid, setpgid) and whose parent dies is reparented to us instead of init, so
// that it can still be found and killed when the run ends. Children the orchestrator had before
// the run are not the run's and are left alone; the previous setting comes back at the end.
class Subreaper {
 public:
  Subreaper() {
    int previous = 0;
    if (::prctl(PR_GET_CHILD_SUBREAPER, &previous, 0, 0, 0) == 0) previous_ = previous;
    active_ = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
    if (active_)
      for (const pid_t pid : children_of(::getpid())) before_.insert(pid);
  }
  ~Subreaper() {
    if (active_ && previous_ == 0) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  }
  Subreaper(const Subreaper&) = delete;
  Subreaper& operator=(const Subreaper&) = delete;

  // Sends `signal` to the run's descendants that were reparented to us (and to their groups,
  // when they lead one), except the run's own process and its reaper. Returns those it found.
  std::vector<pid_t> signal_escaped(int signal, pid_t process = 0, pid_t reaper = 0) const {
    std::vector<pid_t> escaped;
    if (!active_) return escaped;
    for (const pid_t pid : children_of(::getpid())) {
      if (pid == process || pid == reaper || before_.contains(pid)) continue;
      if (::getpgid(pid) == pid) ::kill(-pid, signal);
      ::kill(pid, signal);
      escaped.push_back(pid);
    }
    return escaped;
  }

  // Kills and reaps every descendant of the run reparented to us, round after round: reaping one
  // reparents its own children to us, which the next round finds. Called once the run's process
  // and the reaper are reaped, so that only escaped descendants are left among our children.
  void kill_escaped() const {
    for (int round = 0; round < 10000; ++round) {
      const auto escaped = signal_escaped(SIGKILL);
      if (escaped.empty()) return;
      for (const pid_t pid : escaped) {
        int status = 0;
        wait_for(pid, &status);
      }
    }
  }

 private:
  bool active_ = false;
  int previous_ = 0;
  std::set<pid_t> before_;
};

// The launched process, its group and its reaper; the destructor kills and reaps both, also
// when a line callback throws.
class RunningChild {
 public:
  RunningChild(pid_t pid, pid_t reaper, UniqueFd reaper_pipe, const Subreaper& subreaper)
      : pid_(pid), reaper_(reaper), reaper_pipe_(std::move(reaper_pipe)), subreaper_(subreaper) {}
  RunningChild(const RunningChild&) = delete;
  RunningChild& operator=(const RunningChild&) = delete;
  ~RunningChild() {
    if (pid_ > 0) finish();
  }
  pid_t pid() const { return pid_; }

  // Kills what is left of the group (the zombie leader keeps its id reserved until reaped), lets
  // the reaper go and reaps it, then reaps the process, then kills and reaps the descendants that
  // left the group (reparented to us): the process's wait status.
  int finish() {
    ::kill(-pid_, SIGKILL);
    reaper_pipe_.reset();
    int status = 0;
    if (reaper_ > 0) wait_for(reaper_, &status);
    status = 0;
    wait_for(pid_, &status);
    pid_ = -1;
    subreaper_.kill_escaped();
    return status;
  }

 private:
  pid_t pid_;
  pid_t reaper_;
  UniqueFd reaper_pipe_;
  const Subreaper& subreaper_;
};

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

  if (spec.argv.empty()) {
    outcome.launch_error = "empty command line";
    return finish_now();
  }
  std::filesystem::path program = spec.argv[0];
  if (program.filename() == program) program = search_path(spec.argv[0]);
  if (program.empty() || !std::filesystem::exists(program)) {
    outcome.launch_error = "program not found: " + spec.argv[0];
    return finish_now();
  }

  // This run's environment: a copy of the orchestrator's with the spec's entries, never setenv.
  std::vector<std::string> environment;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const auto key = text.substr(0, text.find('='));
    if (!spec.env.count(std::string(key))) environment.emplace_back(text);
  }
  for (const auto& [key, value] : spec.env) environment.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> args(spec.argv);
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string program_text = program.string();

  const int wake_fd = wake_read_fd();
  if (wake_fd >= 0) drain(wake_fd);  // bytes of stops asked before: the flag below tells
  if (g_interrupt.load()) {
    outcome.interrupted = true;  // a stop was asked: start nothing more
    return finish_now();
  }

  Pipe out_pipe = spec.stdout_pty ? make_pty() : make_pipe(), err_pipe = make_pipe(),
       status_pipe = make_pipe(), reaper_pipe = make_pipe(), go_pipe = make_pipe();
  UniqueFd null_fd(above_standard(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
  if (out_pipe.read.get() < 0 || err_pipe.read.get() < 0 || status_pipe.read.get() < 0 ||
      reaper_pipe.read.get() < 0 || go_pipe.read.get() < 0 || null_fd.get() < 0) {
    outcome.launch_error = "cannot start " + program_text + ": " + errno_text(errno);
    return finish_now();
  }
  const ChildSetup setup{
      program_text.c_str(), argv.data(),          envp.data(),          ::getpid(),
      null_fd.get(),        out_pipe.write.get(), err_pipe.write.get(), status_pipe.write.get(),
      go_pipe.read.get(),   go_pipe.write.get()};

  const Subreaper subreaper;  // before the fork: every descendant of the run is ours to find
  const pid_t pid = ::fork();
  if (pid < 0) {
    outcome.launch_error = "cannot start " + program_text + ": " + errno_text(errno);
    return finish_now();
  }
  if (pid == 0) exec_child(setup);
  outcome.start_monotonic_ns = monotonic_now_ns();
  outcome.start_wall_ns = wall_now_ns();
  ::setpgid(pid, pid);  // also here, so that the group exists before any kill(-pid)
  out_pipe.write.reset();
  err_pipe.write.reset();
  status_pipe.write.reset();
  null_fd.reset();
  go_pipe.read.reset();

  const pid_t reaper_pid = ::fork();
  if (reaper_pid == 0) reaper(reaper_pipe.read.get(), pid);
  const int reaper_errno = errno;
  reaper_pipe.read.reset();
  RunningChild child(pid, reaper_pid, std::move(reaper_pipe.write), subreaper);
  if (reaper_pid < 0) {
    outcome.launch_error =
        "cannot start the reaper for " + program_text + ": " + errno_text(reaper_errno);
    go_pipe.write.reset();  // EOF: the child exits without exec
    child.finish();
    return finish_now();
  }
  // The reaper holds the group now: let the child exec.
  const char go = 1;
  ssize_t sent = 0;
  do sent = ::write(go_pipe.write.get(), &go, 1);
  while (sent < 0 && errno == EINTR);
  go_pipe.write.reset();

  int exec_error = 0;
  ssize_t got = 0;
  do got = ::read(status_pipe.read.get(), &exec_error, sizeof exec_error);
  while (got < 0 && errno == EINTR);
  if (got > 0) {
    outcome.launch_error = "cannot start " + program_text + ": " + errno_text(exec_error);
    child.finish();
    return finish_now();
  }
  status_pipe.read.reset();
  outcome.launched = true;

  asio::io_context io;
  PipeReader out{
      asio::posix::stream_descriptor(io, out_pipe.read.release()), Stream::Stdout, {}, {}, true};
  PipeReader err{
      asio::posix::stream_descriptor(io, err_pipe.read.release()), Stream::Stderr, {}, {}, true};
  asio::posix::stream_descriptor wake(io);
  if (const int own = wake_fd >= 0 ? ::fcntl(wake_fd, F_DUPFD_CLOEXEC, 3) : -1; own >= 0)
    wake.assign(own);

  bool exited = false;
  std::int64_t exit_mono = 0, exit_wall = 0;
  std::int64_t last_data_mono = 0;
  bool term_sent = false;
  asio::steady_timer deadline(io), grace(io), exit_poll(io), drain_quiet(io), drain_limit(io);

  const auto close_pipes = [&] {
    boost::system::error_code ignored;
    out.pipe.close(ignored);
    err.pipe.close(ignored);
  };
  const auto after_pipe_closed = [&] {
    if (!out.open && !err.open) {
      drain_quiet.cancel();
      drain_limit.cancel();
    }
  };

  std::vector<std::string> lines;
  std::vector<std::int64_t> started;  // when each line's first byte arrived
  std::function<void(PipeReader&)> read_more = [&](PipeReader& reader) {
    reader.pipe.async_read_some(
        asio::buffer(reader.buffer), [&](const boost::system::error_code& error, std::size_t n) {
          // Every line completed by this chunk arrived now: stamp before doing anything else. A
          // chunk read after the exit was noticed was written before it: stamped at the exit.
          const auto mono = exited ? exit_mono : monotonic_now_ns();
          const auto wall = exited ? exit_wall : wall_now_ns();
          lines.clear();
          started.clear();
          reader.splitter.feed(std::string_view(reader.buffer.data(), n), lines, &started, mono);
          for (std::size_t i = 0; i < lines.size(); ++i)
            on_line(StampedLine{mono, wall, reader.stream, std::move(lines[i]), false, started[i]});
          if (error) {
            reader.open = false;
            const auto since = reader.splitter.pending_since();
            if (auto rest = reader.splitter.finish())
              on_line(StampedLine{mono, wall, reader.stream, std::move(*rest), true, since});
            boost::system::error_code ignored;
            reader.pipe.close(ignored);
            after_pipe_closed();
            return;
          }
          last_data_mono = monotonic_now_ns();
          read_more(reader);
        });
  };

  const auto stop_group = [&](bool timed_out) {
    if (exited || term_sent) return;
    outcome.timed_out = timed_out;
    outcome.interrupted = !timed_out;
    ::kill(-pid, SIGTERM);
    subreaper.signal_escaped(SIGTERM, pid,
                             reaper_pid);  // those that left the group: the same grace
    term_sent = true;
    grace.expires_after(kill_grace_);
    grace.async_wait([&](const boost::system::error_code& error) {
      if (!error && !exited) ::kill(-pid, SIGKILL);
    });
  };

  // After the exit: the quiet timer closes the pipes once nothing came for kDrainQuiet (what was
  // in them is read by then), the limit closes them whatever writers outside the group do.
  std::function<void()> wait_quiet = [&] {
    drain_quiet.expires_after(kDrainQuiet);
    drain_quiet.async_wait([&](const boost::system::error_code& error) {
      if (error || (!out.open && !err.open)) return;
      if (monotonic_now_ns() - last_data_mono < std::chrono::nanoseconds(kDrainQuiet).count()) {
        wait_quiet();
        return;
      }
      close_pipes();
    });
  };

  const auto on_exit = [&] {
    if (exited) return;
    exited = true;
    exit_mono = monotonic_now_ns();
    exit_wall = wall_now_ns();
    // Children that outlive it (a background `sleep`, ranks left behind) go now; killed, they
    // close their ends of the pipes, which ends the reads below once drained. So do those that
    // left the group and were reparented to us by now (the rest go in child.finish()).
    ::kill(-pid, SIGKILL);
    subreaper.signal_escaped(SIGKILL, pid, reaper_pid);
    deadline.cancel();
    grace.cancel();
    exit_poll.cancel();
    boost::system::error_code ignored;
    wake.cancel(ignored);
    if (!out.open && !err.open) return;
    last_data_mono = exit_mono;
    wait_quiet();
    drain_limit.expires_after(kDrainLimit);
    drain_limit.async_wait([&](const boost::system::error_code& error) {
      if (!error) close_pipes();
    });
  };

  // The exit, noticed when it happens: a pidfd becomes readable when the process ends.
  asio::posix::stream_descriptor pidfd(io);
  std::function<void()> poll_exit;
#ifdef SYS_pidfd_open
  const int raw_pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (raw_pidfd >= 0) {
    ::fcntl(raw_pidfd, F_SETFD, FD_CLOEXEC);
    pidfd.assign(raw_pidfd);
  }
#endif
  if (pidfd.is_open()) {
    pidfd.async_wait(asio::posix::stream_descriptor::wait_read,
                     [&](const boost::system::error_code&) { on_exit(); });
  } else {
    // No pidfd_open (Linux before 5.3): poll without reaping, so the group id stays reserved.
    poll_exit = [&] {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        on_exit();
        return;
      }
      exit_poll.expires_after(kExitPollInterval);
      exit_poll.async_wait([&](const boost::system::error_code& error) {
        if (!error) poll_exit();
      });
    };
    poll_exit();
  }

  if (const auto timeout = usable_timeout(spec.timeout)) {
    deadline.expires_after(*timeout);
    deadline.async_wait([&](const boost::system::error_code& error) {
      if (!error) stop_group(true);
    });
  }
  std::function<void()> watch_stop = [&] {
    wake.async_wait(asio::posix::stream_descriptor::wait_read,
                    [&](const boost::system::error_code& error) {
                      if (error || exited) return;
                      drain(wake.native_handle());
                      if (g_interrupt.load()) stop_group(false);
                      if (!term_sent) watch_stop();
                    });
  };
  if (wake.is_open()) watch_stop();
  if (g_interrupt.load()) stop_group(false);  // asked between the check above and now

  read_more(out);
  read_more(err);
  io.run();

  const int status = child.finish();
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.end_monotonic_ns = exit_mono;
  outcome.end_wall_ns = exit_wall;
  return outcome;
}

}  // namespace scalebench::orchestrator
