// The CPU model: a directed acyclic graph of layers (chains, residual adds, channel concats) over
// one flat parameter buffer and one flat gradient buffer (so the gradient allreduce stays one
// call, or a few fused buckets), trained by an Optimizer. A Graph is built node by node in
// topological order; Network owns it. The oneDNN primitives and activation buffers are made once
// per batch size (training and the last, shorter evaluation batch differ) and reused every step.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/cpu/layers.hpp"
#include "trainer/cpu/optimizer.hpp"

namespace scalebench::trainer::cpu {

// A node of the graph: the model's input (node 0), a layer applied to one node, the sum of two
// nodes, or the channel concatenation of several.
struct Node {
  enum class Kind { input, layer, add, concat };
  Kind kind = Kind::input;
  std::unique_ptr<Layer> layer;  // Kind::layer only
  std::vector<int> inputs;       // indices of earlier nodes
};

class Graph {
 public:
  Graph() { nodes_.emplace_back(); }  // node 0: the input
  static constexpr int input = 0;
  // Appends a node and returns its index; inputs must be earlier nodes (topological order).
  int layer(int from, std::unique_ptr<Layer> layer);
  template <typename L, typename... Args>
  int add_layer(int from, Args&&... args) {
    return layer(from, std::make_unique<L>(std::forward<Args>(args)...));
  }
  int add(int a, int b);
  int concat(std::vector<int> inputs);
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  int append(Node node);
  std::vector<Node> nodes_;
};

class Network final : public Model {
 public:
  // Takes the graph (whose last node gives the logits) and the shape of one input (e.g. {784} or
  // {1, 28, 28}); lays the layers' parameters out in node order in the flat buffers and
  // initialises them from `seed`.
  Network(Graph graph, Dims input_shape, std::uint32_t seed, const OptimizerOptions& optimizer);

  std::size_t parameter_count() const override { return parameters_.size(); }
  std::span<float> parameters() override { return parameters_; }
  std::span<float> gradients() override { return gradients_; }
  BatchStats train_batch(std::span<const float> images, std::span<const std::int32_t> labels,
                         std::size_t batch) override;
  void optimizer_step() override;
  void set_learning_rate(double lr) override { lr_ = lr; }
  void set_gradients_ready(GradientsReady callback) override { ready_ = std::move(callback); }
  BatchStats evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                      std::size_t batch) override;

  const std::vector<Node>& nodes() const { return graph_.nodes(); }
  // The shape of one input image, as given to the constructor.
  const Dims& input_shape() const { return input_shape_; }
  // The layers in node order (adds and concats are not layers).
  std::vector<const Layer*> layers() const;
  // The logits of the last forward pass (batch × classes, row-major).
  std::span<const float> logits() const { return logits_; }

 private:
  // One node's primitives for one batch size: a layer's plan, or an add's / a concat's.
  struct NodePlan {
    std::unique_ptr<LayerPlan> layer;
    std::unique_ptr<AddPlan> add;
    std::unique_ptr<ConcatPlan> concat;
    memory::desc dst;
  };
  struct Plan {
    std::vector<NodePlan> nodes;
    std::vector<HostBuffer> buffers;  // every activation, delta and partial lives in one of these
    std::vector<memory> activations;  // output of node i (node 0 wraps the caller's images)
    // Loss gradient at node i's output. A delta lives from its first writer's backward to its
    // own node's backward, so deltas of equal layout share buffers (ResNet-50: a few dozen MB
    // instead of gigabytes).
    std::vector<memory> deltas;
    std::vector<memory> partials;  // a later consumer's share, for nodes read twice or more
    std::vector<float> probabilities;
  };
  Plan& plan(std::size_t batch);
  void allocate_backward(Plan& p);
  // Runs the graph forward; returns the loss over the batch and keeps the probabilities.
  BatchStats forward(Plan& p, std::span<const float> images, std::span<const std::int32_t> labels,
                     std::size_t batch, bool training);
  void backward(Plan& p);

  Graph graph_;
  Dims input_shape_;
  std::vector<std::size_t> consumers_;         // how many nodes read node i
  std::vector<std::size_t> parameter_offset_;  // where node i's parameters start
  std::vector<float> parameters_, gradients_;
  std::unique_ptr<Optimizer> optimizer_;
  double lr_;
  GradientsReady ready_;
  std::map<std::size_t, Plan> plans_;
  std::span<const float> logits_;
};

}  // namespace scalebench::trainer::cpu
