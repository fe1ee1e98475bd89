// orchestrator/emulated_cluster (issue 24, item 1) through the fake executor: the names and
// addresses, every ip/tc command in order, the files, state recorded before each next step, and
// a failure half-way undone. The real thing (root, namespaces): tests/cli/test_cluster_cli.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "orchestrator/emulated_cluster.hpp"
#include "orchestrator/executor.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;
namespace fs = std::filesystem;

namespace {

std::string command_of(const LaunchSpec& spec) {
  std::string out;
  for (const auto& a : spec.argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::vector<std::string> commands(const FakeExecutor& executor) {
  std::vector<std::string> out;
  for (const auto& spec : executor.launched()) out.push_back(command_of(spec));
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("emulated cluster: names and addresses, and bad specs refused naming the field") {
  ClusterSpec spec;
  spec.name = "t2";
  spec.nodes = 3;
  const auto plan = plan_cluster(spec);
  CHECK(plan.bridge == "sbt2br");
  REQUIRE(plan.nodes.size() == 3);
  CHECK(plan.nodes[2].name == "node3");
  CHECK(plan.nodes[2].netns == "sb-t2-node3");
  CHECK(plan.nodes[2].address == "10.213.0.3");
  CHECK(plan.nodes[2].host_veth == "sbt2h3");  // within IFNAMSIZ (15) for any name and node
  CHECK(plan.spec.directory == fs::path("/run/scalebench/cluster-t2"));
  for (const char* bad : {"", "Upper", "toolong", "a-b", "a b"}) {
    CAPTURE(bad);
    spec.name = bad;
    CHECK_THROWS_WITH_AS(plan_cluster(spec), doctest::Contains("--name"), ClusterError);
  }
  spec.name = "ok";
  spec.nodes = 0;
  CHECK_THROWS_WITH_AS(plan_cluster(spec), doctest::Contains("--nodes 0"), ClusterError);
  spec.nodes = 2;
  spec.link = LinkShape{0, 1};
  CHECK_THROWS_WITH_AS(plan_cluster(spec), doctest::Contains("the link"), ClusterError);
  spec.link.reset();
  // The directory goes into a shell script and configuration files, and munge's socket into a
  // 107-byte address: a space, a quote or a too-long path is refused, naming the character.
  spec.directory = "/tmp/my cluster";
  CHECK_THROWS_WITH_AS(plan_cluster(spec), doctest::Contains("the character ' ' at 8"),
                       ClusterError);
  spec.directory = "/tmp/a'b;rm";
  CHECK_THROWS_WITH_AS(plan_cluster(spec), doctest::Contains("--dir '/tmp/a'b;rm'"), ClusterError);
  spec.directory = "/tmp/" + std::string(90, 'd');
  CHECK_THROWS_WITH_AS(plan_cluster(spec), doctest::Contains("a Unix socket's address holds 107"),
                       ClusterError);
  spec.directory = "relative/c";  // made absolute
  CHECK(plan_cluster(spec).spec.directory == fs::current_path() / "relative/c");
}

TEST_CASE("emulated cluster: up runs every command, writes the files, down removes all of it") {
  test::TempDir dir;
  ClusterSpec spec;
  spec.name = "t3";
  spec.nodes = 2;
  spec.slots = 2;
  spec.link = LinkShape{200, 0};
  spec.directory = dir / "c";
  FakeExecutor executor([](const LaunchSpec&) { return FakeProcess{}; });
  cluster_up(spec, executor);
  const auto up = commands(executor);
  CHECK(up.front() == "ip link add sbt3br type bridge");
  CHECK(has(up, "ip addr add 10.213.0.254/24 dev sbt3br"));
  CHECK(has(up, "ip netns add sb-t3-node2"));
  CHECK(has(up, "ip link add sbt3h2 type veth peer name sbt3n2"));
  CHECK(has(up, "ip -n sb-t3-node2 addr add 10.213.0.2/24 dev eth0"));
  // Both directions of each link: a token bucket of 4 ms at 200 Mbit/s (100 kB).
  CHECK(has(up, "tc qdisc add dev sbt3h1 root tbf rate 200mbit burst 100000 latency 100ms"));
  CHECK(has(up,
            "ip netns exec sb-t3-node1 tc qdisc add dev eth0 root tbf rate 200mbit burst "
            "100000 latency 100ms"));
  CHECK(read_file(spec.directory / "hostfile") == "10.213.0.1 slots=2\n10.213.0.2 slots=2\n");
  const std::string agent = read_file(spec.directory / "rsh-agent");
  CHECK(agent.find("10.213.0.2|node2) ns=sb-t3-node2; node=node2 ;;") != std::string::npos);
  CHECK((fs::status(spec.directory / "rsh-agent").permissions() & fs::perms::owner_exec) !=
        fs::perms::none);
  const std::string env = read_file(spec.directory / "env");
  CHECK(env.find("export OMPI_MCA_plm_rsh_agent=") != std::string::npos);
  // Plain sends: Open MPI's emulated put makes a link's two directions take turns.
  CHECK(env.find("export OMPI_MCA_btl_tcp_flags=send,inplace,need-ack,need-csum\n") !=
        std::string::npos);
  // gloo (PyTorch) takes its address from eth0, not from the node's unresolvable hostname; no
  // SLURM_CONF without --slurm.
  CHECK(env.find("export GLOO_SOCKET_IFNAME=eth0\n") != std::string::npos);
  CHECK(env.find("SLURM_CONF") == std::string::npos);
  // Ranks yield while they wait: the nodes share this machine's cores with the kernel's network.
  CHECK(env.find("export OMPI_MCA_mpi_yield_when_idle=1\n") != std::string::npos);
  // A lost node is noticed in seconds (keepalive after 4 s idle, 3 probes 2 s apart).
  CHECK(env.find("export OMPI_MCA_oob_tcp_keepalive_time=4\n") != std::string::npos);
  // A second up of the same cluster is refused.
  CHECK_THROWS_WITH_AS(cluster_up(spec, executor), doctest::Contains("is already up"),
                       ClusterError);

  FakeExecutor remover([](const LaunchSpec&) { return FakeProcess{}; });
  const auto removed = cluster_down(spec.directory, remover);
  const auto down = commands(remover);
  CHECK(has(down, "ip netns del sb-t3-node1"));
  CHECK(has(down, "ip netns del sb-t3-node2"));
  CHECK(has(down, "ip link del sbt3br"));
  CHECK_FALSE(fs::exists(spec.directory));
  // Again: nothing there, nothing done.
  FakeExecutor idle([](const LaunchSpec&) { return FakeProcess{}; });
  CHECK(cluster_down(spec.directory, idle).empty());
  CHECK(idle.launched().empty());
}

TEST_CASE("emulated cluster: a command failing half-way names it and undoes what was made") {
  test::TempDir dir;
  ClusterSpec spec;
  spec.name = "t4";
  spec.nodes = 3;
  spec.directory = dir / "c";
  FakeExecutor executor([](const LaunchSpec& launch) {
    FakeProcess p;
    if (command_of(launch) == "ip netns add sb-t4-node2") {
      p.exit_code = 1;
      p.lines.push_back({0, Stream::Stderr, "Cannot create namespace file: File exists"});
    }
    return p;
  });
  CHECK_THROWS_WITH_AS(
      cluster_up(spec, executor),
      doctest::Contains("`ip netns add sb-t4-node2` failed: exit code 1: Cannot create namespace "
                        "file: File exists"),
      ClusterError);
  const auto all = commands(executor);
  // What was made before the failure is removed (node 1 and the bridge), nothing else is touched.
  CHECK(has(all, "ip netns del sb-t4-node1"));
  CHECK(has(all, "ip link del sbt4h1"));
  CHECK(has(all, "ip link del sbt4br"));
  CHECK_FALSE(has(all, "ip netns del sb-t4-node2"));
  CHECK_FALSE(fs::exists(spec.directory / "state.json"));
}

TEST_CASE("emulated cluster: what down cannot remove stays recorded, and a second down finishes") {
  test::TempDir dir;
  ClusterSpec spec;
  spec.name = "t5";
  spec.nodes = 2;
  spec.directory = dir / "c";
  FakeExecutor maker([](const LaunchSpec&) { return FakeProcess{}; });
  cluster_up(spec, maker);
  // Node 2's namespace will not go: its delete fails and it is still listed.
  FakeExecutor stuck([](const LaunchSpec& launch) {
    FakeProcess p;
    const std::string command = command_of(launch);
    if (command == "ip netns del sb-t5-node2") p.exit_code = 1;
    if (command == "ip netns list") p.lines.push_back({0, Stream::Stdout, "sb-t5-node2 (id: 1)"});
    return p;
  });
  CHECK_THROWS_WITH_AS(cluster_down(spec.directory, stuck),
                       doctest::Contains("could not remove netns sb-t5-node2; they stay recorded"),
                       ClusterError);
  const std::string state = read_file(spec.directory / "state.json");
  CHECK(state.find("sb-t5-node2") != std::string::npos);
  CHECK(state.find("\"name\": \"sbt5br\"") == std::string::npos);  // the bridge went
  CHECK(fs::exists(spec.directory / "hostfile"));
  FakeExecutor remover([](const LaunchSpec&) { return FakeProcess{}; });
  const auto removed = cluster_down(spec.directory, remover);
  CHECK(commands(remover).front() == "ip netns pids sb-t5-node2");
  CHECK(has(commands(remover), "ip netns del sb-t5-node2"));
  CHECK_FALSE(has(commands(remover), "ip netns del sb-t5-node1"));
  CHECK_FALSE(fs::exists(spec.directory));
}
