// The CPU model: a stack of layers over one flat parameter buffer and one flat gradient buffer,
// trained with SGD (optionally with momentum).
#pragma once

#include <memory>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/cpu/layers.hpp"

namespace scalebench::trainer::cpu {

class Sequential final : public Model {
 public:
  // Takes the layers in order; allocates the flat buffers and initialises them from `seed`.
  Sequential(std::vector<std::unique_ptr<Layer>> layers, std::uint32_t seed, SgdOptions sgd);

  std::size_t parameter_count() const override { return parameters_.size(); }
  std::span<float> parameters() override { return parameters_; }
  std::span<float> gradients() override { return gradients_; }
  BatchStats train_batch(std::span<const float> images, std::span<const std::int32_t> labels,
                         std::size_t batch) override;
  void sgd_step() override;
  BatchStats evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                      std::size_t batch) override;

  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }

 private:
  // Runs the layers forward and returns the logits' view.
  std::span<const float> forward(std::span<const float> images, std::size_t batch);
  void reserve(std::size_t batch);

  std::vector<std::unique_ptr<Layer>> layers_;
  SgdOptions sgd_;
  std::vector<float> parameters_, gradients_, velocity_;
  std::size_t capacity_ = 0;                     // batch size the buffers below hold
  std::vector<std::vector<float>> activations_;  // output of layer i
  std::vector<std::vector<float>> deltas_;       // loss gradient w.r.t. output of layer i
  std::vector<float> probabilities_;
};

// The MLP of --model mlp: Dense(He)+ReLU per hidden width, then Dense(Glorot) to the classes.
std::unique_ptr<Sequential> make_mlp(const ModelSpec& spec, const SgdOptions& sgd);

}  // namespace scalebench::trainer::cpu
