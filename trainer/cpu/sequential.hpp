// The CPU model: a stack of layers over one flat parameter buffer and one flat gradient buffer
// (so the gradient allreduce stays one call), trained by an Optimizer. The oneDNN primitives and
// activation buffers are made once per batch size (training and the last, shorter evaluation
// batch differ) and reused every step.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/cpu/layers.hpp"
#include "trainer/cpu/optimizer.hpp"

namespace scalebench::trainer::cpu {

class Sequential final : public Model {
 public:
  // Takes the layers in order and the shape of one input (e.g. {784} or {1, 28, 28}); allocates
  // the flat buffers and initialises them from `seed`.
  Sequential(std::vector<std::unique_ptr<Layer>> layers, Dims input_shape, std::uint32_t seed,
             const OptimizerOptions& optimizer);

  std::size_t parameter_count() const override { return parameters_.size(); }
  std::span<float> parameters() override { return parameters_; }
  std::span<float> gradients() override { return gradients_; }
  BatchStats train_batch(std::span<const float> images, std::span<const std::int32_t> labels,
                         std::size_t batch) override;
  void optimizer_step() override;
  void set_learning_rate(double lr) override { lr_ = lr; }
  void set_gradients_ready(GradientsReady callback) override {
    gradients_ready_ = std::move(callback);
  }
  BatchStats evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                      std::size_t batch) override;

  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // The logits of the last forward pass (batch × classes, row-major).
  std::span<const float> logits() const { return logits_; }
  // Describes each layer's output for `batch` images: kind, dims and oneDNN format.
  std::string describe(std::size_t batch);

 private:
  struct Plan {
    memory::desc input_desc;
    std::vector<std::unique_ptr<LayerPlan>> layers;
    std::vector<memory> activations, deltas;  // output of layer i and the loss gradient there
    std::vector<float> probabilities;
  };
  Plan& plan(std::size_t batch);
  // Runs the layers forward; returns the loss over the batch and keeps the probabilities.
  BatchStats forward(Plan& p, std::span<const float> images, std::span<const std::int32_t> labels,
                     std::size_t batch, bool training);

  std::vector<std::unique_ptr<Layer>> layers_;
  Dims input_shape_;
  std::vector<float> parameters_, gradients_;
  std::vector<std::size_t> offsets_;  // layer i's first element in the flat buffers
  GradientsReady gradients_ready_;
  std::unique_ptr<Optimizer> optimizer_;
  double lr_;
  std::map<std::size_t, Plan> plans_;
  std::span<const float> logits_;
};

// --model mlp: Dense(He)+ReLU per hidden width, then Dense(Glorot) to the classes.
std::unique_ptr<Sequential> make_mlp(const ModelSpec& spec, const OptimizerOptions& optimizer);
// --model mnist_cnn: the Keras/Databricks MNIST CNN (reference/FACTS.md), exactly:
// Conv2D(32,3×3,relu) → Conv2D(64,3×3,relu) → MaxPool(2×2) → Dropout(0.25) → Flatten →
// Dense(128,relu) → Dropout(0.5) → Dense(classes); 1,199,882 parameters for 1×28×28 and 10.
std::unique_ptr<Sequential> make_mnist_cnn(const ModelSpec& spec,
                                           const OptimizerOptions& optimizer);
// The model named by spec.name; UsageError naming the available ones otherwise.
std::unique_ptr<Sequential> make_model(const ModelSpec& spec, const OptimizerOptions& optimizer);
const std::vector<std::string>& model_names();

}  // namespace scalebench::trainer::cpu
