#include "cli/cluster_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <string_view>

#include "cli/numeric_flags.hpp"
#include "orchestrator/emulated_cluster.hpp"
#include "orchestrator/executor.hpp"
#include "orchestrator/experiment.hpp"
#include "scaling/network_presets.hpp"

namespace scalebench::cli {
namespace {

// A network preset run `scale` times slower: its bus bandwidth / scale as the link's rate, its
// latency x scale as the node-to-node delay, so a step's compute x scale keeps the preset's ratio
// of communication to computation (docs/cluster.md, "Links from presets").
orchestrator::LinkShape scaled_link(const std::string& name, double scale, std::string& note) {
  const scaling::NetworkPreset& preset = scaling::network_preset(name);
  orchestrator::LinkShape link;
  link.rate_mbit = preset.link.bandwidth * 8 / 1e6 / scale;
  link.delay_ms = preset.link.alpha * 1e3 * scale;
  note =
      fmt::format("\n  --link {}: {} ({:g} GB/s, {:g} us) / {:g}", preset.name, preset.description,
                  preset.link.bandwidth / 1e9, preset.link.alpha * 1e6, scale);
  return link;
}

}  // namespace

void declare_cluster_options(CLI::App& app, ClusterCommand& options) {
  app.add_option("action", options.action, "up, status or down")
      ->required()
      ->check(CLI::IsMember({"up", "status", "down"}));
  app.add_option("--name", options.name, "The cluster's name: 1-6 of a-z, 0-9")
      ->capture_default_str();
  app.add_option("--nodes", options.nodes, "Nodes (network namespaces), 1-64")
      ->transform(integer_in(1, 64))
      ->capture_default_str();
  app.add_option("--slots", options.slots, "Ranks per node in the hostfile")
      ->transform(integer_in(1, 1024))
      ->capture_default_str();
  app.add_option("--rate", options.rate_mbit, "Each link's rate in Mbit/s (netem)")
      ->transform(real_in({0, 1e6, true, false}));
  app.add_option("--delay", options.delay_ms, "One-way node-to-node delay in ms")
      ->transform(real_in({0, 1e4, false, false}));
  auto* link =
      app.add_option("--link", options.link,
                     "A network preset (10gbe, edr-ib, ...: `scalebench model --network`), "
                     "its bandwidth / --link-scale and latency x --link-scale")
          ->excludes("--rate", "--delay");
  app.add_option("--link-scale", options.link_scale,
                 "How much slower than the preset the links run (2 cores cannot drive "
                 "10 Gbit/s through tc)")
      ->transform(real_in({1, 1e6, false, false}))
      ->capture_default_str()
      ->needs(link);
  app.add_option("--dir", options.directory,
                 "Where its state, hostfile, env and rsh-agent go (default "
                 "/run/scalebench/cluster-NAME)");
  app.add_option("--subnet", options.subnet, "The nodes are 10.SUBNET.0.K/24")
      ->transform(integer_in(0, 255))
      ->capture_default_str();
  app.add_flag("--slurm", options.slurm,
               "Also a Slurm: munged and slurmctld here, slurmd -N nodeK on each node, "
               "--slots CPUs each; SLURM_CONF in the env file");
}

int cluster_command(const ClusterCommand& options, std::ostream& out, std::ostream&) {
  using namespace orchestrator;
  const auto directory = options.directory.empty() ? default_cluster_directory(options.name)
                                                   : std::filesystem::path(options.directory);
  if (options.action != "status" && ::geteuid() != 0)
    throw ClusterError(fmt::format(
        "cluster {}: needs root (network namespaces, veth links and tc need CAP_NET_ADMIN and "
        "CAP_SYS_ADMIN); run it as root",
        options.action));
  ProcessExecutor executor;
  if (options.action == "up") {
    ClusterSpec spec;
    spec.name = options.name;
    spec.nodes = options.nodes;
    spec.slots = options.slots;
    spec.directory = directory;
    spec.subnet = options.subnet;
    spec.slurm = options.slurm;
    if (options.rate_mbit || options.delay_ms) {
      if (!options.rate_mbit)
        throw ClusterError("--delay needs --rate: give the link both (e.g. --rate 200 --delay 1)");
      spec.link = LinkShape{*options.rate_mbit, options.delay_ms.value_or(0)};
    }
    std::string link_note;
    if (!options.link.empty()) {
      spec.link = scaled_link(options.link, options.link_scale, link_note);
    }
    ClusterPlan plan;
    try {
      plan = cluster_up(spec, executor);
    } catch (const ClusterError& error) {
      // A preset's latency needs netem; without it the rate alone is still the preset's, scaled.
      if (options.link.empty() || !spec.link || spec.link->delay_ms == 0 ||
          std::string_view(error.what()).find("no netem") == std::string_view::npos)
        throw;
      link_note += fmt::format(
          "\n  its latency ({:g} ms scaled) is not emulated: this kernel has no netem "
          "(sch_netem); the links add only this machine's own latency",
          spec.link->delay_ms);
      spec.link->delay_ms = 0;
      plan = cluster_up(spec, executor);
    }
    fmt::print(out, "cluster {} up: {} nodes", plan.spec.name, plan.nodes.size());
    if (plan.spec.link)
      fmt::print(out, ", links {} Mbit/s and {} ms node to node", plan.spec.link->rate_mbit,
                 plan.spec.link->delay_ms);
    fmt::print(out, "{}", link_note);
    fmt::print(out,
               "\n  source {0}/env; mpirun --hostfile {0}/hostfile ...\n"
               "  {0}/rsh-agent node1 COMMAND   runs COMMAND on node1\n",
               plan.spec.directory.string());
    if (plan.spec.slurm)
      fmt::print(out,
                 "  Slurm: every node idle; with the env sourced (SLURM_CONF), e.g.\n"
                 "  srun -N {} --ntasks-per-node 1 hostname; sbatch, salloc, sinfo\n",
                 plan.nodes.size());
    // The command that takes it down, as it must be typed: with --dir where it is not the default.
    const bool default_dir =
        plan.spec.directory == orchestrator::default_cluster_directory(plan.spec.name);
    fmt::print(
        out, "  scalebench cluster down --name {}{}\n", plan.spec.name,
        default_dir ? "" : " --dir " + orchestrator::shell_join({plan.spec.directory.string()}));
    return 0;
  }
  if (options.action == "down") {
    const auto removed = cluster_down(directory, executor);
    if (removed.empty())
      fmt::print(out, "no cluster at {}: nothing to remove\n", directory.string());
    else
      fmt::print(out, "cluster at {} removed: {} daemons, namespaces, links and files\n",
                 directory.string(), removed.size());
    return 0;
  }
  out << cluster_status(directory, executor);
  return 0;
}

}  // namespace scalebench::cli
