// What results depend on besides the experiment file: the machine, the MPI and library versions,
// the git commit of the experiment file, the environment (docs/database.md, "provenance").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "db/database.hpp"
#include "orchestrator/executor.hpp"
#include "orchestrator/experiment.hpp"
#include "orchestrator/run_analysis.hpp"

namespace scalebench::orchestrator {

// This host's name (gethostname), "unknown-host" when it has none.
std::string local_host_name();

// Environment variables that change results and are stored as provenance ("env.NAME"): OMP_*,
// OMPI_MCA_*, NCCL_*, CUDA_VISIBLE_DEVICES, SLURM_*, and the few others listed in the .cpp.
bool is_provenance_variable(std::string_view name);

// How a program is started by an interpreter: {"/usr/bin/python3"} for a script whose first line
// is "#!/usr/bin/python3", {"/usr/bin/env", "python3"} for "#!/usr/bin/env python3", the program
// itself for python*; else empty.
std::vector<std::string> python_of(const std::string& program);

// Where the collector reads the machine; tests point these at files of their own.
struct ProvenanceSources {
  std::string cpuinfo = "/proc/cpuinfo";
  std::string meminfo = "/proc/meminfo";
  std::string cuda_root = "/usr/local/cuda";
  std::vector<std::string> environment;  // NAME=value; empty: the process's own environment
};

// The instance's provenance, collected once before its first run: host, os, cpu_model,
// cpu_count, memory_bytes, scalebench_version, mpi / slurm / python / torch versions for the
// launchers and programs the matrix uses (asked with `--version` and the like through
// `executor`, 10 s each; a tool that fails is recorded as such, never fatal), GPUs and
// CUDA/cuDNN/NCCL versions when present, git_commit of the experiment file's repository, and
// env.NAME for the provenance variables of scalebench's environment.
db::Provenance collect_instance_provenance(const Experiment& experiment,
                                           const std::vector<RunPlan>& plans, Executor& executor,
                                           const ProvenanceSources& sources = {});

// A run's own provenance: hosts (from our trainer's header, "node1:4,node2:4"; for a one-node
// launcher, this host), and env.NAME for the provenance variables the run was given.
db::Provenance run_provenance(const RunPlan& plan, const RunAnalysis& analysis,
                              const std::string& local_host);

}  // namespace scalebench::orchestrator
