#include "orchestrator/emulated_slurm.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace scalebench::orchestrator {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(200);

void write_text(const fs::path& path, const std::string& text, fs::perms perms) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw ClusterError(fmt::format("{}: cannot write", path.string()));
  out.close();
  fs::permissions(path, perms);
}

// The last `lines` lines of a file, indented, or "" when it is empty or missing.
std::string tail_of(const fs::path& path, std::size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "\n    " + all[i];
  return out;
}

// What a daemon said: its own log, or where that is empty, what it wrote to stdout and stderr
// (in the foreground the daemons write their log to both).
std::string logs_of(const SlurmLayout& layout, const std::string& daemon) {
  for (const auto& file : {layout.root / (daemon + ".log"), layout.root / (daemon + ".out")}) {
    const std::string tail = tail_of(file, 8);
    if (!tail.empty()) return fmt::format("\n  the tail of {}:{}", file.string(), tail);
  }
  return fmt::format("\n  ({} wrote no log in {})", daemon, layout.root.string());
}

// 1 KiB from /dev/urandom: munge's key, readable by root alone (munged refuses anything looser).
void write_munge_key(const fs::path& path) {
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string key(1024, '\0');
  if (!random.read(key.data(), static_cast<std::streamsize>(key.size())))
    throw ClusterError("/dev/urandom: cannot read a munge key");
  // Created 0400: never readable by others, not even between the write and a chmod.
  std::error_code ignored;
  fs::remove(path, ignored);  // a key left by a crash
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  if (fd < 0)
    throw ClusterError(
        fmt::format("{}: cannot create a munge key: {}", path.string(), std::strerror(errno)));
  const bool written = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size());
  ::close(fd);
  if (!written) throw ClusterError(fmt::format("{}: cannot write the munge key", path.string()));
}

// Polls `ready` until it says so; a ClusterError from `late` when `timeout` has passed.
template <typename Ready, typename Late>
void wait_until(std::chrono::milliseconds timeout, Ready ready, Late late) {
  const auto deadline = Clock::now() + timeout;
  while (!ready()) {
    if (Clock::now() >= deadline) throw ClusterError(late());
    std::this_thread::sleep_for(kPoll);
  }
}

std::map<std::string, std::string> node_states(Executor& executor, const SlurmLayout& layout) {
  std::map<std::string, std::string> states;
  for (const auto& line : detail::run_cluster_tool(executor, {"sinfo", "-h", "-N", "-o", "%N %T"},
                                                   true, {{"SLURM_CONF", layout.conf.string()}})) {
    std::istringstream words(line);
    std::string node;
    std::string state;
    if (words >> node >> state) states[node] = state;
  }
  return states;
}

int start(DaemonSpawner& spawner, const SlurmLayout& layout, const std::string& name,
          std::vector<std::string> argv, const DaemonRecorder& made) {
  const int pid = spawner.spawn(LaunchSpec{std::move(argv), {}, {}}, layout.root / (name + ".out"));
  made(name, pid, layout.root.string());
  return pid;
}

void start_munged(const SlurmLayout& layout, DaemonSpawner& spawner, const DaemonRecorder& made,
                  std::chrono::milliseconds timeout) {
  const fs::path& r = layout.root;
  const int pid = start(
      spawner, layout, "munged",
      {"munged", "--foreground", "--force", "--key-file=" + (r / "munge.key").string(),
       "--socket=" + layout.munge_socket.string(), "--pid-file=" + (r / "munged.pid").string(),
       "--log-file=" + (r / "munged.log").string(), "--seed-file=" + (r / "munge.seed").string()},
      made);
  wait_until(
      timeout,
      [&] {
        if (!spawner.running(pid, r.string()))
          throw ClusterError("munged stopped at its start" + logs_of(layout, "munged"));
        return fs::exists(layout.munge_socket);
      },
      [&] {
        return fmt::format("munged made no socket at {} within {:g} s{}",
                           layout.munge_socket.string(), timeout.count() / 1000.0,
                           logs_of(layout, "munged"));
      });
}

void start_slurmctld(const SlurmLayout& layout, Executor& executor, DaemonSpawner& spawner,
                     const DaemonRecorder& made, std::chrono::milliseconds timeout) {
  const int pid =
      start(spawner, layout, "slurmctld", {"slurmctld", "-D", "-f", layout.conf.string()}, made);
  wait_until(
      timeout,
      [&] {
        if (!spawner.running(pid, layout.root.string()))
          throw ClusterError("slurmctld stopped at its start" + logs_of(layout, "slurmctld"));
        for (const auto& line : detail::run_cluster_tool(executor, {"scontrol", "ping"}, true,
                                                         {{"SLURM_CONF", layout.conf.string()}}))
          if (line.find("is UP") != std::string::npos) return true;
        return false;
      },
      [&] {
        return fmt::format("slurmctld did not answer `scontrol ping` within {:g} s{}",
                           timeout.count() / 1000.0, logs_of(layout, "slurmctld"));
      });
}

// slurmd -N nodeK in the node's network namespace (nsenter: `ip netns exec` would mount a /sys of
// its own, without the cgroup file systems slurmd 22.05 looks for), with its hostname and its own
// TmpFS mounted over the shared one.
std::vector<std::string> slurmd_command(const ClusterNode& node, const SlurmLayout& layout) {
  return {"nsenter",
          "--net=/run/netns/" + node.netns,
          "unshare",
          "--uts",
          "--mount",
          "sh",
          "-c",
          "echo \"$0\" > /proc/sys/kernel/hostname && mount --bind \"$1\" \"$2\" && "
          "PATH=\"$PATH:/usr/sbin:/sbin\" exec slurmd -D -N \"$0\" -f \"$3\"",
          node.name,
          (layout.root / "nodetmp" / node.name).string(),
          (layout.root / "tmp").string(),
          layout.conf.string()};
}

void start_slurmds(const ClusterPlan& plan, const SlurmLayout& layout, Executor& executor,
                   DaemonSpawner& spawner, const DaemonRecorder& made,
                   std::chrono::milliseconds timeout) {
  std::map<std::string, int> pids;
  for (const auto& node : plan.nodes)
    pids[node.name] =
        start(spawner, layout, "slurmd-" + node.name, slurmd_command(node, layout), made);
  std::map<std::string, std::string> states;
  const auto not_idle = [&] {
    std::vector<std::string> out;
    for (const auto& node : plan.nodes)
      if (states[node.name] != "idle") out.push_back(node.name);
    return out;
  };
  wait_until(
      timeout,
      [&] {
        for (const auto& [node, pid] : pids)
          if (!spawner.running(pid, layout.root.string()))
            throw ClusterError(fmt::format("slurmd on {} stopped at its start{}", node,
                                           logs_of(layout, "slurmd-" + node)));
        states = node_states(executor, layout);
        return not_idle().empty();
      },
      [&] {
        std::string out;
        for (const auto& node : not_idle())
          out += fmt::format("\n{} is not idle within {:g} s (sinfo: {}){}", node,
                             timeout.count() / 1000.0,
                             states[node].empty() ? "not listed" : states[node],
                             logs_of(layout, "slurmd-" + node));
        return "the emulated Slurm's nodes did not come up:" + out;
      });
}

// What the daemon's exec needs, all made before the fork: after it only async-signal-safe calls
// (the caller may have threads).
struct PreparedExec {
  std::string program;  // argv[0] found in PATH, /usr/sbin or /sbin (where Debian puts munged)
  std::vector<std::string> words;
  std::vector<std::string> environment;  // KEY=VALUE: ours, PATH extended, spec.env on top
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string log;
};

PreparedExec prepare_exec(const LaunchSpec& spec, const fs::path& log) {
  PreparedExec p;
  const char* path = std::getenv("PATH");
  const std::string search = std::string(path ? path : "/usr/bin:/bin") + ":/usr/sbin:/sbin";
  p.program = spec.argv.front();
  if (p.program.find('/') == std::string::npos) {
    std::istringstream dirs(search);
    std::string found;
    for (std::string dir; found.empty() && std::getline(dirs, dir, ':');)
      if (!dir.empty() && ::access((dir + "/" + p.program).c_str(), X_OK) == 0)
        found = dir + "/" + p.program;
    if (found.empty())
      throw ClusterError(
          fmt::format("no {} in {} (apt-get install slurm-wlm munge)", p.program, search));
    p.program = found;
  }
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  env["PATH"] = search;
  for (const auto& [key, value] : spec.env) env[key] = value;
  for (const auto& [key, value] : env) p.environment.push_back(key + "=" + value);
  p.words = spec.argv;
  for (auto& w : p.words) p.argv.push_back(w.data());
  p.argv.push_back(nullptr);
  for (auto& e : p.environment) p.envp.push_back(e.data());
  p.envp.push_back(nullptr);
  p.log = log.string();
  return p;
}

// The daemon's side of ProcessSpawner::spawn: default signals, /dev/null in, the log out, no
// descriptor of ours but the pipe (close-on-exec); exec, or its errno down the pipe.
[[noreturn]] void exec_daemon(const PreparedExec& p, int pipe_fd) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD}) ::signal(sig, SIG_DFL);
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(p.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) {
    const int error = errno;
    (void)!::write(pipe_fd, &error, sizeof error);
    ::_exit(126);
  }
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(out, 2);
  if (pipe_fd > 3) ::close_range(3, static_cast<unsigned>(pipe_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(pipe_fd) + 1, ~0U, 0);
  ::execve(p.program.c_str(), p.argv.data(), p.envp.data());
  const int error = errno;
  (void)!::write(pipe_fd, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

SlurmLayout slurm_layout(const ClusterPlan& plan, const std::string& controller_host) {
  SlurmLayout layout;
  layout.root = fs::absolute(plan.spec.directory) / "slurm";
  layout.conf = layout.root / "slurm.conf";
  layout.munge_socket = layout.root / "munge.socket";
  layout.controller_host = controller_host.substr(0, controller_host.find('.'));
  layout.controller_port = 20000 + 4 * plan.spec.subnet;
  layout.node_port = layout.controller_port + 1;
  return layout;
}

std::string slurm_conf(const ClusterPlan& plan, const SlurmLayout& layout) {
  const std::string r = layout.root.string();
  std::string out = fmt::format(
      "# scalebench cluster {}: an emulated Slurm (`scalebench cluster up --slurm`), removed by\n"
      "# `scalebench cluster down`. Root runs everything; no cgroups.\n"
      "ClusterName=sb{}\n"
      "SlurmctldHost={}(10.{}.0.254)\n"
      "SlurmctldPort={}\n"
      "SlurmdPort={}\n"
      "SlurmUser=root\n"
      "SlurmdUser=root\n"
      "AuthType=auth/munge\n"
      "CredType=cred/munge\n"
      "AuthInfo=socket={}\n"
      "StateSaveLocation={r}/state\n"
      "SlurmdSpoolDir={r}/spool/%n\n"
      "TmpFS={r}/tmp\n"
      "SlurmctldPidFile={r}/slurmctld.pid\n"
      "SlurmdPidFile={r}/slurmd-%n.pid\n"
      "SlurmctldLogFile={r}/slurmctld.log\n"
      "SlurmdLogFile={r}/slurmd-%n.log\n"
      "SlurmdParameters=config_overrides\n"
      "ProctrackType=proctrack/linuxproc\n"
      "TaskPlugin=task/none\n"
      "JobAcctGatherType=jobacct_gather/none\n"
      "AccountingStorageType=accounting_storage/none\n"
      "SelectType=select/cons_tres\n"
      "SelectTypeParameters=CR_CPU\n"
      "MpiDefault=none\n"
      "ReturnToService=2\n"
      "SlurmdTimeout=30\n"
      "# A task that fails ends its step at once: the others, left in MPI_Init, would spin.\n"
      "KillOnBadExit=1\n"
      "KillWait=5\n",
      plan.spec.name, plan.spec.name, layout.controller_host, plan.spec.subnet,
      layout.controller_port, layout.node_port, layout.munge_socket.string(), fmt::arg("r", r));
  std::string names;
  for (const auto& node : plan.nodes) {
    out += fmt::format("NodeName={} NodeAddr={} CPUs={} State=UNKNOWN\n", node.name, node.address,
                       plan.spec.slots);
    names += (names.empty() ? "" : ",") + node.name;
  }
  out += fmt::format("PartitionName=nodes Nodes={} Default=YES MaxTime=INFINITE State=UP\n", names);
  return out;
}

void slurm_up(const ClusterPlan& plan, const SlurmLayout& layout, Executor& executor,
              DaemonSpawner& spawner, const DaemonRecorder& made,
              std::chrono::milliseconds timeout) {
  for (const char* sub : {"state", "spool", "tmp"}) fs::create_directories(layout.root / sub);
  for (const auto& node : plan.nodes) {
    fs::create_directories(layout.root / "spool" / node.name);
    fs::create_directories(layout.root / "nodetmp" / node.name);
  }
  const auto rw = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                  fs::perms::others_read;
  write_text(layout.conf, slurm_conf(plan, layout), rw);
  write_munge_key(layout.root / "munge.key");
  start_munged(layout, spawner, made, timeout);
  start_slurmctld(layout, executor, spawner, made, timeout);
  start_slurmds(plan, layout, executor, spawner, made, timeout);
}

bool stop_daemon(DaemonSpawner& spawner, int pid, const std::string& marker) {
  if (pid <= 1 || !spawner.running(pid, marker)) return false;
  spawner.signal(pid, SIGTERM);
  for (int i = 0; i < 30 && spawner.running(pid, marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (spawner.running(pid, marker)) spawner.signal(pid, SIGKILL);
  // Gone before its files are removed (it may still be writing its log or state).
  for (int i = 0; i < 30 && spawner.running(pid, marker); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return true;
}

int ProcessSpawner::spawn(const LaunchSpec& spec, const fs::path& log) {
  if (spec.argv.empty()) throw ClusterError("a daemon without a command");
  const PreparedExec prepared = prepare_exec(spec, log);
  // The middle process tells the daemon's pid down one pipe; the daemon, if its exec fails, its
  // errno down the other, which is close-on-exec: end of file there means the exec succeeded.
  int pid_pipe[2];
  int exec_pipe[2];
  if (::pipe2(pid_pipe, O_CLOEXEC) != 0) throw ClusterError("pipe: cannot start a daemon");
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    ::close(pid_pipe[0]);
    ::close(pid_pipe[1]);
    throw ClusterError("pipe: cannot start a daemon");
  }
  const pid_t middle = ::fork();
  if (middle == 0) {
    ::setsid();
    const pid_t daemon = ::fork();
    if (daemon != 0) {
      const int answer = daemon;
      (void)!::write(pid_pipe[1], &answer, sizeof answer);
      ::_exit(0);
    }
    exec_daemon(prepared, exec_pipe[1]);
  }
  ::close(pid_pipe[1]);
  ::close(exec_pipe[1]);
  int pid = -1;
  int exec_errno = 0;
  const bool told = middle > 0 && ::read(pid_pipe[0], &pid, sizeof pid) == sizeof pid;
  const bool failed = told && ::read(exec_pipe[0], &exec_errno, sizeof exec_errno) > 0;
  ::close(pid_pipe[0]);
  ::close(exec_pipe[0]);
  int status = 0;
  if (middle > 0) ::waitpid(middle, &status, 0);
  if (!told || pid <= 0) throw ClusterError(fmt::format("fork: cannot start {}", spec.argv[0]));
  if (failed)
    throw ClusterError(
        fmt::format("cannot run {}: {}", prepared.program, std::strerror(exec_errno)));
  return pid;
}

namespace {

std::string cmdline_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The state letter of /proc/PID/stat (R, S, D, Z, ...), or '\0' when there is no such process.
char state_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  const std::string stat{std::istreambuf_iterator<char>(in), {}};
  const auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '\0';
}

}  // namespace

bool ProcessSpawner::running(int pid, const std::string& marker) {
  // A zombie's command line is empty, but so, for a moment, is that of a process in execve (the
  // daemons start through nsenter, unshare and sh): a live process with an empty one is asked
  // again, up to half a second. (Likely the cause of one "slurmd on node4 stopped at its start"
  // with no log, in a clean-clone run of the suite on a loaded machine.)
  for (int attempt = 0; attempt < 25; ++attempt) {
    const std::string cmdline = cmdline_of(pid);
    if (!cmdline.empty()) return cmdline.find(marker) != std::string::npos;
    const char state = state_of(pid);
    if (state == '\0' || state == 'Z' || state == 'X') return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void ProcessSpawner::signal(int pid, int signal) {
  if (pid > 1) ::kill(pid, signal);
}

}  // namespace scalebench::orchestrator
