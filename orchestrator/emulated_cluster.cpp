#include "orchestrator/emulated_cluster.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "orchestrator/emulated_slurm.hpp"
#include "util/atomic_file.hpp"

namespace scalebench::orchestrator {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr auto kToolTimeout = std::chrono::seconds(30);

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::vector<std::string> run_tool(Executor& executor, std::vector<std::string> argv,
                                  bool tolerate = false) {
  return detail::run_cluster_tool(executor, std::move(argv), tolerate);
}

// The same no-follow, atomic writer as the report's files: a symlink planted at a name (or at
// a temporary name beside it) in --dir is never written through.
void write_file(const fs::path& path, const std::string& text, fs::perms perms) {
  try {
    util::write_file_atomically(path, text, static_cast<unsigned>(perms));
  } catch (const Error& error) {
    throw ClusterError(error.what());
  }
}

json state_of(const ClusterPlan& plan, const json& created) {
  json nodes = json::array();
  for (const auto& n : plan.nodes)
    nodes.push_back(
        {{"name", n.name}, {"netns", n.netns}, {"address", n.address}, {"host_veth", n.host_veth}});
  json link = nullptr;
  if (plan.spec.link)
    link = {{"rate_mbit", plan.spec.link->rate_mbit}, {"delay_ms", plan.spec.link->delay_ms}};
  return {{"name", plan.spec.name},   {"bridge", plan.bridge}, {"nodes", nodes},
          {"slots", plan.spec.slots}, {"link", link},          {"slurm", plan.spec.slurm},
          {"created", created}};
}

// Records what exists before the next step, so that a crash leaves a complete list.
class Recorder {
 public:
  explicit Recorder(const ClusterPlan& plan) : plan_(plan) { save(); }
  void made(const std::string& kind, const std::string& name) {
    created_.push_back({{"kind", kind}, {"name", name}});
    save();
  }
  // Records `name` before `create` makes it (a kill between the two cannot leak it: `down`
  // removes it, or finds it absent); forgotten again when the tool says it made nothing.
  template <typename Create>
  void making(const std::string& kind, const std::string& name, Create&& create) {
    made(kind, name);
    try {
      create();
    } catch (const ClusterError&) {
      created_.erase(created_.end() - 1);
      save();
      throw;
    }
  }
  void made_daemon(const std::string& name, int pid, const std::string& marker) {
    created_.push_back({{"kind", "daemon"}, {"name", name}, {"pid", pid}, {"marker", marker}});
    save();
  }

 private:
  void save() {
    write_file(plan_.spec.directory / "state.json", state_of(plan_, created_).dump(2) + "\n",
               fs::perms::owner_read | fs::perms::owner_write);
  }
  const ClusterPlan& plan_;
  json created_ = json::array();
};

// One direction of a node's link: with a delay, netem (the rate and half the node-to-node
// delay); without, a token bucket (tbf: every kernel with tc has it, netem is a module some lack).
// The bucket holds 4 ms at the rate (at least 15 kB: a jumbo frame), and queues up to 100 ms.
std::vector<std::string> shaping(const std::string& device, const LinkShape& link) {
  const std::string rate = fmt::format("{}mbit", link.rate_mbit);
  if (link.delay_ms > 0)
    return {"tc",    "qdisc", "add",
            "dev",   device,  "root",
            "netem", "delay", fmt::format("{}ms", link.delay_ms / 2),
            "rate",  rate,    "limit",
            "100000"};
  const auto burst_bytes =
      std::max(15'000.0, link.rate_mbit * 1e6 / 8 * 0.004);  // 4 ms at the rate
  return {"tc",
          "qdisc",
          "add",
          "dev",
          device,
          "root",
          "tbf",
          "rate",
          rate,
          "burst",
          fmt::format("{:.0f}", burst_bytes),
          "latency",
          "100ms"};
}

// Open MPI's plm_rsh_agent (and anyone's ssh): `rsh-agent HOST COMMAND...` runs COMMAND "on"
// HOST: in its network namespace, with its own hostname (a UTS namespace), through sh -c as ssh
// does with the words it is given.
std::string rsh_agent(const ClusterPlan& plan) {
  std::string cases;
  for (const auto& n : plan.nodes)
    cases += fmt::format("  {}|{}) ns={}; node={} ;;\n", n.address, n.name, n.netns, n.name);
  return fmt::format(
      "#!/bin/sh\n"
      "# scalebench cluster {}: runs a command on a node, as ssh would (Open MPI's "
      "plm_rsh_agent).\n"
      "# Written by `scalebench cluster up`; removed by `scalebench cluster down`.\n"
      "while [ $# -gt 0 ]; do case \"$1\" in -*) shift ;; *) break ;; esac; done\n"
      "host=$1; shift\n"
      "case \"$host\" in\n{}"
      "  *) echo \"rsh-agent: $host is no node of cluster {}\" >&2; exit 255 ;;\n"
      "esac\n"
      "exec ip netns exec \"$ns\" unshare --uts sh -c "
      "'echo \"$0\" > /proc/sys/kernel/hostname && exec sh -c \"$1\"' \"$node\" \"$*\"\n",
      plan.spec.name, cases, plan.spec.name);
}

std::string environment_file(const ClusterPlan& plan) {
  const fs::path agent = fs::absolute(plan.spec.directory / "rsh-agent");
  const std::string subnet = fmt::format("10.{}.0.0/24", plan.spec.subnet);
  std::string text = fmt::format(
      "# scalebench cluster {}: source this before `mpirun --hostfile {}`.\n"
      "export SCALEBENCH_CLUSTER={}\n"
      "export OMPI_MCA_plm_rsh_agent={}\n"
      "export OMPI_MCA_routed=direct\n"
      "export OMPI_MCA_oob_tcp_if_include={}\n"
      "export OMPI_MCA_btl_tcp_if_include={}\n"
      "# Open MPI 4.1's TCP transport sends a large message as one emulated RDMA put, and while\n"
      "# it receives one it sends nothing: the two directions of a link take turns, and an\n"
      "# allreduce gets half the link (docs/cluster.md). Plain sends keep the link full duplex;\n"
      "# remove this line to measure Open MPI's default.\n"
      "export OMPI_MCA_btl_tcp_flags=send,inplace,need-ack,need-csum\n"
      "# The nodes share this machine's cores: a rank that spins while it waits keeps the kernel\n"
      "# from moving the packets it waits for (an 8-byte allreduce across 2 nodes on 2 cores:\n"
      "# 3.4 ms spinning, 13 us yielding).\n"
      "export OMPI_MCA_mpi_yield_when_idle=1\n"
      "# A node that goes away (its link down, its machine off) is noticed in about 10 s instead\n"
      "# of Open MPI's 8 minutes of TCP keepalive: mpirun then names it and ends the run.\n"
      "export OMPI_MCA_oob_tcp_keepalive_time=4\n"
      "export OMPI_MCA_oob_tcp_keepalive_intvl=2\n"
      "export OMPI_MCA_oob_tcp_keepalive_probes=3\n",
      plan.spec.name, fs::absolute(plan.spec.directory / "hostfile").string(), plan.spec.name,
      agent.string(), subnet, subnet);
  // PyTorch's gloo finds its own address through the hostname, which does not resolve on a node.
  text += "export GLOO_SOCKET_IFNAME=eth0\n";
  if (plan.spec.slurm)
    text += fmt::format(
        "# srun, sbatch, salloc and sinfo talk to this cluster's Slurm.\nexport SLURM_CONF={}\n",
        fs::absolute(plan.spec.directory / "slurm" / "slurm.conf").string());
  return text;
}

void write_launcher_files(const ClusterPlan& plan) {
  std::string hostfile;
  for (const auto& n : plan.nodes)
    hostfile += fmt::format("{} slots={}\n", n.address, plan.spec.slots);
  const auto rw = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                  fs::perms::others_read;
  write_file(plan.spec.directory / "hostfile", hostfile, rw);
  write_file(plan.spec.directory / "env", environment_file(plan), rw);
  write_file(plan.spec.directory / "rsh-agent", rsh_agent(plan),
             rw | fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec);
}

// This machine's short hostname: slurmctld runs only where SlurmctldHost names it.
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0)
    throw ClusterError("gethostname failed: slurmctld needs this machine's name");
  const std::string full(name);
  return full.substr(0, full.find('.'));
}

// Stops the recorded daemons, newest first (each node's slurmd, then slurmctld, then munged).
void stop_daemons(const json& created, DaemonSpawner& spawner, std::vector<std::string>& removed) {
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    if ((*it).value("kind", "") != "daemon") continue;
    const std::string name = (*it).value("name", "");
    if (stop_daemon(spawner, (*it).value("pid", 0), (*it).value("marker", "")))
      removed.push_back("daemon " + name);
  }
}

// SIGKILL to every process in namespace `ns`, then up to 3 s for them to be gone: a process
// still dying there keeps the namespace (and the files it has open) alive.
void kill_namespace_processes(Executor& executor, const std::string& ns) {
  for (int attempt = 0; attempt < 30; ++attempt) {
    const auto pids = run_tool(executor, {"ip", "netns", "pids", ns}, true);
    if (pids.empty()) return;
    for (const auto& line : pids) {
      try {
        const int pid = std::stoi(line);
        if (pid > 1) ::kill(pid, SIGKILL);
      } catch (const std::exception&) {
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The recorded items `down` did not manage to remove: daemons still running, namespaces still
// listed, links still shown, the Slurm directory still there.
json still_present(const fs::path& directory, const json& created, Executor& executor,
                   DaemonSpawner& daemons) {
  json left = json::array();
  const auto namespaces = run_tool(executor, {"ip", "netns", "list"}, true);
  for (const auto& item : created) {
    const std::string kind = item.value("kind", "");
    const std::string name = item.value("name", "");
    bool present = false;
    if (kind == "daemon") {
      present = daemons.running(item.value("pid", 0), item.value("marker", ""));
    } else if (kind == "netns") {
      for (const auto& line : namespaces)
        present = present || line == name || line.rfind(name + " ", 0) == 0;
    } else if (kind == "link") {
      present = !run_tool(executor, {"ip", "link", "show", "dev", name}, true).empty();
    } else if (kind == "dir") {
      std::error_code ignored;
      present = fs::exists(directory / name, ignored);
    }
    if (present) left.push_back(item);
  }
  return left;
}

// The directory's path goes into a shell script (rsh-agent), the env file, slurm.conf and a
// Unix socket's address: plain characters only, and short enough for munge's socket (a
// sockaddr_un holds 107 bytes).
void check_cluster_directory(const fs::path& directory) {
  const std::string path = directory.string();
  const auto bad = path.find_first_not_of(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-@%,=");
  if (bad != std::string::npos)
    throw ClusterError(fmt::format(
        "--dir '{}': the character '{}' at {}: expected letters, digits and / . _ + - @ % , = "
        "(the path goes into shell scripts and configuration files)",
        path, path[bad], bad + 1));
  const std::string socket = (directory / "slurm" / "munge.socket").string();
  if (socket.size() > 107)
    throw ClusterError(fmt::format(
        "--dir '{}': too long; munge's socket {} would be {} bytes, a Unix socket's address "
        "holds 107",
        path, socket, socket.size()));
}

json read_state(const fs::path& directory) {
  std::ifstream in(directory / "state.json");
  if (!in) return nullptr;
  try {
    return json::parse(in);
  } catch (const json::exception& error) {
    throw ClusterError(
        fmt::format("{}: unreadable: {}", (directory / "state.json").string(), error.what()));
  }
}

// The interface name in a line of `ip -o link show` ("5: sbt3h1@if4: <BROADCAST,...") or of
// `ip -o addr show` ("5: sbt3br    inet 10.213.0.254/24 ...").
std::string interface_of(const std::string& line) {
  const auto colon = line.find(": ");
  if (colon == std::string::npos) return "";
  auto name = line.substr(colon + 2);
  name = name.substr(0, name.find_first_of(" :@\t"));
  return name;
}

// The cluster whose bridge `device` is ("sbt3br" -> t3), or empty.
std::string cluster_of_bridge(const std::string& device) {
  if (device.size() > 4 && device.starts_with("sb") && device.ends_with("br"))
    return device.substr(2, device.size() - 4);
  return "";
}

// Another cluster (or anything else) on this machine using the subnet or the interface and
// namespace names `up` would make: a ClusterError naming it, before anything is made. Two
// clusters on one subnet would each route to the other's nodes (mpirun hung).
void refuse_names_in_use(const ClusterPlan& plan, Executor& executor) {
  const std::string prefix = fmt::format("10.{}.0.", plan.spec.subnet);
  for (const auto& line : run_tool(executor, {"ip", "-o", "-4", "addr", "show"}, true)) {
    const auto at = line.find(" inet " + prefix);
    if (at == std::string::npos) continue;
    const std::string device = interface_of(line);
    const std::string address = line.substr(at + 6, line.find(' ', at + 6) - at - 6);
    const std::string other = cluster_of_bridge(device);
    throw ClusterError(fmt::format(
        "--subnet {}: 10.{}.0.0/24 is already in use here ({} has {}{}); choose another "
        "--subnet",
        plan.spec.subnet, plan.spec.subnet, device, address,
        other.empty() ? "" : fmt::format(": cluster '{}'", other)));
  }
  std::vector<std::string> ours{plan.bridge};
  for (const auto& n : plan.nodes) ours.push_back(n.host_veth);
  for (const auto& line : run_tool(executor, {"ip", "-o", "link", "show"}, true)) {
    const std::string device = interface_of(line);
    if (std::find(ours.begin(), ours.end(), device) != ours.end())
      throw ClusterError(fmt::format(
          "--name {}: the interface {} already exists (a cluster of that name is up, or left "
          "over: `scalebench cluster down --name {}`)",
          plan.spec.name, device, plan.spec.name));
  }
  for (const auto& line : run_tool(executor, {"ip", "netns", "list"}, true)) {
    const std::string ns = line.substr(0, line.find(' '));
    for (const auto& n : plan.nodes)
      if (ns == n.netns)
        throw ClusterError(fmt::format(
            "--name {}: the network namespace {} already exists (a cluster of that name is up, "
            "or left over: `scalebench cluster down --name {}`)",
            plan.spec.name, ns, plan.spec.name));
  }
}

bool is_node_number(std::string_view digits) {
  return !digits.empty() && digits.size() <= 2 && digits.front() != '0' &&
         digits.find_first_not_of("0123456789") == std::string_view::npos;
}

// Whether `up` of cluster `cluster` could have made this item: sb<c>br and sb<c>h<k> links,
// sb-<c>-node<k> namespaces, the slurm directory, daemons (checked by their marker when
// stopped). A state.json naming anything else (eth0, another's namespace) is not followed.
bool made_by_up(const std::string& cluster, const json& item) {
  const std::string kind = item.value("kind", "");
  const std::string name = item.value("name", "");
  if (kind == "daemon") return true;
  if (kind == "dir") return name == "slurm";
  if (kind == "link")
    return name == "sb" + cluster + "br" ||
           (name.starts_with("sb" + cluster + "h") &&
            is_node_number(std::string_view(name).substr(cluster.size() + 3)));
  if (kind == "netns") {
    const std::string stem = "sb-" + cluster + "-node";
    return name.starts_with(stem) && is_node_number(std::string_view(name).substr(stem.size()));
  }
  return false;
}

}  // namespace

std::vector<std::string> detail::run_cluster_tool(Executor& executor, std::vector<std::string> argv,
                                                  bool tolerate,
                                                  std::map<std::string, std::string> env) {
  std::vector<std::string> out;
  std::string err;
  const LaunchSpec spec{argv, std::move(env),
                        std::chrono::duration_cast<std::chrono::milliseconds>(kToolTimeout)};
  const auto outcome = executor.execute(spec, [&](StampedLine&& line) {
    if (line.stream == Stream::Stdout)
      out.push_back(line.text);
    else if (err.size() < 500)
      err += (err.empty() ? "" : " ") + line.text;
  });
  if (outcome.launched && outcome.exit_code == 0) return out;
  if (tolerate) return {};
  const std::string why = !outcome.launch_error.empty() ? outcome.launch_error
                          : outcome.timed_out
                              ? fmt::format("no answer in {} s", kToolTimeout.count())
                              : fmt::format("exit code {}{}", outcome.exit_code.value_or(-1),
                                            err.empty() ? "" : ": " + err);
  throw ClusterError(fmt::format("`{}` failed: {}", joined(argv), why));
}

fs::path default_cluster_directory(const std::string& name) {
  return fs::path("/run/scalebench") / ("cluster-" + name);
}

ClusterPlan plan_cluster(ClusterSpec spec) {
  if (spec.name.empty() || spec.name.size() > 6 ||
      spec.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string::npos)
    throw ClusterError(fmt::format(
        "--name '{}': expected 1 to 6 of a-z and 0-9 (it goes into interface names)", spec.name));
  if (spec.nodes < 1 || spec.nodes > 64)
    throw ClusterError(fmt::format("--nodes {}: expected 1 to 64", spec.nodes));
  if (spec.slots < 1 || spec.slots > 1024)
    throw ClusterError(fmt::format("--slots {}: expected 1 to 1024", spec.slots));
  if (spec.subnet < 0 || spec.subnet > 255)
    throw ClusterError(fmt::format("--subnet {}: expected 0 to 255", spec.subnet));
  if (spec.link && !(spec.link->rate_mbit > 0 && spec.link->rate_mbit <= 1e6 &&
                     spec.link->delay_ms >= 0 && spec.link->delay_ms <= 10'000))
    throw ClusterError(
        "the link: expected a rate in (0, 1000000] Mbit/s and a delay in [0, 10000] ms");
  if (spec.directory.empty()) spec.directory = default_cluster_directory(spec.name);
  spec.directory = fs::absolute(spec.directory).lexically_normal();
  check_cluster_directory(spec.directory);
  ClusterPlan plan;
  plan.bridge = fmt::format("sb{}br", spec.name);
  for (int k = 1; k <= spec.nodes; ++k) {
    ClusterNode n;
    n.name = fmt::format("node{}", k);
    n.netns = fmt::format("sb-{}-node{}", spec.name, k);
    n.address = fmt::format("10.{}.0.{}", spec.subnet, k);
    n.host_veth = fmt::format("sb{}h{}", spec.name, k);
    n.inner_veth = fmt::format("sb{}n{}", spec.name, k);
    plan.nodes.push_back(n);
  }
  plan.spec = std::move(spec);
  return plan;
}

ClusterPlan cluster_up(const ClusterSpec& requested, Executor& executor, DaemonSpawner* spawner) {
  const ClusterPlan plan = plan_cluster(requested);
  const fs::path& directory = plan.spec.directory;
  if (fs::exists(directory / "state.json"))
    throw ClusterError(
        fmt::format("cluster {} is already up ({}): `scalebench cluster down --name {}` first",
                    plan.spec.name, (directory / "state.json").string(), plan.spec.name));
  refuse_names_in_use(plan, executor);
  fs::create_directories(directory);
  try {
    Recorder record(plan);
    const std::string prefix = fmt::format("10.{}.0", plan.spec.subnet);
    record.making("link", plan.bridge, [&] {
      run_tool(executor, {"ip", "link", "add", plan.bridge, "type", "bridge"});
    });
    // The host's own address on the bridge: mpirun, run here, is reached by the nodes' daemons.
    run_tool(executor, {"ip", "addr", "add", prefix + ".254/24", "dev", plan.bridge});
    run_tool(executor, {"ip", "link", "set", plan.bridge, "up"});
    for (const auto& n : plan.nodes) {
      record.making("netns", n.netns, [&] { run_tool(executor, {"ip", "netns", "add", n.netns}); });
      record.making("link", n.host_veth, [&] {  // deleting one end deletes the pair
        run_tool(executor,
                 {"ip", "link", "add", n.host_veth, "type", "veth", "peer", "name", n.inner_veth});
      });
      run_tool(executor, {"ip", "link", "set", n.inner_veth, "netns", n.netns});
      run_tool(executor, {"ip", "-n", n.netns, "link", "set", n.inner_veth, "name", "eth0"});
      run_tool(executor, {"ip", "-n", n.netns, "addr", "add", n.address + "/24", "dev", "eth0"});
      run_tool(executor, {"ip", "-n", n.netns, "link", "set", "eth0", "up"});
      run_tool(executor, {"ip", "-n", n.netns, "link", "set", "lo", "up"});
      run_tool(executor, {"ip", "link", "set", n.host_veth, "master", plan.bridge});
      run_tool(executor, {"ip", "link", "set", n.host_veth, "up"});
      if (plan.spec.link) {
        try {
          run_tool(executor, shaping(n.host_veth, *plan.spec.link));  // towards the node
          auto inside = shaping("eth0", *plan.spec.link);             // from the node
          inside.insert(inside.begin(), {"ip", "netns", "exec", n.netns});
          run_tool(executor, inside);
        } catch (const ClusterError& error) {
          if (plan.spec.link->delay_ms > 0 &&
              std::string_view(error.what()).find("qdisc kind is unknown") != std::string::npos)
            throw ClusterError(fmt::format(
                "{}: this kernel has no netem (sch_netem), so a delay cannot be emulated here; "
                "--rate alone shapes with tbf",
                error.what()));
          throw;
        }
      }
    }
    write_launcher_files(plan);
    if (plan.spec.slurm) {
      ProcessSpawner processes;
      DaemonSpawner& daemons = spawner != nullptr ? *spawner : processes;
      record.made("dir", "slurm");
      const SlurmLayout layout = slurm_layout(plan, host_name());
      slurm_up(
          plan, layout, executor, daemons,
          [&](const std::string& name, int pid, const std::string& marker) {
            record.made_daemon(name, pid, marker);
          },
          plan.spec.slurm_timeout);
    }
  } catch (...) {
    try {
      cluster_down(directory, executor, spawner);
    } catch (const std::exception&) {  // the first error is the one to report
    }
    throw;
  }
  return plan;
}

std::vector<std::string> cluster_down(const fs::path& directory, Executor& executor,
                                      DaemonSpawner* spawner) {
  std::vector<std::string> removed;
  json state = read_state(directory);
  if (state.is_null()) return removed;
  if (!state.is_object() || (state.contains("created") && !state["created"].is_array()) ||
      (state.contains("name") && !state["name"].is_string()))
    throw ClusterError(fmt::format("{}: not the state `cluster up` writes; nothing removed",
                                   (directory / "state.json").string()));
  const json created = state.value("created", json::array());
  const std::string cluster = state.value("name", "");
  if (cluster.empty() || cluster.size() > 6 ||
      cluster.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string::npos)
    throw ClusterError(
        fmt::format("{}: the cluster's name '{}' is not one `up` gives; nothing "
                    "removed",
                    (directory / "state.json").string(), cluster));
  if (state.contains("bridge") && state["bridge"] != json("sb" + cluster + "br"))
    throw ClusterError(fmt::format(
        "{}: names the bridge {}, which `cluster up` of '{}' never makes; nothing removed (edit "
        "or delete the file)",
        (directory / "state.json").string(), state["bridge"].dump(), cluster));
  for (const auto& item : created)
    if (!item.is_object() || !made_by_up(cluster, item))
      throw ClusterError(fmt::format(
          "{}: names {}, which `cluster up` of '{}' never makes; nothing removed (edit or delete "
          "the file)",
          (directory / "state.json").string(), item.dump(), cluster));
  ProcessSpawner processes;
  DaemonSpawner& daemons = spawner != nullptr ? *spawner : processes;
  stop_daemons(created, daemons, removed);
  // Namespaces first (their processes killed and gone: a process left in one would keep it
  // alive), then links, newest first.
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    if ((*it).value("kind", "") != "netns") continue;
    const std::string ns = (*it).value("name", "");
    kill_namespace_processes(executor, ns);
    run_tool(executor, {"ip", "netns", "del", ns}, true);
    removed.push_back("namespace " + ns);
  }
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    if ((*it).value("kind", "") != "link") continue;
    const std::string link = (*it).value("name", "");
    run_tool(executor, {"ip", "link", "del", link}, true);
    removed.push_back("link " + link);
  }
  for (const auto& made : created) {
    // The Slurm's directory (its configuration, key, socket, logs, spool and state), by its
    // fixed name only: nothing else of `directory` is removed whole.
    if (made.value("kind", "") != "dir" || made.value("name", "") != "slurm") continue;
    std::error_code ignored;
    if (fs::remove_all(directory / "slurm", ignored) > 0) removed.push_back("directory slurm");
  }
  // Whatever is still there stays recorded, so that `down` can be run again; the files go only
  // when nothing is left.
  const json left = still_present(directory, created, executor, daemons);
  if (!left.empty()) {
    state["created"] = left;
    write_file(directory / "state.json", state.dump(2) + "\n",
               fs::perms::owner_read | fs::perms::owner_write);
    std::string names;
    for (const auto& item : left)
      names += fmt::format("{}{} {}", names.empty() ? "" : ", ", item.value("kind", ""),
                           item.value("name", ""));
    throw ClusterError(fmt::format(
        "cluster down: could not remove {}; they stay recorded in {}: run `cluster down` again",
        names, (directory / "state.json").string()));
  }
  for (const char* file : {"hostfile", "env", "rsh-agent", "state.json"}) {
    std::error_code ignored;
    if (fs::remove(directory / file, ignored)) removed.push_back(std::string("file ") + file);
  }
  std::error_code ignored;
  fs::remove(directory, ignored);  // only when empty
  return removed;
}

std::string cluster_status(const fs::path& directory, Executor& executor, DaemonSpawner* spawner) {
  const json state = read_state(directory);
  if (state.is_null()) return fmt::format("no cluster is up at {}\n", directory.string());
  std::string out = fmt::format("cluster {} ({}), bridge {}", state.value("name", ""),
                                directory.string(), state.value("bridge", ""));
  const json link = state.value("link", json());
  if (link.is_object())
    out += fmt::format(", links {} Mbit/s, {} ms node to node", link.value("rate_mbit", 0.0),
                       link.value("delay_ms", 0.0));
  out += "\n";
  const auto listed = run_tool(executor, {"ip", "netns", "list"}, true);
  for (const auto& node : state.value("nodes", json::array())) {
    const std::string ns = node.value("netns", "");
    bool present = false;
    for (const auto& line : listed) present = present || line.rfind(ns, 0) == 0;
    const auto pids = present ? run_tool(executor, {"ip", "netns", "pids", ns}, true)
                              : std::vector<std::string>{};
    out += fmt::format(
        "  {} {} {}: {}\n", node.value("name", ""), node.value("address", ""), ns,
        present ? fmt::format("up, {} processes", pids.size()) : std::string("MISSING"));
  }
  ProcessSpawner processes;
  DaemonSpawner& daemons = spawner != nullptr ? *spawner : processes;
  for (const auto& made : state.value("created", json::array())) {
    if (made.value("kind", "") != "daemon") continue;
    const int pid = made.value("pid", 0);
    out += fmt::format("  daemon {} pid {}: {}\n", made.value("name", ""), pid,
                       daemons.running(pid, made.value("marker", "")) ? "running" : "NOT RUNNING");
  }
  out += fmt::format("files: {0}/hostfile {0}/env {0}/rsh-agent", directory.string());
  if (state.value("slurm", false)) out += fmt::format(" {}/slurm/slurm.conf", directory.string());
  out += "\n";
  return out;
}

}  // namespace scalebench::orchestrator
