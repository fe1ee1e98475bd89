#include "trainer/cpu/network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <stdexcept>

#include "trainer/model/parameters.hpp"

namespace scalebench::trainer::cpu {
namespace {

// Runs `work`; with `sum` (--profile-ops), adds its seconds on the host clock, oneDNN's stream
// drained before and after so that each call's time is its own.
template <class Work>
void timed(double* sum, Work&& work) {
  if (sum == nullptr) {
    work();
    return;
  }
  stream().wait();
  const auto start = std::chrono::steady_clock::now();
  work();
  stream().wait();
  *sum += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Network::Network(model::Graph graph, Dims input_shape, std::uint32_t seed,
                 const OptimizerOptions& optimizer)
    : graph_(std::move(graph)),
      schedule_(graph_),
      input_shape_(std::move(input_shape)),
      lr_(optimizer.lr) {
  const std::vector<model::Node>& nodes = graph_.nodes();
  const model::ParameterLayout layout = model::parameter_layout(graph_);
  parameters_.assign(layout.total, 0.0f);
  gradients_.assign(layout.total, 0.0f);
  optimizer_ = make_optimizer(optimizer, layout.total);

  std::mt19937 rng(seed);
  layers_.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind != model::Node::Kind::op) continue;
    layers_[i] = make_layer(nodes[i].op);
    Layer& layer = *layers_[i];
    const std::size_t n = layer.parameter_count();
    layer.bind(std::span<float>(parameters_).subspan(layout.offsets[i], n),
               std::span<float>(gradients_).subspan(layout.offsets[i], n));
    layer.init(rng);
  }
}

std::vector<const Layer*> Network::layers() const {
  std::vector<const Layer*> out;
  for (const auto& layer : layers_)
    if (layer) out.push_back(layer.get());
  return out;
}

Network::Plan& Network::plan(std::size_t batch) {
  auto it = plans_.find(batch);
  if (it != plans_.end()) return it->second;
  const std::vector<model::Node>& nodes = graph_.nodes();
  Plan p;
  p.nodes.resize(nodes.size());
  p.activations.resize(nodes.size());
  Dims dims{static_cast<memory::dim>(batch)};
  dims.insert(dims.end(), input_shape_.begin(), input_shape_.end());
  p.nodes[0].dst = plain_desc(dims);
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const model::Node& node = nodes[i];
    NodePlan& np = p.nodes[i];
    auto src = [&](std::size_t k) -> const memory::desc& {
      return p.nodes[static_cast<std::size_t>(node.inputs[k])].dst;
    };
    try {
      switch (node.kind) {
        case model::Node::Kind::op:
          np.layer = layers_[i]->plan(src(0));
          np.dst = np.layer->dst_desc();
          break;
        case model::Node::Kind::add:
          np.add = std::make_unique<AddPlan>(src(0), src(1));
          np.dst = np.add->dst_desc();
          break;
        case model::Node::Kind::concat: {
          std::vector<memory::desc> srcs;
          for (std::size_t k = 0; k < node.inputs.size(); ++k) srcs.push_back(src(k));
          np.concat = std::make_unique<ConcatPlan>(srcs);
          np.dst = np.concat->dst_desc();
          break;
        }
        case model::Node::Kind::input:
          throw std::logic_error("only node 0 is the input");
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format(
          "graph node {} ({}): {}", i, layers_[i] ? layers_[i]->kind() : "add/concat", e.what()));
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
  const std::vector<model::Node>& nodes = graph_.nodes();
  p.activations[0] = wrap(p.nodes[0].dst, images.data());
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const model::Node& node = nodes[i];
    NodePlan& np = p.nodes[i];
    auto in = [&](std::size_t k) -> const memory& {
      return p.activations[static_cast<std::size_t>(node.inputs[k])];
    };
    timed(timing_ && training ? &times_.nodes[i].forward : nullptr, [&] {
      if (np.layer) {
        np.layer->forward(in(0), p.activations[i], training);
      } else if (np.add) {
        np.add->forward(in(0), in(1), p.activations[i]);
      } else {
        std::vector<memory> srcs;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) srcs.push_back(in(k));
        np.concat->forward(srcs, p.activations[i]);
      }
    });
  }
  stream().wait();
  const memory& out = p.activations.back();
  const auto classes = static_cast<std::size_t>(out.get_desc().dims()[1]);
  logits_ = std::span<const float>(data_of(out), batch * classes);
  LossResult loss;
  timed(timing_ && training ? &times_.loss : nullptr, [&] {
    loss = softmax_cross_entropy_forward(logits_, labels, batch, classes, p.probabilities);
  });
  return BatchStats{loss.loss_sum, loss.correct};
}

void Network::backward(Plan& p) {
  const std::vector<model::Node>& nodes = graph_.nodes();
  // Node i's k-th input: where its share goes, and adding it to the delta when it was a partial
  // (model::BackwardSchedule).
  auto target = [&](std::size_t i, std::size_t k) -> memory {
    const auto j = static_cast<std::size_t>(nodes[i].inputs[k]);
    switch (schedule_.share(i, k)) {
      case model::Share::none:
        return memory();
      case model::Share::delta:
        return p.deltas[j];
      case model::Share::partial:
        return p.partials[j];
    }
    return memory();
  };
  auto settle = [&](std::size_t i, std::size_t k) {
    if (schedule_.share(i, k) != model::Share::partial) return;
    const auto j = static_cast<std::size_t>(nodes[i].inputs[k]);
    stream().wait();
    float* delta = data_of(p.deltas[j]);
    const float* share = data_of(p.partials[j]);
    const auto count = static_cast<std::int64_t>(float_count(p.nodes[j].dst));
#pragma omp parallel for simd schedule(static)
    for (std::int64_t e = 0; e < count; ++e) delta[e] += share[e];
  };

  for (std::size_t i = nodes.size(); i-- > 1;) {
    const model::Node& node = nodes[i];
    NodePlan& np = p.nodes[i];
    double* backward_time = timing_ ? &times_.nodes[i].backward : nullptr;
    if (np.layer) {
      timed(backward_time, [&] {
        np.layer->backward(p.activations[static_cast<std::size_t>(node.inputs[0])],
                           p.activations[i], p.deltas[i], target(i, 0));
        settle(i, 0);
      });
      const std::optional<std::size_t> ready = schedule_.gradients_ready(i);
      if (ready_ && ready) {
        stream().wait();
        ready_(*ready);
      }
    } else if (np.add) {
      // Write a share, then settle it, input by input: the same node may be both inputs (x + x).
      timed(backward_time, [&] {
        np.add->backward(p.deltas[i], target(i, 0), memory());
        settle(i, 0);
        np.add->backward(p.deltas[i], memory(), target(i, 1));
        settle(i, 1);
      });
    } else {
      timed(backward_time, [&] {
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
          std::vector<memory> targets(node.inputs.size());
          targets[k] = target(i, k);
          np.concat->backward(p.deltas[i], targets);
          settle(i, k);
        }
      });
    }
  }
  stream().wait();
}

void Network::allocate_backward(Plan& p) {
  const std::size_t n = graph_.nodes().size();
  // Equal layouts only share, so a blocked format's zero padding is never overwritten by another
  // layout's data (trainer/model/backward.hpp).
  const model::BackwardBuffers plan =
      model::plan_backward_buffers(graph_, [&](std::size_t i) { return p.nodes[i].dst; });
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
  timed(timing_ ? &times_.loss : nullptr, [&] {
    softmax_cross_entropy_backward(p.probabilities, labels, batch, classes,
                                   std::span<float>(data_of(p.deltas.back()), batch * classes));
  });
  backward(p);
  if (timing_) ++times_.steps;
  return stats;
}

void Network::optimizer_step() {
  timed(timing_ ? &times_.optimizer : nullptr,
        [&] { optimizer_->step(parameters_, gradients_, lr_); });
}

bool Network::start_op_timing() {
  timing_ = true;
  (void)take_op_times();
  return true;
}

OpTimes Network::take_op_times() {
  OpTimes taken = std::move(times_);
  times_ = OpTimes{};
  times_.nodes.resize(graph_.nodes().size());
  times_.clock = "host steady clock";
  return taken;
}

BatchStats Network::evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                             std::size_t batch) {
  return forward(plan(batch), images, labels, batch, false);
}

}  // namespace scalebench::trainer::cpu
