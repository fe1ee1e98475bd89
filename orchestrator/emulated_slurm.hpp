// A real Slurm across the emulated nodes (`scalebench cluster up --slurm`, docs/cluster.md): a
// slurm.conf naming every node at its address, munged with a key and a socket of the cluster's
// own, slurmctld on this machine (reached by the nodes at 10.<subnet>.0.254) and one
// `slurmd -N nodeK` inside each node's network namespace, with the node's hostname (a UTS
// namespace) and a TmpFS of its own (a mount namespace: PMIx puts each node's directory for a job
// step under the same name there, and the nodes share one file system). All the files are in
// <cluster directory>/slurm. Each daemon's pid is recorded before the next step, so that
// `cluster down` stops exactly these daemons.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "orchestrator/emulated_cluster.hpp"
#include "orchestrator/executor.hpp"

namespace scalebench::orchestrator {

// Starts a daemon that outlives scalebench. Not an Executor run: ProcessExecutor kills whatever a
// run leaves behind when the run ends (docs/launchers.md), which a daemon must survive.
class DaemonSpawner {
 public:
  virtual ~DaemonSpawner() = default;
  // Starts spec.argv (spec.env added) in a session of its own, stdin from /dev/null, stdout and
  // stderr appended to `log`, reparented to init; returns its pid. ClusterError if it cannot.
  virtual int spawn(const LaunchSpec& spec, const std::filesystem::path& log) = 0;
  // Whether `pid` still runs a command line that contains `marker` (not a zombie, not a reused
  // pid).
  virtual bool running(int pid, const std::string& marker) = 0;
  virtual void signal(int pid, int signal) = 0;
};

// Real processes: fork twice (the middle one exits, so the daemon is init's, not ours), setsid,
// exec with /usr/sbin and /sbin added to PATH (where Debian puts munged, slurmctld and slurmd).
class ProcessSpawner final : public DaemonSpawner {
 public:
  int spawn(const LaunchSpec& spec, const std::filesystem::path& log) override;
  bool running(int pid, const std::string& marker) override;
  void signal(int pid, int signal) override;
};

// The emulated Slurm's files and ports.
struct SlurmLayout {
  std::filesystem::path root;          // <cluster directory>/slurm: every file below
  std::filesystem::path conf;          // root/slurm.conf (SLURM_CONF for srun, sbatch, sinfo)
  std::filesystem::path munge_socket;  // root/munge.socket
  std::string controller_host;         // this machine's short hostname (slurmctld checks it)
  int controller_port = 0;             // on this machine: 20000 + 4 x subnet
  int node_port = 0;                   // in each node's namespace: the controller's + 1
};
SlurmLayout slurm_layout(const ClusterPlan& plan, const std::string& controller_host);

// slurm.conf: root runs everything, no cgroups (proctrack/linuxproc, task/none), each node
// `--slots` CPUs (config_overrides: the configuration, not the hardware, counts), one partition
// `nodes` of all of them, the default; a task that fails ends its step (KillOnBadExit).
std::string slurm_conf(const ClusterPlan& plan, const SlurmLayout& layout);

// Called with each daemon as soon as it runs: its name (munged, slurmctld, slurmd-node1, ...),
// its pid, and the marker its command line holds (the layout's root).
using DaemonRecorder =
    std::function<void(const std::string& name, int pid, const std::string& marker)>;

// Writes slurm.conf and munge's key, starts munged, slurmctld and each node's slurmd, and waits
// until `sinfo` shows every node idle. A daemon that stops or a node that is not idle within
// `timeout` is a ClusterError naming it, with the tail of its log. The caller removes what was
// made (the recorded daemons, the directory) when this throws.
void slurm_up(const ClusterPlan& plan, const SlurmLayout& layout, Executor& executor,
              DaemonSpawner& spawner, const DaemonRecorder& made,
              std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Stops a recorded daemon: SIGTERM, then SIGKILL after 3 s; nothing if `pid` no longer runs a
// command line holding `marker`. Returns whether it was running.
bool stop_daemon(DaemonSpawner& spawner, int pid, const std::string& marker);

}  // namespace scalebench::orchestrator
