// scalebench-tag (orchestrator/tag_wrapper.hpp): the poll loop, the pty, the signals.
#include "orchestrator/tag_wrapper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/tag_output.hpp"

namespace scalebench::orchestrator {
namespace {

volatile sig_atomic_t g_child = 0;
int g_wake_fd = -1;  // SIGCHLD writes a byte here: the poll loop learns that the worker exited

void forward_signal(int signal) {
  if (g_child > 0) ::kill(g_child, signal);
}

void wake(int) {
  const int saved = errno;
  const char byte = 0;
  [[maybe_unused]] const auto ignored = ::write(g_wake_fd, &byte, 1);
  errno = saved;
}

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "scalebench-tag: %s\n", message.c_str());
  std::exit(127);
}

// All of `data`, also to a non-blocking descriptor (waits for room rather than dropping it).
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd room{fd, POLLOUT, 0};
      ::poll(&room, 1, -1);
      continue;
    }
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

int rank_from_environment() {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* value = std::getenv(name); value && *value) {
      char* end = nullptr;
      const long rank = std::strtol(value, &end, 10);
      if (*end == '\0' && rank >= 0 && rank < 1'000'000) return static_cast<int>(rank);
    }
  return 0;
}

struct Options {
  int rank = -1;
  std::string python;
  std::vector<std::string> argv;
};

Options parse(int argc, char** argv) {
  Options options;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if ((arg == "--rank" || arg == "--python") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--python") {
        options.python = value;
      } else {
        char* end = nullptr;
        const long rank = std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || rank < 0 || rank >= 1'000'000)
          fail("--rank: expected a whole number from 0, got \"" + value + "\"");
        options.rank = static_cast<int>(rank);
      }
    } else if (arg.starts_with("--")) {
      fail("usage: scalebench-tag [--rank N] [--python INTERPRETER] [--] PROGRAM ARGS...");
    } else {
      break;  // the program: torchrun passes its arguments on without the "--"
    }
  }
  if (!options.python.empty()) options.argv = {options.python, "-u"};
  for (; i < argc; ++i) options.argv.emplace_back(argv[i]);
  if (options.argv.empty() || (!options.python.empty() && options.argv.size() == 2))
    fail("no program to run (usage: scalebench-tag [--rank N] [--python I] -- PROGRAM ARGS...)");
  if (options.rank < 0) options.rank = rank_from_environment();
  return options;
}

// A pseudo-terminal in raw mode (bytes pass through unchanged): the worker's end and ours.
bool open_pty(int& ours, int& theirs) {
  ours = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  const char* name =
      ours >= 0 && ::grantpt(ours) == 0 && ::unlockpt(ours) == 0 ? ::ptsname(ours) : nullptr;
  theirs = name ? ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
  if (theirs < 0) {
    if (ours >= 0) ::close(ours);
    ours = -1;
    return false;
  }
  termios mode{};
  if (::tcgetattr(theirs, &mode) == 0) {
    ::cfmakeraw(&mode);
    ::tcsetattr(theirs, TCSANOW, &mode);
  }
  return true;
}

// The worker, in a process group of its own (a signal to the launcher's group reaches it once,
// through us) that dies with us (PR_SET_PDEATHSIG: a launcher that SIGKILLs the worker's pid kills
// us, and so it), with default dispositions and mask, its stdout and stderr our pipes' ends.
[[noreturn]] void exec_worker(const Options& options, pid_t parent, int out, int err) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);  // we died before the line above
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(signal, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  write_all(err, std::string("scalebench-tag: cannot run ") + argv[0] + ": " +
                     std::strerror(errno) + "\n");
  ::_exit(127);
}

}  // namespace

int run_tag_wrapper(int argc, char** argv) {
  const Options options = parse(argc, argv);
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  int wake_pipe[2] = {-1, -1};
  if (::isatty(STDOUT_FILENO) != 1 || !open_pty(out_pipe[0], out_pipe[1]))
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) fail(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0 || ::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    fail(std::string("pipe: ") + std::strerror(errno));
  g_wake_fd = wake_pipe[1];

  // The signals we pass on, and SIGCHLD, are held until the worker's pid is known: none is lost
  // between fork and g_child.
  sigset_t held;
  ::sigemptyset(&held);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::sigaddset(&held, signal);
  ::sigprocmask(SIG_BLOCK, &held, nullptr);
  struct sigaction forward {};
  forward.sa_handler = forward_signal;
  ::sigemptyset(&forward.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(signal, &forward, nullptr);
  struct sigaction child_ended {};
  child_ended.sa_handler = wake;
  ::sigemptyset(&child_ended.sa_mask);
  ::sigaction(SIGCHLD, &child_ended, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) fail(std::string("fork: ") + std::strerror(errno));
  if (child == 0) exec_worker(options, parent, out_pipe[1], err_pipe[1]);
  g_child = child;
  ::sigprocmask(SIG_UNBLOCK, &held, nullptr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  // Read until both pipes close. Once the worker has exited, a descendant of it may still hold
  // them: what arrives is passed on until nothing has come for kDrainQuietMs, at most kDrainMs.
  constexpr int kDrainQuietMs = 100;
  constexpr auto kDrainMs = std::chrono::milliseconds(2000);
  pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
  const Stream streams[2] = {Stream::Stdout, Stream::Stderr};
  int open = 2;
  std::vector<char> buffer(65536);
  bool output_ok = true;
  std::optional<int> status;
  std::chrono::steady_clock::time_point exited_at;
  while (open > 0) {
    if (status && std::chrono::steady_clock::now() - exited_at > kDrainMs) break;
    const int ready = ::poll(fds, 3, status ? kDrainQuietMs : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || (ready == 0 && status)) break;
    if (fds[2].revents != 0) {
      while (::read(wake_pipe[0], buffer.data(), buffer.size()) > 0) {
      }
      int wait_status = 0;
      if (!status && ::waitpid(child, &wait_status, WNOHANG) == child) {
        status = wait_status;
        exited_at = std::chrono::steady_clock::now();
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {  // EOF, or EIO from a pseudo-terminal whose other end closed
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      if (!output_ok) continue;  // our reader is gone: keep draining so the worker never blocks
      for (const auto& piece : scalebench::orchestrator::tagged_writes(
               options.rank, streams[i], std::string_view(buffer.data(), n)))
        if (!write_all(STDOUT_FILENO, piece)) output_ok = false;
    }
  }
  if (!status) {
    int wait_status = 0;
    while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
    }
    status = wait_status;
  }
  if (WIFSIGNALED(*status)) {
    ::signal(WTERMSIG(*status), SIG_DFL);
    ::kill(::getpid(), WTERMSIG(*status));
    return 128 + WTERMSIG(*status);
  }
  return WIFEXITED(*status) ? WEXITSTATUS(*status) : 1;
}

}  // namespace scalebench::orchestrator
