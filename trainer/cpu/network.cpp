#include "trainer/cpu/network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "trainer/model/liveness.hpp"

namespace scalebench::trainer::cpu {

// ---- Graph ----

int Graph::append(Node node) {
  const int index = static_cast<int>(nodes_.size());
  for (int i : node.inputs) {
    if (i < 0 || i >= index) {
      throw std::invalid_argument(
          fmt::format("graph node {} reads node {}, which does not come before it", index, i));
    }
  }
  nodes_.push_back(std::move(node));
  return index;
}

int Graph::layer(int from, std::unique_ptr<Layer> layer) {
  Node node;
  node.kind = Node::Kind::layer;
  node.layer = std::move(layer);
  node.inputs = {from};
  return append(std::move(node));
}

int Graph::add(int a, int b) {
  Node node;
  node.kind = Node::Kind::add;
  node.inputs = {a, b};
  return append(std::move(node));
}

int Graph::concat(std::vector<int> inputs) {
  if (inputs.empty()) throw std::invalid_argument("concat needs at least one input");
  Node node;
  node.kind = Node::Kind::concat;
  node.inputs = std::move(inputs);
  return append(std::move(node));
}

// ---- Network ----

Network::Network(Graph graph, Dims input_shape, std::uint32_t seed,
                 const OptimizerOptions& optimizer)
    : graph_(std::move(graph)), input_shape_(std::move(input_shape)), lr_(optimizer.lr) {
  const std::vector<Node>& nodes = graph_.nodes();
  if (nodes.size() < 2) throw std::invalid_argument("a network needs at least one layer");
  consumers_.assign(nodes.size(), 0);
  parameter_offset_.assign(nodes.size(), 0);
  std::size_t total = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (int j : nodes[i].inputs) ++consumers_[static_cast<std::size_t>(j)];
    parameter_offset_[i] = total;
    if (nodes[i].layer) total += nodes[i].layer->parameter_count();
  }
  for (std::size_t i = 0; i + 1 < nodes.size(); ++i) {
    if (consumers_[i] == 0) {
      throw std::invalid_argument(
          fmt::format("graph node {} is never used: only the last node may be an output", i));
    }
  }
  parameters_.assign(total, 0.0f);
  gradients_.assign(total, 0.0f);
  optimizer_ = make_optimizer(optimizer, total);

  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Layer* layer = nodes[i].layer.get();
    if (layer == nullptr) continue;
    const std::size_t n = layer->parameter_count();
    layer->bind(std::span<float>(parameters_).subspan(parameter_offset_[i], n),
                std::span<float>(gradients_).subspan(parameter_offset_[i], n));
    layer->init(rng);
  }
}

std::vector<const Layer*> Network::layers() const {
  std::vector<const Layer*> out;
  for (const Node& node : graph_.nodes())
    if (node.layer) out.push_back(node.layer.get());
  return out;
}

Network::Plan& Network::plan(std::size_t batch) {
  auto it = plans_.find(batch);
  if (it != plans_.end()) return it->second;
  std::vector<Node>& nodes = graph_.nodes();
  Plan p;
  p.nodes.resize(nodes.size());
  p.activations.resize(nodes.size());
  Dims dims{static_cast<memory::dim>(batch)};
  dims.insert(dims.end(), input_shape_.begin(), input_shape_.end());
  p.nodes[0].dst = plain_desc(dims);
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    Node& node = nodes[i];
    NodePlan& np = p.nodes[i];
    auto src = [&](std::size_t k) -> const memory::desc& {
      return p.nodes[static_cast<std::size_t>(node.inputs[k])].dst;
    };
    try {
      switch (node.kind) {
        case Node::Kind::layer:
          np.layer = node.layer->plan(src(0));
          np.dst = np.layer->dst_desc();
          break;
        case Node::Kind::add:
          np.add = std::make_unique<AddPlan>(src(0), src(1));
          np.dst = np.add->dst_desc();
          break;
        case Node::Kind::concat: {
          std::vector<memory::desc> srcs;
          for (std::size_t k = 0; k < node.inputs.size(); ++k) srcs.push_back(src(k));
          np.concat = std::make_unique<ConcatPlan>(srcs);
          np.dst = np.concat->dst_desc();
          break;
        }
        case Node::Kind::input:
          throw std::logic_error("only node 0 is the input");
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format(
          "graph node {} ({}): {}", i, node.layer ? node.layer->kind() : "add/concat", e.what()));
    }
    p.buffers.emplace_back(np.dst.get_size());
    p.activations[i] = wrap(np.dst, p.buffers.back().data());
  }
  const memory::desc& out = p.nodes.back().dst;
  if (!is_plain(out) || out.dims().size() != 2) {
    throw std::logic_error("the last node of a model must give plain batch × classes logits");
  }
  p.probabilities.resize(float_count(out));
  return plans_.emplace(batch, std::move(p)).first->second;
}

BatchStats Network::forward(Plan& p, std::span<const float> images,
                            std::span<const std::int32_t> labels, std::size_t batch,
                            bool training) {
  const std::vector<Node>& nodes = graph_.nodes();
  p.activations[0] = wrap(p.nodes[0].dst, images.data());
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    NodePlan& np = p.nodes[i];
    auto in = [&](std::size_t k) -> const memory& {
      return p.activations[static_cast<std::size_t>(node.inputs[k])];
    };
    if (np.layer) {
      np.layer->forward(in(0), p.activations[i], training);
    } else if (np.add) {
      np.add->forward(in(0), in(1), p.activations[i]);
    } else {
      std::vector<memory> srcs;
      for (std::size_t k = 0; k < node.inputs.size(); ++k) srcs.push_back(in(k));
      np.concat->forward(srcs, p.activations[i]);
    }
  }
  stream().wait();
  const memory& out = p.activations.back();
  const auto classes = static_cast<std::size_t>(out.get_desc().dims()[1]);
  logits_ = std::span<const float>(data_of(out), batch * classes);
  const LossResult loss =
      softmax_cross_entropy_forward(logits_, labels, batch, classes, p.probabilities);
  return BatchStats{loss.loss_sum, loss.correct};
}

void Network::backward(Plan& p) {
  const std::vector<Node>& nodes = graph_.nodes();
  const std::size_t n = nodes.size();
  // A node read by several others receives one share of its gradient from each: the first
  // share (in backward order) is written straight into its delta, later ones into `partials`
  // and added. Node 0 (the input) needs no gradient.
  std::vector<char> written(n, 0);
  written[n - 1] = 1;  // the loss gradient, written by the caller
  auto target = [&](int j) -> memory {
    const auto k = static_cast<std::size_t>(j);
    if (k == 0) return memory();
    return written[k] ? p.partials[k] : p.deltas[k];
  };
  auto settle = [&](int j) {
    const auto k = static_cast<std::size_t>(j);
    if (k == 0) return;
    if (!written[k]) {
      written[k] = 1;
      return;
    }
    stream().wait();
    float* delta = data_of(p.deltas[k]);
    const float* share = data_of(p.partials[k]);
    const auto count = static_cast<std::int64_t>(float_count(p.nodes[k].dst));
#pragma omp parallel for simd schedule(static)
    for (std::int64_t e = 0; e < count; ++e) delta[e] += share[e];
  };

  for (std::size_t i = n; i-- > 1;) {
    const Node& node = nodes[i];
    NodePlan& np = p.nodes[i];
    auto in = [&](std::size_t k) { return node.inputs[k]; };
    if (np.layer) {
      np.layer->backward(p.activations[static_cast<std::size_t>(in(0))], p.activations[i],
                         p.deltas[i], target(in(0)));
      settle(in(0));
      if (ready_ && node.layer->parameter_count() > 0) {
        stream().wait();
        ready_(parameter_offset_[i]);
      }
    } else if (np.add) {
      // Write a share, then settle it, input by input: the same node may be both inputs (x + x).
      const memory a = target(in(0));
      np.add->backward(p.deltas[i], a, memory());
      settle(in(0));
      const memory b = target(in(1));
      np.add->backward(p.deltas[i], memory(), b);
      settle(in(1));
    } else {
      for (std::size_t k = 0; k < node.inputs.size(); ++k) {
        std::vector<memory> targets(node.inputs.size());
        targets[k] = target(in(k));
        np.concat->backward(p.deltas[i], targets);
        settle(in(k));
      }
    }
  }
  stream().wait();
}

void Network::allocate_backward(Plan& p) {
  const std::vector<Node>& nodes = graph_.nodes();
  const std::size_t n = nodes.size();
  // Equal layouts only share, so a blocked format's zero padding is never overwritten by another
  // layout's data (trainer/model/liveness.hpp).
  const model::BackwardBuffers plan = model::plan_backward_buffers(
      n, [&](std::size_t i) -> const std::vector<int>& { return nodes[i].inputs; },
      [&](std::size_t i) { return p.nodes[i].dst; });
  std::vector<float*> buffers;
  for (const std::size_t node : plan.sized_by)
    buffers.push_back(p.buffers.emplace_back(p.nodes[node].dst.get_size()).data());
  p.deltas.assign(n, memory());
  p.partials.assign(n, memory());
  for (std::size_t i = 1; i < n; ++i) {
    if (plan.delta[i] != model::BackwardBuffers::none)
      p.deltas[i] = wrap(p.nodes[i].dst, buffers[plan.delta[i]]);
    if (plan.partial[i] != model::BackwardBuffers::none)
      p.partials[i] = wrap(p.nodes[i].dst, buffers[plan.partial[i]]);
  }
}

BatchStats Network::train_batch(std::span<const float> images, std::span<const std::int32_t> labels,
                                std::size_t batch) {
  Plan& p = plan(batch);
  const BatchStats stats = forward(p, images, labels, batch, true);
  if (p.deltas.empty()) allocate_backward(p);  // training plans only
  const auto classes = static_cast<std::size_t>(p.nodes.back().dst.dims()[1]);
  softmax_cross_entropy_backward(p.probabilities, labels, batch, classes,
                                 std::span<float>(data_of(p.deltas.back()), batch * classes));
  backward(p);
  return stats;
}

void Network::optimizer_step() { optimizer_->step(parameters_, gradients_, lr_); }

BatchStats Network::evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                             std::size_t batch) {
  return forward(plan(batch), images, labels, batch, false);
}

}  // namespace scalebench::trainer::cpu
