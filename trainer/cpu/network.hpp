// The CPU model: a model::Graph (chains, residual adds, channel concats) lowered to one CPU layer
// per operation, over one flat parameter buffer and one flat gradient buffer (so the gradient
// allreduce stays one call, or a few fused buckets), trained by an Optimizer. The backward order,
// the accumulation of gradient shares and the buffer liveness are the backend-neutral ones
// (trainer/model/backward.hpp). The oneDNN primitives and activation buffers are made once per
// batch size (training and the last, shorter evaluation batch differ) and reused every step.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/cpu/layers.hpp"
#include "trainer/cpu/optimizer.hpp"
#include "trainer/model/backward.hpp"
#include "trainer/model/ops.hpp"

namespace scalebench::trainer::cpu {

class Network final : public Model {
 public:
  // Takes the graph (whose last node gives the logits) and the shape of one input (e.g. {784} or
  // {1, 28, 28}); makes one layer per operation, lays their parameters out in node order in the
  // flat buffers (model::parameter_layout) and initialises them from `seed`.
  Network(model::Graph graph, Dims input_shape, std::uint32_t seed,
          const OptimizerOptions& optimizer);

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
  bool start_op_timing() override;
  OpTimes take_op_times() override;

  const std::vector<model::Node>& nodes() const { return graph_.nodes(); }
  // Node i's layer; nullptr for the input, adds and concats.
  const Layer* layer(std::size_t node) const { return layers_.at(node).get(); }
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
    // Loss gradient at node i's output. Deltas of equal layout that are never alive together
    // share buffers (model::plan_backward_buffers; ResNet-50: a few dozen MB, not gigabytes).
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

  model::Graph graph_;
  model::BackwardSchedule schedule_;
  std::vector<std::unique_ptr<Layer>> layers_;  // node i's (null for the input, adds, concats)
  Dims input_shape_;
  std::vector<float> parameters_, gradients_;
  std::unique_ptr<Optimizer> optimizer_;
  double lr_;
  GradientsReady ready_;
  std::map<std::size_t, Plan> plans_;
  std::span<const float> logits_;
  bool timing_ = false;  // --profile-ops: each training step's operations add to times_
  OpTimes times_;
};

}  // namespace scalebench::trainer::cpu
