// Named links for planning without measuring the network (`scalebench model --network NAME`):
// latency and bus bandwidth of common interconnects, each with where its figure comes from.
// docs/scaling-model.md ("Network presets") lists them with their sources.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scaling/model.hpp"

namespace scalebench::scaling {

struct NetworkPreset {
  std::string name;         // "10gbe", "edr-ib", ...
  std::string description;  // what it is
  Link link;
  std::string source;  // where alpha and B come from, and which of them are assumed
};

const std::vector<NetworkPreset>& network_presets();
// The preset of this name; throws StatsError naming the known ones (and the closest) otherwise.
const NetworkPreset& network_preset(std::string_view name);

}  // namespace scalebench::scaling
