#include "trainer/model/backward.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "trainer/model/parameters.hpp"

namespace scalebench::trainer::model {

BackwardSchedule::BackwardSchedule(const Graph& graph) {
  const std::vector<Node>& nodes = graph.nodes();
  const std::size_t n = nodes.size();
  if (n < 2) throw std::invalid_argument("a network needs at least one layer");
  consumers_.assign(n, 0);
  for (const Node& node : nodes)
    for (int j : node.inputs) ++consumers_[static_cast<std::size_t>(j)];
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (consumers_[i] == 0) {
      throw std::invalid_argument(
          fmt::format("graph node {} is never used: only the last node may be an output", i));
    }
  }
  // The loss gradient is written into the last node's delta before backward starts; every other
  // delta by the first share that reaches it.
  std::vector<char> written(n, 0);
  written[n - 1] = 1;
  shares_.resize(n);
  for (std::size_t i = n; i-- > 1;) {
    for (int j : nodes[i].inputs) {
      const auto k = static_cast<std::size_t>(j);
      if (k == 0) {
        shares_[i].push_back(Share::none);
      } else if (!written[k]) {
        written[k] = 1;
        shares_[i].push_back(Share::delta);
      } else {
        shares_[i].push_back(Share::partial);
      }
    }
  }
  const ParameterLayout layout = parameter_layout(graph);
  ready_.resize(n);
  for (std::size_t i = 1; i < n; ++i) {
    if (nodes[i].kind == Node::Kind::op && parameter_count(nodes[i].op) > 0)
      ready_[i] = layout.offsets[i];
  }
}

}  // namespace scalebench::trainer::model
