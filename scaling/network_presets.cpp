#include "scaling/network_presets.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "util/text.hpp"

namespace scalebench::scaling {

using namespace stats;  // the least squares, errors and distributions it fits with

// Bandwidths are bus bandwidths (nccl-tests busbw), bytes per second. Where no allreduce was
// published, the line rate is the figure (an upper bound: TCP and framing take a few percent).
// Latencies matter little at gradient sizes (docs/scaling-model.md shows by how much); where none
// was published the value is an assumption and says so.
const std::vector<NetworkPreset>& network_presets() {
  static const std::vector<NetworkPreset> presets = {
      {"10gbe",
       "10 Gigabit Ethernet, TCP",
       {30e-6, 1.25e9},
       "B: line rate 10 Gbit/s / 8 (derived, upper bound); alpha: assumed (kernel TCP)"},
      {"25gbe-roce",
       "25 Gigabit Ethernet with RoCE (Horovod's 512-GPU cluster)",
       {5e-6, 3.125e9},
       "B: line rate 25 Gbit/s / 8 (derived, upper bound); alpha: assumed"},
      {"40gbe",
       "40 Gigabit Ethernet, TCP",
       {30e-6, 5e9},
       "B: line rate 40 Gbit/s / 8 (derived, upper bound); alpha: assumed (kernel TCP)"},
      {"edr-ib",
       "EDR InfiniBand, one 100 Gbit/s adapter per node",
       {1e-6, 12.2e9},
       "B: 12.2 GB/s NCCL allreduce busbw over one 100 Gbit/s adapter (NVIDIA, nccl-tests "
       "issue 29); alpha: assumed"},
      {"edr-ib-x4",
       "EDR InfiniBand, four 100 Gbit/s adapters per node (DGX-1)",
       {1e-6, 48e9},
       "B: 48 GB/s NCCL allreduce busbw of a DGX-1 with 4 adapters (NVIDIA, nccl-tests issue "
       "29); alpha: assumed"},
      {"hdr-ib",
       "HDR InfiniBand, one 200 Gbit/s adapter per node",
       {1e-6, 24.4e9},
       "B: 2 x the EDR busbw (derived from the 200 vs 100 Gbit/s line rates); alpha: assumed "
       "(adapter latency under 0.6 us, ConnectX-6 data sheet)"},
      {"pcie3",
       "PCIe 3.0 x16 between GPUs of one node",
       {5e-6, 12e9},
       "B: assumed, about 75% of the 15.75 GB/s line rate; alpha: assumed"},
      {"nvlink-v100",
       "NVLink 2 between V100s of one node",
       {2e-6, 130e9},
       "B: assumed, about 85% of 150 GB/s per direction (6 links x 25 GB/s, nvidia.com); "
       "no published allreduce figure was found; alpha: assumed"},
      {"nvlink-a100",
       "NVLink 3 between A100s of one node (DGX A100)",
       {2e-6, 230e9},
       "B: about 230 GB/s NCCL allreduce busbw (NVIDIA, nccl-tests issue 149); alpha: assumed"},
  };
  return presets;
}

const NetworkPreset& network_preset(std::string_view name) {
  const auto& presets = network_presets();
  const auto it = std::find_if(presets.begin(), presets.end(),
                               [&](const NetworkPreset& p) { return p.name == name; });
  if (it != presets.end()) return *it;
  std::vector<std::string> names;
  for (const auto& p : presets) names.push_back(p.name);
  const auto suggestion = util::closest_match(name, names);
  throw StatsError(fmt::format("unknown network preset '{}'{} (known: {})", name,
                               suggestion ? fmt::format(", did you mean '{}'?", *suggestion) : "",
                               fmt::join(names, ", ")));
}

}  // namespace scalebench::scaling
