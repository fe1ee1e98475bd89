// The process ProcessExecutor launches, from fork to reap: the descriptors it gets in place of
// its standard streams, the code that runs in it between fork and exec, its reaper, and the kill
// and reap of its process group and of the descendants that left the group (a child subreaper).
// Nothing here knows of Asio, lines or timeouts: process_executor.cpp watches the run.
// Private to the orchestrator: the public interface is orchestrator/executor.hpp.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace scalebench::orchestrator::process {

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
int above_standard(int fd);

struct Pipe {
  UniqueFd read, write;
};
// Close-on-exec, both ends above the standard streams; both ends -1 where it fails (errno set).
Pipe make_pipe();
// A pseudo-terminal in the pipe's place: read = the master, write = the terminal the child
// writes to. Raw mode, so that the terminal passes bytes through (no "\n" -> "\r\n").
Pipe make_pty();

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

// The child's side of fork: its own process group, death with the orchestrator, the go byte,
// default signal dispositions and an empty mask, its standard streams, execve.
[[noreturn]] void exec_child(const ChildSetup& setup);

// A cgroup (v2) of its own for one run, where this machine lets us make one under ours: every
// descendant of the run stays in it whatever it does (setsid, double fork), so that the reaper
// can kill them all when the orchestrator dies, even by kill -9 (docs/launchers.md). Inactive
// (path() empty) without a writable cgroup2 hierarchy: then the process group and the subreaper
// are all there is. The destructor kills what is left in it and removes it; making one first
// removes those of orchestrators that are gone.
class RunCgroup {
 public:
  RunCgroup();
  ~RunCgroup();
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  const std::string& path() const { return path_; }
  // Moves `pid` (the run's process, before it execs) into the cgroup; false (and the cgroup given
  // up) where the kernel refuses.
  bool add(pid_t pid);
  // What the reaper needs, prepared before its fork: the directory, its cgroup.kill and
  // cgroup.procs (nullptr when inactive).
  const char* dir() const { return path_.empty() ? nullptr : path_.c_str(); }
  const char* kill_file() const { return path_.empty() ? nullptr : kill_.c_str(); }
  const char* procs_file() const { return path_.empty() ? nullptr : procs_.c_str(); }

 private:
  std::string path_, kill_, procs_;
};

// Kills every process in the cgroup `dir` (cgroup.kill, else each pid of cgroup.procs until none
// is left) and removes it once empty. Async-signal-safe: the reaper calls it after fork.
void kill_cgroup(const char* dir, const char* kill_file, const char* procs_file);

// The per-run reaper's side of fork: out of the run's process group and the orchestrator's, deaf
// to the stop signals, it blocks on a pipe whose only write end the orchestrator holds. EOF (the
// orchestrator closed it at the end of the run, or died) kills the run's whole group, and its
// cgroup where it has one (`cgroup` from RunCgroup; nullptr without).
[[noreturn]] void reaper(int read_fd, pid_t group, const RunCgroup* cgroup = nullptr);

// Makes the orchestrator a child subreaper for one run: a descendant of the run that leaves the
// process group (setsid, setpgid) and whose parent dies is reparented to us instead of init, so
// that it can still be found and killed when the run ends. Children the orchestrator had before
// the run are not the run's and are left alone; the previous setting comes back at the end.
class Subreaper {
 public:
  Subreaper();
  ~Subreaper();
  Subreaper(const Subreaper&) = delete;
  Subreaper& operator=(const Subreaper&) = delete;

  // Sends `signal` to the run's descendants that were reparented to us (and to their groups,
  // when they lead one), except the run's own process and its reaper. Returns those it found.
  std::vector<pid_t> signal_escaped(int signal, pid_t process = 0, pid_t reaper = 0) const;

  // Kills and reaps every descendant of the run reparented to us, round after round: reaping one
  // reparents its own children to us, which the next round finds. Called once the run's process
  // and the reaper are reaped, so that only escaped descendants are left among our children.
  void kill_escaped() const;

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
  pid_t reaper_pid() const { return reaper_; }

  // Kills what is left of the group (the zombie leader keeps its id reserved until reaped), lets
  // the reaper go and reaps it, then reaps the process, then kills and reaps the descendants that
  // left the group (reparented to us): the process's wait status.
  int finish();

 private:
  pid_t pid_;
  pid_t reaper_;
  UniqueFd reaper_pipe_;
  const Subreaper& subreaper_;
};

}  // namespace scalebench::orchestrator::process
