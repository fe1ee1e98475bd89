// Provenance (issue "Other people's trainers", item 5): what the instance collects through the
// executor (asked tools, a fake here), from the machine's files (test files here) and from the
// environment; what a run adds.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "orchestrator/provenance.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

std::map<std::string, std::string> as_map(const db::Provenance& entries) {
  return {entries.begin(), entries.end()};
}

FakeProcess answer(std::vector<std::string> lines, int exit_code = 0) {
  FakeProcess p;
  for (auto& line : lines) p.lines.push_back({0.01, Stream::Stdout, std::move(line)});
  p.exit_code = exit_code;
  return p;
}

}  // namespace

TEST_CASE("instance provenance: machine, tools the matrix uses, libraries, git, environment") {
  test::TempDir dir;
  std::ofstream(dir / "cpuinfo") << "processor\t: 0\nmodel name\t: Test CPU @ 2.0GHz\n";
  std::ofstream(dir / "meminfo") << "MemTotal:       1000 kB\nMemFree: 5 kB\n";
  std::filesystem::create_directories(dir / "cuda/include");
  std::ofstream(dir / "cuda/version.json")
      << R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})";
  std::ofstream(dir / "cuda/include/cudnn_version.h")
      << "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n";
  std::ofstream(dir / "cuda/include/nccl.h")
      << "#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n#define NCCL_PATCH 5\n";
  const auto script = dir / "train.py";
  std::ofstream(script) << "#!/usr/bin/env python3\nprint('hi')\n";

  const auto experiment = parse_experiment(R"({"name": "p", "conditions": [
      {"name": "ours", "launcher": "mpirun", "np": [2]},
      {"name": "torch", "launcher": "torchrun", "np": [2], "program": ")" +
                                               script.string() + R"("},
      {"name": "slurm", "launcher": "srun", "np": [2]}]})",
                                           dir / "p.json");
  const auto plans = expand_matrix(experiment, {"/opt/scalebench-train", false});
  FakeExecutor executor([](const LaunchSpec& spec) {
    const auto& argv = spec.argv;
    if (argv[0] == "mpirun") return answer({"mpirun (Open MPI) 4.1.4", "", "Report bugs"});
    if (argv[0] == "srun") return answer({}, 1);  // a broken tool: recorded, not fatal
    if (argv[0] == "/usr/bin/env" && argv[1] == "python3") return answer({"3.11.2", "1.13.0"});
    if (argv[0] == "git" && argv[3] == "rev-parse") return answer({"0123abcd"});
    if (argv[0] == "git") return answer({" M experiments/p.json"});
    return answer({}, 127);
  });
  ProvenanceSources sources;
  sources.cpuinfo = (dir / "cpuinfo").string();
  sources.meminfo = (dir / "meminfo").string();
  sources.cuda_root = (dir / "cuda").string();
  sources.environment = {"OMP_NUM_THREADS=2", "OMPI_MCA_btl=self,vader", "HOME=/root",
                         "SLURM_JOB_ID=42",   "NCCL_DEBUG=INFO",         "CUDA_VISIBLE_DEVICES=0,1",
                         "PATH=/usr/bin"};
  const auto p = as_map(collect_instance_provenance(experiment, plans, executor, sources));
  CHECK(p.at("cpu_model") == "Test CPU @ 2.0GHz");
  CHECK(p.at("memory_bytes") == "1024000");
  CHECK(p.at("mpi") == "mpirun (Open MPI) 4.1.4");
  CHECK(p.at("slurm").find("unknown (srun --version: exit code 1") == 0);
  CHECK(p.at("python") == "3.11.2 (/usr/bin/env python3)");
  CHECK(p.at("torch") == "1.13.0 (/usr/bin/env python3)");
  // No run uses our cuda backend: CUDA's libraries are not what these results depend on.
  CHECK_FALSE(p.contains("cuda"));
  CHECK_FALSE(p.contains("cudnn"));
  CHECK_FALSE(p.contains("nccl"));
  CHECK(p.at("git_commit") == "0123abcd-dirty");
  CHECK(p.at("env.OMP_NUM_THREADS") == "2");
  CHECK(p.at("env.OMPI_MCA_btl") == "self,vader");
  CHECK(p.at("env.SLURM_JOB_ID") == "42");
  CHECK(p.at("env.NCCL_DEBUG") == "INFO");
  CHECK(p.at("env.CUDA_VISIBLE_DEVICES") == "0,1");
  CHECK_FALSE(p.contains("env.HOME"));
  CHECK_FALSE(p.contains("env.PATH"));
  CHECK(p.contains("host"));
  CHECK(p.contains("os"));
  CHECK(p.contains("scalebench_version"));
  // Each tool asked once: mpirun, srun, the interpreter, git twice.
  CHECK(executor.launched().size() == 5);

  // A matrix with --backend cuda gets them.
  const auto gpu = parse_experiment(R"({"name": "g", "trainer": {"backend": "cuda"},
      "conditions": [{"name": "ours", "launcher": "single"}]})",
                                    dir / "g.json");
  const auto with_cuda = as_map(collect_instance_provenance(
      gpu, expand_matrix(gpu, {"/opt/scalebench-train", false}), executor, sources));
  CHECK(with_cuda.at("cuda") == "12.4.1");
  CHECK(with_cuda.at("cudnn") == "9.1.0");
  CHECK(with_cuda.at("nccl") == "2.21.5");
}

TEST_CASE("run provenance: the trainer's hosts, this host for one-node launchers, run env") {
  const auto experiment = parse_experiment(R"({"name": "p", "conditions": [
      {"name": "m", "launcher": "mpirun", "np": [2], "env": {"OMP_NUM_THREADS": "1", "X": "y"}},
      {"name": "t", "launcher": "torchrun", "np": [4]},
      {"name": "s", "launcher": "srun", "np": [2]}]})",
                                           "p.json");
  const auto plans = expand_matrix(experiment, {"/opt/t", false});
  RunAnalysis from_header;
  from_header.hosts = "node1:1,node2:1";
  from_header.rank_hosts = "node1,node2";
  CHECK(as_map(run_provenance(plans[0], from_header, "here")) ==
        std::map<std::string, std::string>{{"env.OMP_NUM_THREADS", "1"},
                                           {"env.PYTHONUNBUFFERED", "1"},
                                           {"hosts", "node1:1,node2:1"},
                                           {"rank_hosts", "node1,node2"}});
  CHECK(as_map(run_provenance(plans[1], {}, "here")).at("hosts") == "here:4");
  // srun without our header: where the ranks ran is not known, so nothing is claimed.
  CHECK_FALSE(as_map(run_provenance(plans[2], {}, "here")).contains("hosts"));
}
