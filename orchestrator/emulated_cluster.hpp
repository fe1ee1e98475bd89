// Many nodes on one machine (docs/cluster.md, "Try a cluster on one machine"): N network
// namespaces, each with one address on a private bridge only this machine sees, every node's
// link shaped (netem: rate and delay, both directions), and the files a launcher needs: a
// hostfile, an ssh-like agent that runs a command "on" a node (`ip netns exec` with the node's
// own hostname in a UTS namespace; Open MPI's plm_rsh_agent) and an environment file. What was
// made is recorded in state.json before the next step, so `down` removes it all, also after a
// crash, and is idempotent. The `ip`/`tc` commands go through an Executor: a fake one tests the
// plan without root.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/executor.hpp"
#include "util/error.hpp"

namespace scalebench::orchestrator {

class ClusterError : public Error {
 public:
  using Error::Error;
};

// One node-to-node path: `rate_mbit` megabits per second and `delay_ms` one-way delay. Each
// node's link is shaped in both directions at that rate with half the delay, so a message from
// one node to another crosses two shaped hops: the full delay, at the rate.
struct LinkShape {
  double rate_mbit = 0;
  double delay_ms = 0;
};

struct ClusterSpec {
  std::string name = "sb";  // [a-z0-9], 1-6 characters: it goes into interface names (15 max)
  int nodes = 2;            // 1..64
  int slots = 1;            // ranks per node in the hostfile
  std::optional<LinkShape> link;
  std::filesystem::path directory;  // the state and the files; default /run/scalebench/<name>
  int subnet = 213;                 // the nodes are 10.<subnet>.0.<k>/24
  bool slurm = false;  // also a Slurm across the nodes (orchestrator/emulated_slurm.hpp)
  std::chrono::milliseconds slurm_timeout{60'000};  // for each daemon, and for the nodes' idle
};

struct ClusterNode {
  std::string name;        // node1, node2, ... (its hostname inside)
  std::string netns;       // sb-<cluster>-node<k>
  std::string address;     // 10.<subnet>.0.<k>
  std::string host_veth;   // the bridge side of its link
  std::string inner_veth;  // the node side, eth0 once moved into the namespace
};

struct ClusterPlan {
  ClusterSpec spec;
  std::string bridge;
  std::vector<ClusterNode> nodes;
};

// Names and addresses for `spec`; throws ClusterError naming a bad field.
ClusterPlan plan_cluster(ClusterSpec spec);

class DaemonSpawner;  // orchestrator/emulated_slurm.hpp

// Creates the cluster (root: a clear ClusterError otherwise); on a failure half-way removes what
// it made and throws. Returns the plan; its files are in plan.spec.directory. With spec.slurm the
// daemons are started through `spawner` (a ProcessSpawner when none is given).
ClusterPlan cluster_up(const ClusterSpec& spec, Executor& executor,
                       DaemonSpawner* spawner = nullptr);
// Removes everything state.json in `directory` records (the daemons, namespaces with their
// processes, the bridge, the files); nothing there is not an error. Returns what it removed, a
// line each.
std::vector<std::string> cluster_down(const std::filesystem::path& directory, Executor& executor,
                                      DaemonSpawner* spawner = nullptr);
// The nodes, their links, the processes in each namespace and the daemons, as text.
std::string cluster_status(const std::filesystem::path& directory, Executor& executor,
                           DaemonSpawner* spawner = nullptr);

// The default directory of a cluster named `name`.
std::filesystem::path default_cluster_directory(const std::string& name);

namespace detail {
// Runs one tool (`ip`, `tc`, `sinfo`...) with `env` added; its stdout lines, or a ClusterError
// naming the command and its stderr (unless `tolerate`: then an empty answer).
std::vector<std::string> run_cluster_tool(Executor& executor, std::vector<std::string> argv,
                                          bool tolerate = false,
                                          std::map<std::string, std::string> env = {});
}  // namespace detail

}  // namespace scalebench::orchestrator
