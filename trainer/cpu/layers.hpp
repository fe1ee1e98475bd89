// CPU layers of the reference backend. Every matrix product goes through oneDNN's dnnl_sgemm;
// the elementwise parts are plain loops. Tensors are row-major batch × features.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>

namespace scalebench::trainer::cpu {

class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string_view kind() const = 0;
  virtual std::size_t in_features() const = 0;
  virtual std::size_t out_features() const = 0;
  virtual std::size_t parameter_count() const { return 0; }
  // Points the layer at its parameter_count() floats in the model's flat parameter and gradient
  // buffers; the layer owns no parameter storage of its own.
  virtual void bind(std::span<float> parameters, std::span<float> gradients) {
    (void)parameters;
    (void)gradients;
  }
  virtual void init(std::mt19937& rng) { (void)rng; }
  // y = f(x) for `batch` rows.
  virtual void forward(std::span<const float> x, std::span<float> y, std::size_t batch) = 0;
  // Given the forward input x, output y and the loss gradient dy, writes dx (skipped when dx is
  // empty: the first layer needs no input gradient) and overwrites the layer's gradients.
  virtual void backward(std::span<const float> x, std::span<const float> y,
                        std::span<const float> dy, std::span<float> dx, std::size_t batch) = 0;
};

enum class Init { he, glorot };

// y = x·W + b with W stored in × out (Keras's kernel layout) followed by b (out), in one span.
class Dense final : public Layer {
 public:
  Dense(std::size_t in, std::size_t out, Init init) : in_(in), out_(out), init_(init) {}
  std::string_view kind() const override { return "dense"; }
  std::size_t in_features() const override { return in_; }
  std::size_t out_features() const override { return out_; }
  std::size_t parameter_count() const override { return in_ * out_ + out_; }
  void bind(std::span<float> parameters, std::span<float> gradients) override;
  // He (normal, std √(2/in)) before a ReLU, Glorot (uniform, ±√(6/(in+out))) otherwise; zero bias.
  void init(std::mt19937& rng) override;
  void forward(std::span<const float> x, std::span<float> y, std::size_t batch) override;
  void backward(std::span<const float> x, std::span<const float> y, std::span<const float> dy,
                std::span<float> dx, std::size_t batch) override;

 private:
  std::size_t in_;
  std::size_t out_;
  Init init_;
  std::span<float> weights_, bias_, weight_grad_, bias_grad_;
};

class Relu final : public Layer {
 public:
  explicit Relu(std::size_t features) : features_(features) {}
  std::string_view kind() const override { return "relu"; }
  std::size_t in_features() const override { return features_; }
  std::size_t out_features() const override { return features_; }
  void forward(std::span<const float> x, std::span<float> y, std::size_t batch) override;
  void backward(std::span<const float> x, std::span<const float> y, std::span<const float> dy,
                std::span<float> dx, std::size_t batch) override;

 private:
  std::size_t features_;
};

struct LossResult {
  double loss_sum = 0.0;     // Σ over the batch of −log p(label)
  std::int64_t correct = 0;  // arg-max hits
};

// Softmax followed by cross-entropy against integer labels. forward() writes the probabilities
// (batch × classes) that backward() needs; backward() gives d(mean loss)/d logits = (p − 1ₗ)/batch.
LossResult softmax_cross_entropy_forward(std::span<const float> logits,
                                         std::span<const std::int32_t> labels, std::size_t batch,
                                         std::size_t classes, std::span<float> probabilities);
void softmax_cross_entropy_backward(std::span<const float> probabilities,
                                    std::span<const std::int32_t> labels, std::size_t batch,
                                    std::size_t classes, std::span<float> dlogits);

// C = alpha·op(A)·op(B) + beta·C, row-major, through dnnl_sgemm; throws on a oneDNN error.
void sgemm(char transa, char transb, std::size_t m, std::size_t n, std::size_t k, float alpha,
           const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
           std::size_t ldc);

}  // namespace scalebench::trainer::cpu
