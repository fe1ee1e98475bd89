// The backward pass of a model::Graph, written once for every backend (the CPU's
// trainer/cpu/network.cpp and the CUDA one's trainer/cuda/network.cpp only run the operations).
//
// Order and accumulation (BackwardSchedule): nodes run backward from the last to node 1; a node
// read by several others receives one share of its loss gradient from each, in that order: the
// first share is written straight into its delta, each later one into its partial and added to
// the delta at once. After a node with parameters, every gradient from its offset on is final
// (Model::set_gradients_ready).
//
// Buffer liveness (plan_backward_buffers): node i's delta lives from the backward of its first
// consumer (in reverse order) to its own backward, so deltas that are never alive together share
// a buffer; a node read by two or more consumers also needs a partial, one per kind of buffer.
// "Same kind" is the backend's: the CPU's oneDNN memory descriptor (blocked layouts never mix),
// the CUDA backend's element count (everything is packed NCHW).
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "trainer/model/ops.hpp"

namespace scalebench::trainer::model {

// Where one consumer's backward writes its share of an input's loss gradient.
enum class Share {
  none,     // the input is the model's (node 0): no gradient is needed
  delta,    // the first share: straight into the input's delta
  partial,  // a later share: into the input's partial, then added to its delta
};

class BackwardSchedule {
 public:
  // Throws std::invalid_argument for a graph without an operation, or with a node other than the
  // last that nothing reads (its gradient would never be written).
  explicit BackwardSchedule(const Graph& graph);
  // Where node i's backward writes its share for its k-th input (graph.nodes()[i].inputs[k]).
  Share share(std::size_t node, std::size_t k) const { return shares_[node][k]; }
  // How many nodes read node i.
  std::size_t consumers(std::size_t node) const { return consumers_[node]; }
  // After node i's backward, the gradients from this offset to the end of the flat buffer are
  // final; nothing for a node without parameters.
  std::optional<std::size_t> gradients_ready(std::size_t node) const { return ready_[node]; }

 private:
  std::vector<std::vector<Share>> shares_;
  std::vector<std::size_t> consumers_;
  std::vector<std::optional<std::size_t>> ready_;
};

struct BackwardBuffers {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::size_t> delta;     // node i's buffer (none for node 0, the input)
  std::vector<std::size_t> partial;   // node i's partial buffer, none unless read twice or more
  std::vector<std::size_t> sized_by;  // buffer b takes the size (and layout) of this node's
};

// `inputs(i)`: the nodes node i reads (indices below i); `key(i)`: the kind of node i's buffer
// (equality-comparable). Node n - 1 (the logits) gets its buffer first: the loss gradient.
template <typename Inputs, typename KeyOf>
BackwardBuffers plan_backward_buffers(std::size_t n, Inputs inputs, KeyOf key) {
  using Key = decltype(key(std::size_t{0}));
  BackwardBuffers plan;
  plan.delta.assign(n, BackwardBuffers::none);
  plan.partial.assign(n, BackwardBuffers::none);
  std::vector<std::pair<Key, std::vector<std::size_t>>> free_lists;
  auto free_list = [&](const Key& k) -> std::vector<std::size_t>& {
    for (auto& [kind, list] : free_lists)
      if (kind == k) return list;
    return free_lists.emplace_back(k, std::vector<std::size_t>()).second;
  };
  auto take = [&](std::size_t j) {
    std::vector<std::size_t>& list = free_list(key(j));
    if (list.empty()) {
      plan.delta[j] = plan.sized_by.size();
      plan.sized_by.push_back(j);
    } else {
      plan.delta[j] = list.back();
      list.pop_back();
    }
  };
  if (n < 2) return plan;
  std::vector<std::size_t> consumers(n, 0);
  for (std::size_t i = 1; i < n; ++i)
    for (int j : inputs(i)) ++consumers[static_cast<std::size_t>(j)];
  take(n - 1);
  for (std::size_t i = n; i-- > 1;) {
    for (int j : inputs(i)) {
      const auto k = static_cast<std::size_t>(j);
      if (k != 0 && plan.delta[k] == BackwardBuffers::none) take(k);
    }
    free_list(key(i)).push_back(plan.delta[i]);
  }
  std::vector<std::pair<Key, std::size_t>> scratch;  // one per kind: a share is added at once
  for (std::size_t i = 1; i < n; ++i) {
    if (consumers[i] < 2) continue;
    std::size_t buffer = BackwardBuffers::none;
    for (const auto& [kind, b] : scratch)
      if (kind == key(i)) buffer = b;
    if (buffer == BackwardBuffers::none) {
      buffer = plan.sized_by.size();
      plan.sized_by.push_back(i);
      scratch.emplace_back(key(i), buffer);
    }
    plan.partial[i] = buffer;
  }
  return plan;
}

// The same for a graph's nodes.
template <typename KeyOf>
BackwardBuffers plan_backward_buffers(const Graph& graph, KeyOf key) {
  const std::vector<Node>& nodes = graph.nodes();
  return plan_backward_buffers(
      nodes.size(), [&](std::size_t i) -> const std::vector<int>& { return nodes[i].inputs; }, key);
}

}  // namespace scalebench::trainer::model
