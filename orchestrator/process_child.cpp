#include "orchestrator/process_child.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace scalebench::orchestrator::process {
namespace {

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

}  // namespace

int above_standard(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  return Pipe{UniqueFd(above_standard(fds[0])), UniqueFd(above_standard(fds[1]))};
}

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

namespace {

// The cgroup2 directory this process is in ("0::/path" of /proc/self/cgroup under the cgroup2
// mount of /proc/self/mounts), or empty.
std::string own_cgroup2_dir() {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, mount_point, type, rest;
  std::string root;
  while (mounts >> device >> mount_point >> type && std::getline(mounts, rest))
    if (type == "cgroup2") {
      root = mount_point;
      break;
    }
  if (root.empty()) return "";
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line))
    if (line.rfind("0::", 0) == 0) return root + (line.size() > 3 ? line.substr(3) : "");
  return "";
}

bool write_text(const char* file, const char* text, std::size_t size) {
  const int fd = ::open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t written = 0;
  do written = ::write(fd, text, size);
  while (written < 0 && errno == EINTR);
  ::close(fd);
  return written == static_cast<ssize_t>(size);
}

void sleep_ms(long milliseconds) {
  struct timespec pause {
    0, milliseconds * 1'000'000
  };
  while (::nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
}

}  // namespace

void kill_cgroup(const char* dir, const char* kill_file, const char* procs_file) {
  if (dir == nullptr) return;
  const bool killed = write_text(kill_file, "1", 1);  // Linux 5.14+
  for (int round = 0; round < 200; ++round) {
    if (::rmdir(dir) == 0 || errno == ENOENT) return;
    if (!killed) {
      // Older kernels: each pid listed, killed, until the list is empty.
      const int fd = ::open(procs_file, O_RDONLY | O_CLOEXEC);
      if (fd < 0) return;
      std::array<char, 4096> buffer{};
      const ssize_t got = ::read(fd, buffer.data(), buffer.size() - 1);
      ::close(fd);
      long pid = 0;
      for (ssize_t i = 0; i < got; ++i) {
        if (buffer[static_cast<std::size_t>(i)] >= '0' &&
            buffer[static_cast<std::size_t>(i)] <= '9')
          pid = pid * 10 + (buffer[static_cast<std::size_t>(i)] - '0');
        else if (pid > 0) {
          ::kill(static_cast<pid_t>(pid), SIGKILL);
          pid = 0;
        }
      }
    }
    sleep_ms(10);
  }
}

namespace {

// Kills and removes the cgroup `dir` with the cgroups nested in it first (a scalebench run inside
// a run makes its own): rmdir refuses a cgroup that still has children. Not for the reaper: it
// allocates.
void remove_cgroup_tree(const std::string& dir) {
  if (DIR* directory = ::opendir(dir.c_str())) {
    std::vector<std::string> children;
    while (const dirent* entry = ::readdir(directory)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat st {};
      if (::lstat((dir + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        children.push_back(dir + "/" + name);
    }
    ::closedir(directory);
    for (const auto& child : children) remove_cgroup_tree(child);
  }
  kill_cgroup(dir.c_str(), (dir + "/cgroup.kill").c_str(), (dir + "/cgroup.procs").c_str());
}

}  // namespace

RunCgroup::RunCgroup() {
  const std::string parent = own_cgroup2_dir();
  if (parent.empty() || ::access((parent + "/cgroup.procs").c_str(), W_OK) != 0) return;
  // Cgroups of orchestrators that are gone (a kill -9 that took the reaper too): emptied, removed.
  if (DIR* directory = ::opendir(parent.c_str())) {
    while (const dirent* entry = ::readdir(directory)) {
      const std::string name = entry->d_name;
      if (name.rfind("scalebench-", 0) != 0) continue;
      const long owner = std::strtol(name.c_str() + 11, nullptr, 10);
      if (owner <= 0 || owner == ::getpid() || ::kill(static_cast<pid_t>(owner), 0) == 0 ||
          errno != ESRCH)
        continue;
      const std::string dir = parent + "/" + name;
      remove_cgroup_tree(dir);
    }
    ::closedir(directory);
  }
  static int sequence = 0;
  const std::string dir =
      parent + "/scalebench-" + std::to_string(::getpid()) + "-" + std::to_string(++sequence);
  if (::mkdir(dir.c_str(), 0755) != 0) return;
  path_ = dir;
  kill_ = dir + "/cgroup.kill";
  procs_ = dir + "/cgroup.procs";
}

RunCgroup::~RunCgroup() {
  if (!path_.empty()) remove_cgroup_tree(path_);
}

bool RunCgroup::add(pid_t pid) {
  if (path_.empty()) return false;
  const std::string text = std::to_string(pid);
  if (write_text(procs_.c_str(), text.c_str(), text.size())) return true;
  ::rmdir(path_.c_str());
  path_.clear();
  return false;
}

[[noreturn]] void reaper(int read_fd, pid_t group, const RunCgroup* cgroup) {
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
  if (cgroup != nullptr) kill_cgroup(cgroup->dir(), cgroup->kill_file(), cgroup->procs_file());
  ::_exit(0);
}

Subreaper::Subreaper() {
  int previous = 0;
  if (::prctl(PR_GET_CHILD_SUBREAPER, &previous, 0, 0, 0) == 0) previous_ = previous;
  active_ = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
  if (active_)
    for (const pid_t pid : children_of(::getpid())) before_.insert(pid);
}

Subreaper::~Subreaper() {
  if (active_ && previous_ == 0) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

std::vector<pid_t> Subreaper::signal_escaped(int signal, pid_t process, pid_t reaper) const {
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

void Subreaper::kill_escaped() const {
  for (int round = 0; round < 10000; ++round) {
    const auto escaped = signal_escaped(SIGKILL);
    if (escaped.empty()) return;
    for (const pid_t pid : escaped) {
      int status = 0;
      wait_for(pid, &status);
    }
  }
}

int RunningChild::finish() {
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

}  // namespace scalebench::orchestrator::process
