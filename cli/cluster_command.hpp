// `scalebench cluster up|status|down`: many nodes on one machine (orchestrator/emulated_cluster).
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "cli/commands.hpp"

namespace scalebench::cli {

struct ClusterCommand {
  std::string action;  // up | status | down
  std::string name = "sb";
  int nodes = 2;
  int slots = 1;
  std::optional<double> rate_mbit;
  std::optional<double> delay_ms;
  std::string link;         // a network preset's name (`scalebench model --network`), scaled
  double link_scale = 100;  // the preset's bandwidth divided by this, its latency multiplied
  std::string directory;    // default /run/scalebench/cluster-<name>
  int subnet = 213;         // the nodes are 10.<subnet>.0.<k>
  bool slurm = false;       // also start a Slurm across the nodes (slurmctld here, slurmd on each)
};
void declare_cluster_options(CLI::App& app, ClusterCommand& options);
int cluster_command(const ClusterCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
