#include "trainer/cpu/sequential.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "trainer/errors.hpp"

namespace scalebench::trainer::cpu {

Sequential::Sequential(std::vector<std::unique_ptr<Layer>> layers, std::uint32_t seed,
                       SgdOptions sgd)
    : layers_(std::move(layers)), sgd_(sgd) {
  std::size_t total = 0;
  for (const auto& layer : layers_) total += layer->parameter_count();
  parameters_.assign(total, 0.0f);
  gradients_.assign(total, 0.0f);
  if (sgd_.momentum != 0.0) velocity_.assign(total, 0.0f);

  std::mt19937 rng(seed);
  std::size_t offset = 0;
  for (auto& layer : layers_) {
    const std::size_t n = layer->parameter_count();
    layer->bind(std::span<float>(parameters_).subspan(offset, n),
                std::span<float>(gradients_).subspan(offset, n));
    layer->init(rng);
    offset += n;
  }
  activations_.resize(layers_.size());
  deltas_.resize(layers_.size());
}

void Sequential::reserve(std::size_t batch) {
  if (batch <= capacity_) return;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    activations_[i].resize(batch * layers_[i]->out_features());
    deltas_[i].resize(batch * layers_[i]->out_features());
  }
  capacity_ = batch;
}

std::span<const float> Sequential::forward(std::span<const float> images, std::size_t batch) {
  reserve(batch);
  std::span<const float> input = images;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->forward(input, activations_[i], batch);
    input = activations_[i];
  }
  return input;
}

BatchStats Sequential::train_batch(std::span<const float> images,
                                   std::span<const std::int32_t> labels, std::size_t batch) {
  const std::size_t classes = layers_.back()->out_features();
  std::span<const float> logits = forward(images, batch);
  probabilities_.resize(std::max(probabilities_.size(), batch * classes));
  const LossResult loss =
      softmax_cross_entropy_forward(logits, labels, batch, classes, probabilities_);
  softmax_cross_entropy_backward(probabilities_, labels, batch, classes, deltas_.back());

  for (std::size_t i = layers_.size(); i-- > 0;) {
    std::span<const float> input = i == 0 ? images : std::span<const float>(activations_[i - 1]);
    std::span<float> dx = i == 0 ? std::span<float>() : std::span<float>(deltas_[i - 1]);
    layers_[i]->backward(input, activations_[i], deltas_[i], dx, batch);
  }
  return BatchStats{loss.loss_sum, loss.correct};
}

void Sequential::sgd_step() {
  const auto lr = static_cast<float>(sgd_.lr);
  if (velocity_.empty()) {
    for (std::size_t i = 0; i < parameters_.size(); ++i) parameters_[i] -= lr * gradients_[i];
    return;
  }
  // PyTorch's form: v ← μ·v + g, w ← w − lr·v.
  const auto mu = static_cast<float>(sgd_.momentum);
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    velocity_[i] = mu * velocity_[i] + gradients_[i];
    parameters_[i] -= lr * velocity_[i];
  }
}

BatchStats Sequential::evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                                std::size_t batch) {
  const std::size_t classes = layers_.back()->out_features();
  std::span<const float> logits = forward(images, batch);
  probabilities_.resize(std::max(probabilities_.size(), batch * classes));
  const LossResult loss =
      softmax_cross_entropy_forward(logits, labels, batch, classes, probabilities_);
  return BatchStats{loss.loss_sum, loss.correct};
}

std::unique_ptr<Sequential> make_mlp(const ModelSpec& spec, const SgdOptions& sgd) {
  if (spec.name != "mlp") {
    throw UsageError(fmt::format("unknown model '{}' for backend cpu (available: mlp)", spec.name));
  }
  if (spec.input_size == 0 || spec.classes < 2) {
    throw UsageError("the MLP needs a non-empty input and at least 2 classes");
  }
  std::vector<std::unique_ptr<Layer>> layers;
  std::size_t width = spec.input_size;
  for (int h : spec.hidden) {
    if (h <= 0) throw UsageError(fmt::format("--hidden sizes must be positive, got {}", h));
    layers.push_back(std::make_unique<Dense>(width, static_cast<std::size_t>(h), Init::he));
    layers.push_back(std::make_unique<Relu>(static_cast<std::size_t>(h)));
    width = static_cast<std::size_t>(h);
  }
  layers.push_back(
      std::make_unique<Dense>(width, static_cast<std::size_t>(spec.classes), Init::glorot));
  return std::make_unique<Sequential>(std::move(layers), spec.seed, sgd);
}

}  // namespace scalebench::trainer::cpu
