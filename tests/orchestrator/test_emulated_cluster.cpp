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
  // First what is in use here (nothing), then the bridge.
  CHECK(up[0] == "ip -o -4 addr show");
  CHECK(up[1] == "ip -o link show");
  CHECK(up[2] == "ip netns list");
  CHECK(up[3] == "ip link add sbt3br type bridge");
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

TEST_CASE("emulated cluster: a subnet or name another cluster uses is refused before anything") {
  test::TempDir dir;
  ClusterSpec spec;
  spec.name = "t6";
  spec.directory = dir / "c";
  const auto answering = [](std::string command, std::string line) {
    return FakeExecutor([command, line](const LaunchSpec& launch) {
      FakeProcess p;
      if (command_of(launch) == command) p.lines.push_back({0, Stream::Stdout, line});
      return p;
    });
  };
  auto subnet = answering("ip -o -4 addr show",
                          "7: sbxxbr    inet 10.213.0.254/24 scope global sbxxbr\\       "
                          "valid_lft forever preferred_lft forever");
  CHECK_THROWS_WITH_AS(cluster_up(spec, subnet),
                       "--subnet 213: 10.213.0.0/24 is already in use here (sbxxbr has "
                       "10.213.0.254/24: cluster 'xx'); choose another --subnet",
                       ClusterError);
  CHECK(commands(subnet).size() == 1);
  CHECK_FALSE(fs::exists(spec.directory));
  // Another subnet is fine as far as addresses go; a leftover veth of this name is not.
  auto veth = answering("ip -o link show",
                        "9: sbt6h1@if8: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue");
  CHECK_THROWS_WITH_AS(cluster_up(spec, veth), doctest::Contains("the interface sbt6h1 already"),
                       ClusterError);
  auto netns = answering("ip netns list", "sb-t6-node2 (id: 3)");
  CHECK_THROWS_WITH_AS(cluster_up(spec, netns),
                       doctest::Contains("the network namespace sb-t6-node2 already exists"),
                       ClusterError);
  CHECK_FALSE(fs::exists(spec.directory));
}

TEST_CASE("emulated cluster: each link and namespace is recorded before it is made") {
  // A kill -9 of `up` between making a veth pair and recording it leaked the pair: `down` said
  // it was done and the next `up` failed. Now state.json names each before its command runs.
  test::TempDir dir;
  ClusterSpec spec;
  spec.name = "t8";
  spec.nodes = 2;
  spec.directory = dir / "c";
  std::vector<std::string> unrecorded;
  FakeExecutor executor([&](const LaunchSpec& launch) {
    const std::string command = command_of(launch);
    const std::string state = read_file(spec.directory / "state.json");
    for (const char* made : {"ip link add ", "ip netns add "})
      if (command.starts_with(made)) {
        const std::string name = command.substr(std::string(made).size())
                                     .substr(0, command.substr(std::string(made).size()).find(' '));
        if (state.find("\"" + name + "\"") == std::string::npos) unrecorded.push_back(name);
      }
    return FakeProcess{};
  });
  cluster_up(spec, executor);
  CHECK(unrecorded.empty());
  FakeExecutor remover([](const LaunchSpec&) { return FakeProcess{}; });
  cluster_down(spec.directory, remover);
}

TEST_CASE("emulated cluster: down removes only names up makes, files never through a link") {
  test::TempDir dir;
  const auto directory = dir / "c";
  fs::create_directories(directory);
  for (const std::string planted :
       {R"({"kind": "link", "name": "eth0"})", R"({"kind": "netns", "name": "sb-t9-node1x"})",
        R"({"kind": "netns", "name": "production"})", R"({"kind": "dir", "name": "/etc"})",
        R"({"kind": "link", "name": "sbothbr"})"}) {
    CAPTURE(planted);
    std::ofstream(directory / "state.json")
        << R"({"name": "t9", "created": [{"kind": "link", "name": "sbt9br"}, )" << planted << "]}";
    FakeExecutor remover([](const LaunchSpec&) { return FakeProcess{}; });
    CHECK_THROWS_WITH_AS(cluster_down(directory, remover),
                         doctest::Contains("which `cluster up` of 't9' never makes; nothing "
                                           "removed"),
                         ClusterError);
    CHECK(remover.launched().empty());
  }
  // A bridge that is not the cluster's, or a state that is not up's at all.
  for (const std::string state :
       {R"({"name": "t9", "bridge": "eth0", "created": []})", R"([1, 2])",
        R"({"name": 7, "created": []})", R"({"name": "t9", "created": {"kind": "link"}})"}) {
    CAPTURE(state);
    std::ofstream(directory / "state.json") << state;
    FakeExecutor remover([](const LaunchSpec&) { return FakeProcess{}; });
    CHECK_THROWS_WITH_AS(cluster_down(directory, remover), doctest::Contains("nothing removed"),
                         ClusterError);
    CHECK(remover.launched().empty());
  }
  // Symlinks planted in --dir, at the files' names and at the old temporary name: never
  // written through (as root they would overwrite any file).
  const auto victim = dir / "victim";
  std::ofstream(victim) << "precious\n";
  fs::remove(directory / "state.json");
  fs::create_symlink(victim, directory / "state.json.tmp");
  ClusterSpec spec;
  spec.name = "t9";
  spec.directory = directory;
  FakeExecutor maker([](const LaunchSpec&) { return FakeProcess{}; });
  cluster_up(spec, maker);
  CHECK(read_file(victim) == "precious\n");
  CHECK(fs::is_regular_file(fs::symlink_status(directory / "state.json")));
  FakeExecutor remover([](const LaunchSpec&) { return FakeProcess{}; });
  cluster_down(directory, remover);
  fs::create_symlink(victim, directory / "hostfile");
  FakeExecutor again([](const LaunchSpec&) { return FakeProcess{}; });
  CHECK_THROWS_WITH_AS(cluster_up(spec, again), doctest::Contains("a symbolic link"), ClusterError);
  CHECK(read_file(victim) == "precious\n");
}
