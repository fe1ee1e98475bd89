// orchestrator/emulated_slurm (issue 24, item 3) without root: `cluster up` with spec.slurm through
// a fake executor (sinfo, scontrol) and a fake daemon spawner: slurm.conf, munge's key, the
// daemons' command lines in order, each pid in state.json before the next step, the env file's
// SLURM_CONF, a node that never comes up named with its log's tail, and `down` stopping every
// daemon and removing the Slurm's directory. The real thing: tests/cli/test_cluster_slurm_cli.cpp.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "orchestrator/emulated_cluster.hpp"
#include "orchestrator/emulated_slurm.hpp"
#include "orchestrator/executor.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;
namespace fs = std::filesystem;

namespace {

std::string command_of(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Daemons that "run" until signalled; each spawn sees state.json as it was then.
class FakeSpawner final : public DaemonSpawner {
 public:
  explicit FakeSpawner(fs::path state) : state_(std::move(state)) {}
  int spawn(const LaunchSpec& spec, const fs::path& log) override {
    const int pid = 1'000'000'000 + static_cast<int>(spawned.size());  // beyond any pid_max
    spawned.push_back(command_of(spec.argv));
    logs.push_back(log);
    recorded_before.push_back(nlohmann::json::parse(read_file(state_))["created"].size());
    alive.insert(pid);
    if (on_spawn) on_spawn(spec, pid);
    return pid;
  }
  bool running(int pid, const std::string&) override { return alive.contains(pid); }
  void signal(int pid, int signal) override {
    signals.push_back({pid, signal});
    alive.erase(pid);
  }

  std::vector<std::string> spawned;
  std::vector<fs::path> logs;
  std::vector<std::size_t> recorded_before;  // entries in state.json when each was spawned
  std::set<int> alive;
  std::vector<std::pair<int, int>> signals;
  std::function<void(const LaunchSpec&, int)> on_spawn;

 private:
  fs::path state_;
};

ClusterSpec slurm_spec(const fs::path& directory) {
  ClusterSpec spec;
  spec.name = "t5";
  spec.nodes = 2;
  spec.slots = 2;
  spec.subnet = 223;
  spec.directory = directory;
  spec.slurm = true;
  return spec;
}

// sinfo says every node is idle, scontrol ping that the controller is up; munged's socket
// appears when munged is spawned.
FakeProcess answer(const LaunchSpec& launch, const std::string& node2_state = "idle") {
  FakeProcess p;
  if (launch.argv.front() == "scontrol") p.lines.push_back({0, Stream::Stdout, "is UP"});
  if (launch.argv.front() == "sinfo") {
    p.lines.push_back({0, Stream::Stdout, "node1 idle"});
    p.lines.push_back({0, Stream::Stdout, "node2 " + node2_state});
  }
  return p;
}

void make_socket_on_munged(FakeSpawner& spawner, const fs::path& root) {
  spawner.on_spawn = [root](const LaunchSpec& spec, int) {
    if (spec.argv.front() == "munged") std::ofstream(root / "munge.socket") << "";
  };
}

}  // namespace

TEST_CASE("emulated slurm: slurm.conf names every node at its address, ports and paths its own") {
  ClusterSpec spec = slurm_spec("/run/sbt/c");
  const auto plan = plan_cluster(spec);
  const auto layout = slurm_layout(plan, "devbox.example.org");
  CHECK(layout.root == fs::path("/run/sbt/c/slurm"));
  CHECK(layout.controller_host == "devbox");
  CHECK(layout.controller_port == 20000 + 4 * 223);
  const std::string conf = slurm_conf(plan, layout);
  for (const char* line :
       {"SlurmctldHost=devbox(10.223.0.254)\n", "SlurmctldPort=20892\n", "SlurmdPort=20893\n",
        "AuthInfo=socket=/run/sbt/c/slurm/munge.socket\n",
        "SlurmdSpoolDir=/run/sbt/c/slurm/spool/%n\n",
        "SlurmdLogFile=/run/sbt/c/slurm/slurmd-%n.log\n", "TmpFS=/run/sbt/c/slurm/tmp\n",
        "SlurmdParameters=config_overrides\n", "ProctrackType=proctrack/linuxproc\n",
        "TaskPlugin=task/none\n", "KillOnBadExit=1\n",
        "NodeName=node1 NodeAddr=10.223.0.1 CPUs=2 State=UNKNOWN\n",
        "NodeName=node2 NodeAddr=10.223.0.2 CPUs=2 State=UNKNOWN\n",
        "PartitionName=nodes Nodes=node1,node2 Default=YES"}) {
    CAPTURE(line);
    CHECK(conf.find(line) != std::string::npos);
  }
}

TEST_CASE(
    "emulated slurm: up starts munged, slurmctld and a slurmd per node, each recorded first") {
  test::TempDir dir;
  const ClusterSpec spec = slurm_spec(dir / "c");
  const fs::path root = fs::absolute(dir / "c" / "slurm");
  std::vector<LaunchSpec> tools;
  FakeExecutor executor([&](const LaunchSpec& launch) {
    if (launch.argv.front() == "sinfo" || launch.argv.front() == "scontrol")
      tools.push_back(launch);
    return answer(launch);
  });
  FakeSpawner spawner(dir / "c" / "state.json");
  make_socket_on_munged(spawner, root);
  cluster_up(spec, executor, &spawner);

  REQUIRE(spawner.spawned.size() == 4);
  CHECK(spawner.spawned[0].rfind("munged --foreground --force --key-file=" + root.string() +
                                     "/munge.key --socket=" + root.string() + "/munge.socket",
                                 0) == 0);
  CHECK(spawner.spawned[1] == "slurmctld -D -f " + root.string() + "/slurm.conf");
  // Each slurmd in its node's network namespace, with the node's hostname and its own TmpFS.
  CHECK(spawner.spawned[3].rfind("nsenter --net=/run/netns/sb-t5-node2 unshare --uts --mount sh -c",
                                 0) == 0);
  CHECK(spawner.spawned[3].find("exec slurmd -D -N \"$0\" -f \"$3\" node2 " + root.string() +
                                "/nodetmp/node2 " + root.string() + "/tmp " + root.string() +
                                "/slurm.conf") != std::string::npos);
  CHECK(spawner.logs[2] == root / "slurmd-node1.out");
  // Every daemon before it was recorded with its pid before the next one started.
  const auto state = nlohmann::json::parse(read_file(dir / "c" / "state.json"));
  const auto& created = state["created"];
  REQUIRE(created.size() == spawner.recorded_before.back() + 1);
  for (std::size_t i = 1; i < spawner.recorded_before.size(); ++i)
    CHECK(spawner.recorded_before[i] == spawner.recorded_before[i - 1] + 1);
  CHECK(created.back()["kind"] == "daemon");
  CHECK(created.back()["name"] == "slurmd-node2");
  CHECK(created.back()["pid"] == 1'000'000'003);
  CHECK(created.back()["marker"] == root.string());
  // The clients asked this cluster's Slurm, and the env file sends srun there too.
  REQUIRE(!tools.empty());
  for (const auto& tool : tools) CHECK(tool.env.at("SLURM_CONF") == (root / "slurm.conf").string());
  CHECK(read_file(dir / "c" / "env")
            .find("export SLURM_CONF=" + (root / "slurm.conf").string() + "\n") !=
        std::string::npos);
  CHECK((fs::status(root / "munge.key").permissions() & fs::perms::mask) == fs::perms::owner_read);
  CHECK(fs::file_size(root / "munge.key") == 1024);
  CHECK(fs::is_directory(root / "spool" / "node2"));

  // down: the daemons newest first (SIGTERM; they go), then the namespaces, then the files.
  FakeExecutor remover([](const LaunchSpec&) { return FakeProcess{}; });
  const auto removed = cluster_down(dir / "c", remover, &spawner);
  REQUIRE(spawner.signals.size() == 4);
  CHECK(spawner.signals.front() == std::pair{1'000'000'003, SIGTERM});
  CHECK(spawner.signals.back() == std::pair{1'000'000'000, SIGTERM});
  CHECK(std::find(removed.begin(), removed.end(), "daemon slurmctld") != removed.end());
  CHECK(std::find(removed.begin(), removed.end(), "directory slurm") != removed.end());
  CHECK_FALSE(fs::exists(dir / "c"));
}

TEST_CASE("emulated slurm: a node never idle is named with its log, and everything is undone") {
  test::TempDir dir;
  ClusterSpec spec = slurm_spec(dir / "c");
  spec.slurm_timeout = std::chrono::milliseconds(600);
  const fs::path root = fs::absolute(dir / "c" / "slurm");
  FakeExecutor executor([](const LaunchSpec& launch) { return answer(launch, "down*"); });
  FakeSpawner spawner(dir / "c" / "state.json");
  make_socket_on_munged(spawner, root);
  const auto on_munged = spawner.on_spawn;
  spawner.on_spawn = [&](const LaunchSpec& spec, int pid) {
    on_munged(spec, pid);
    if (spec.argv[0] == "nsenter" && spec.argv[8] == "node2")
      std::ofstream(root / "slurmd-node2.log", std::ios::app)
          << "error: Unable to register: Zero Bytes were transmitted or received\n";
  };
  CHECK_THROWS_WITH_AS(
      cluster_up(spec, executor, &spawner),
      doctest::Contains(("node2 is not idle within 0.6 s (sinfo: down*)\n  the tail of " +
                         (root / "slurmd-node2.log").string() +
                         ":\n    error: Unable to register: Zero Bytes were transmitted or "
                         "received")
                            .c_str()),
      ClusterError);
  // All four daemons stopped, the namespaces and files removed.
  CHECK(spawner.alive.empty());
  CHECK(spawner.signals.size() == 4);
  CHECK_FALSE(fs::exists(dir / "c"));
}

TEST_CASE("emulated slurm: a daemon that stops at its start is named, and nothing is left") {
  test::TempDir dir;
  const ClusterSpec spec = slurm_spec(dir / "c");
  const fs::path root = fs::absolute(dir / "c" / "slurm");
  FakeExecutor executor([](const LaunchSpec& launch) { return answer(launch); });
  FakeSpawner spawner(dir / "c" / "state.json");
  spawner.on_spawn = [&](const LaunchSpec& spec, int pid) {
    if (spec.argv.front() == "munged") std::ofstream(root / "munge.socket") << "";
    if (spec.argv.front() == "slurmctld") {
      spawner.alive.erase(pid);
      std::ofstream(root / "slurmctld.log") << "fatal: This host (x) not a valid controller\n";
    }
  };
  CHECK_THROWS_WITH_AS(cluster_up(spec, executor, &spawner),
                       doctest::Contains(("slurmctld stopped at its start\n  the tail of " +
                                          (root / "slurmctld.log").string() +
                                          ":\n    fatal: This host (x) not a valid controller")
                                             .c_str()),
                       ClusterError);
  CHECK(spawner.spawned.size() == 2);  // no slurmd was started
  CHECK(spawner.alive.empty());
  CHECK_FALSE(fs::exists(dir / "c"));
}
