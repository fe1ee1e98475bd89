#include "trainer/cpu/sequential.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <random>

#include "trainer/errors.hpp"

namespace scalebench::trainer::cpu {

Sequential::Sequential(std::vector<std::unique_ptr<Layer>> layers, Dims input_shape,
                       std::uint32_t seed, const OptimizerOptions& optimizer)
    : layers_(std::move(layers)), input_shape_(std::move(input_shape)), lr_(optimizer.lr) {
  std::size_t total = 0;
  for (const auto& layer : layers_) total += layer->parameter_count();
  parameters_.assign(total, 0.0f);
  gradients_.assign(total, 0.0f);
  optimizer_ = make_optimizer(optimizer, total);

  std::mt19937 rng(seed);
  std::size_t offset = 0;
  for (auto& layer : layers_) {
    const std::size_t n = layer->parameter_count();
    layer->bind(std::span<float>(parameters_).subspan(offset, n),
                std::span<float>(gradients_).subspan(offset, n));
    layer->init(rng);
    offsets_.push_back(offset);
    offset += n;
  }
}

Sequential::Plan& Sequential::plan(std::size_t batch) {
  auto it = plans_.find(batch);
  if (it != plans_.end()) return it->second;
  Plan p;
  Dims dims{static_cast<memory::dim>(batch)};
  dims.insert(dims.end(), input_shape_.begin(), input_shape_.end());
  p.input_desc = plain_desc(dims);
  memory::desc src = p.input_desc;
  for (auto& layer : layers_) {
    p.layers.push_back(layer->plan(src));
    src = p.layers.back()->dst_desc();
    p.activations.push_back(make_memory(src));
  }
  if (!is_plain(src) || src.dims().size() != 2) {
    throw std::logic_error("the last layer of a model must give plain batch × classes logits");
  }
  p.probabilities.resize(float_count(src));
  return plans_.emplace(batch, std::move(p)).first->second;
}

BatchStats Sequential::forward(Plan& p, std::span<const float> images,
                               std::span<const std::int32_t> labels, std::size_t batch,
                               bool training) {
  memory input = wrap(p.input_desc, images.data());
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    p.layers[i]->forward(i == 0 ? input : p.activations[i - 1], p.activations[i], training);
  }
  stream().wait();
  const memory& out = p.activations.back();
  const auto classes = static_cast<std::size_t>(out.get_desc().dims()[1]);
  logits_ = std::span<const float>(data_of(out), batch * classes);
  const LossResult loss =
      softmax_cross_entropy_forward(logits_, labels, batch, classes, p.probabilities);
  return BatchStats{loss.loss_sum, loss.correct};
}

BatchStats Sequential::train_batch(std::span<const float> images,
                                   std::span<const std::int32_t> labels, std::size_t batch) {
  Plan& p = plan(batch);
  const BatchStats stats = forward(p, images, labels, batch, true);
  if (p.deltas.empty()) {
    for (const memory& a : p.activations) p.deltas.push_back(make_memory(a.get_desc()));
  }
  const auto classes = static_cast<std::size_t>(p.activations.back().get_desc().dims()[1]);
  softmax_cross_entropy_backward(p.probabilities, labels, batch, classes,
                                 std::span<float>(data_of(p.deltas.back()), batch * classes));
  memory input = wrap(p.input_desc, images.data());
  for (std::size_t i = p.layers.size(); i-- > 0;) {
    p.layers[i]->backward(i == 0 ? input : p.activations[i - 1], p.activations[i], p.deltas[i],
                          i == 0 ? memory() : p.deltas[i - 1]);
    // Layer i's gradients, and all after them, are final: the gradient allreduce may take them.
    if (gradients_ready_ && layers_[i]->parameter_count() > 0) {
      stream().wait();
      gradients_ready_(offsets_[i]);
    }
  }
  stream().wait();
  return stats;
}

void Sequential::optimizer_step() { optimizer_->step(parameters_, gradients_, lr_); }

BatchStats Sequential::evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                                std::size_t batch) {
  return forward(plan(batch), images, labels, batch, false);
}

std::string Sequential::describe(std::size_t batch) {
  Plan& p = plan(batch);
  std::string text;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const memory::desc d = p.layers[i]->dst_desc();
    text += fmt::format("{:<16} {:<20} {:>9} params, {} floats\n", layers_[i]->kind(),
                        fmt::join(d.dims(), "x"), layers_[i]->parameter_count(), float_count(d));
  }
  return text;
}

// ---- the models ----

namespace {

void check_classes(const ModelSpec& spec) {
  if (spec.input_size == 0 || spec.classes < 2) {
    throw UsageError(fmt::format("model {} needs a non-empty input and at least 2 classes",
                                 spec.name));
  }
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names{"mlp", "mnist_cnn"};
  return names;
}

std::unique_ptr<Sequential> make_mlp(const ModelSpec& spec, const OptimizerOptions& optimizer) {
  if (spec.name != "mlp") {
    throw UsageError(fmt::format("unknown model '{}' for backend cpu (available: {})", spec.name,
                                 fmt::join(model_names(), ", ")));
  }
  check_classes(spec);
  std::vector<std::unique_ptr<Layer>> layers;
  std::size_t width = spec.input_size;
  for (int h : spec.hidden) {
    if (h <= 0) throw UsageError(fmt::format("--hidden sizes must be positive, got {}", h));
    layers.push_back(std::make_unique<Dense>(width, static_cast<std::size_t>(h), Init::he));
    layers.push_back(std::make_unique<Eltwise>(Activation::relu));
    width = static_cast<std::size_t>(h);
  }
  layers.push_back(
      std::make_unique<Dense>(width, static_cast<std::size_t>(spec.classes), Init::glorot));
  return std::make_unique<Sequential>(std::move(layers),
                                      Dims{static_cast<memory::dim>(spec.input_size)}, spec.seed,
                                      optimizer);
}

std::unique_ptr<Sequential> make_mnist_cnn(const ModelSpec& spec,
                                           const OptimizerOptions& optimizer) {
  check_classes(spec);
  if (spec.height < 5 || spec.width < 5) {
    throw UsageError(fmt::format("mnist_cnn needs images of at least 5x5, got {}x{}", spec.height,
                                 spec.width));
  }
  // Keras's defaults: Glorot-uniform kernels, zero biases, 'valid' padding.
  Conv2dOptions c1 = conv2d(spec.channels, 32, 3);
  c1.relu = true;
  Conv2dOptions c2 = conv2d(32, 64, 3);
  c2.relu = true;
  const std::uint64_t dropout_seed =
      (std::uint64_t{spec.seed} << 32) ^ static_cast<std::uint64_t>(spec.rank);
  const std::size_t flat = 64 * static_cast<std::size_t>((spec.height - 4) / 2) *
                           static_cast<std::size_t>((spec.width - 4) / 2);
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(std::make_unique<Conv2d>(c1));
  layers.push_back(std::make_unique<Conv2d>(c2));
  layers.push_back(std::make_unique<Pool2d>(Pool2dOptions{}));
  layers.push_back(std::make_unique<Dropout>(0.25f, dropout_seed * 2));
  layers.push_back(std::make_unique<Flatten>());
  layers.push_back(std::make_unique<Dense>(flat, 128, Init::glorot));
  layers.push_back(std::make_unique<Eltwise>(Activation::relu));
  layers.push_back(std::make_unique<Dropout>(0.5f, dropout_seed * 2 + 1));
  layers.push_back(
      std::make_unique<Dense>(128, static_cast<std::size_t>(spec.classes), Init::glorot));
  return std::make_unique<Sequential>(std::move(layers),
                                      Dims{spec.channels, spec.height, spec.width}, spec.seed,
                                      optimizer);
}

std::unique_ptr<Sequential> make_model(const ModelSpec& spec, const OptimizerOptions& optimizer) {
  if (spec.name == "mnist_cnn") return make_mnist_cnn(spec, optimizer);
  return make_mlp(spec, optimizer);
}

}  // namespace scalebench::trainer::cpu
