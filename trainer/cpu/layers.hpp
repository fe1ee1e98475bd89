// CPU layers on oneDNN primitives (forward, backward data, backward weights). A Layer holds its
// hyper-parameters and views of its parameters and gradients in the model's flat buffers; for a
// given input descriptor (batch included) it makes a LayerPlan, which owns the oneDNN primitives
// and scratch memory for that shape, created once and reused every step.
//
// Tensors travel between layers as dnnl::memory in whatever format the producing primitive chose
// (blocked nChw8c for convolutions on AVX2): pooling, batch norm, eltwise and dropout work in
// that format directly, and only convolutions (when they want another one) and Flatten reorder.
// Parameters are stored in PyTorch's layouts in the flat buffer: conv weights (out, in/groups,
// kh, kw) then bias; dense W (in × out, Keras's kernel) then bias; batch norm gamma then beta.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "trainer/cpu/dnnl_util.hpp"
#include "trainer/model/ops.hpp"

namespace scalebench::trainer::cpu {

class LayerPlan {
 public:
  virtual ~LayerPlan() = default;
  const memory::desc& dst_desc() const { return dst_desc_; }
  // dst = f(src). `training` selects batch statistics (batch norm) and masking (dropout).
  virtual void forward(const memory& src, const memory& dst, bool training) = 0;
  // Given the last forward's src and dst and the loss gradient diff_dst, overwrites the layer's
  // parameter gradients and writes diff_src (skipped when diff_src is an empty memory: the first
  // layer needs none). May overwrite diff_dst.
  virtual void backward(const memory& src, const memory& dst, const memory& diff_dst,
                        const memory& diff_src) = 0;

 protected:
  memory::desc dst_desc_;
};

class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::string_view kind() const = 0;
  virtual std::size_t parameter_count() const { return 0; }
  // Points the layer at its parameter_count() floats in the flat parameter and gradient buffers.
  virtual void bind(std::span<float> parameters, std::span<float> gradients) {
    (void)parameters;
    (void)gradients;
  }
  virtual void init(std::mt19937& rng) { (void)rng; }
  // The primitives for inputs described by `src` (its first dimension is the batch).
  virtual std::unique_ptr<LayerPlan> plan(const memory::desc& src) = 0;
};

// The operations' hyper-parameters are the backend-neutral model's (trainer/model/ops.hpp).
using model::Activation;
using model::conv2d;
using model::Conv2dOptions;
using model::Init;
using model::Pair;
using model::Pool2dOptions;
using model::PoolKind;

class Conv2d final : public Layer {
 public:
  explicit Conv2d(const Conv2dOptions& options) : o_(options) {}
  std::string_view kind() const override { return "conv2d"; }
  const Conv2dOptions& options() const { return o_; }
  std::size_t weight_count() const;
  std::size_t parameter_count() const override;
  void bind(std::span<float> parameters, std::span<float> gradients) override;
  // Glorot uniform (Keras's default) or He normal over fan_in = in/groups·kh·kw; zero bias.
  void init(std::mt19937& rng) override;
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;

 private:
  friend class Conv2dPlan;
  Conv2dOptions o_;
  std::span<float> weights_, bias_, weight_grad_, bias_grad_;
};

class Pool2d final : public Layer {
 public:
  explicit Pool2d(const Pool2dOptions& options) : o_(options) {}
  std::string_view kind() const override { return "pool2d"; }
  const Pool2dOptions& options() const { return o_; }
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;

 private:
  Pool2dOptions o_;
};

// Average over all of H×W: N×C×H×W → N×C×1×1.
class GlobalAvgPool final : public Layer {
 public:
  std::string_view kind() const override { return "global_avg_pool"; }
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;
};

// Batch normalization over N, H, W per channel (PyTorch's conventions): training uses the
// batch's mean and biased variance and updates running_mean/var with momentum (running var from
// the unbiased batch variance); inference uses the running statistics. With `relu` a ReLU follows
// inside the same oneDNN primitive (fuse_norm_relu): one pass over memory instead of two, and
// no separate activation tensor (the ResNet/Inception conv→BN→ReLU blocks).
class BatchNorm final : public Layer {
 public:
  explicit BatchNorm(int channels, float epsilon = 1e-5f, float momentum = 0.1f, bool relu = false);
  std::string_view kind() const override { return relu_ ? "batch_norm_relu" : "batch_norm"; }
  std::size_t parameter_count() const override { return 2 * channels_; }
  void bind(std::span<float> parameters, std::span<float> gradients) override;
  void init(std::mt19937& rng) override;  // gamma 1, beta 0
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;
  std::size_t channels() const { return channels_; }
  float epsilon() const { return epsilon_; }
  float momentum() const { return momentum_; }
  bool relu() const { return relu_; }
  std::span<float> running_mean() { return running_mean_; }
  std::span<float> running_var() { return running_var_; }
  std::span<const float> running_mean() const { return running_mean_; }
  std::span<const float> running_var() const { return running_var_; }

 private:
  friend class BatchNormPlan;
  std::size_t channels_;
  float epsilon_, momentum_;
  bool relu_;
  std::span<float> gamma_, beta_, gamma_grad_, beta_grad_;
  std::vector<float> running_mean_, running_var_;
};

class Eltwise final : public Layer {
 public:
  explicit Eltwise(Activation activation) : activation_(activation) {}
  Activation activation() const { return activation_; }
  std::string_view kind() const override {
    switch (activation_) {
      case Activation::relu:
        return "relu";
      case Activation::relu6:
        return "relu6";
      case Activation::tanh:
        return "tanh";
    }
    return "eltwise";
  }
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;

 private:
  Activation activation_;
};

// Inverted dropout: in training each element is kept with probability 1 − rate and scaled by
// 1/(1 − rate); identity in inference. The mask of call k, element i (the logical N×C×H×W
// index) is a hash of (seed, k, i), so a run is reproducible whatever the thread count, the
// CPU's ISA or the backend (trainer/cuda drops the same elements). Its output is plain.
class Dropout final : public Layer {
 public:
  Dropout(float rate, std::uint64_t seed) : rate_(rate), seed_(seed) {}
  std::string_view kind() const override { return "dropout"; }
  float rate() const { return rate_; }
  // The key of the mask of call number `call` (0, 1, ...): element i is kept when the top 24 bits
  // of splitmix64(key + i) are >= rate·2²⁴. Every backend's dropout uses it.
  std::uint64_t mask_key(std::uint64_t call) const;
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;

 private:
  friend class DropoutPlan;
  float rate_;
  std::uint64_t seed_;
  std::uint64_t calls_ = 0;
};

// N×C×H×W (any format) → N×(C·H·W) in PyTorch's order (channel-major), plain.
class Flatten final : public Layer {
 public:
  std::string_view kind() const override { return "flatten"; }
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;
};

// y = x·W + b with W stored in × out (Keras's kernel layout), then b; through dnnl_sgemm. The
// input must be plain (after Flatten, or the model's input).
class Dense final : public Layer {
 public:
  Dense(std::size_t in, std::size_t out, Init init) : in_(in), out_(out), init_(init) {}
  std::string_view kind() const override { return "dense"; }
  std::size_t in_features() const { return in_; }
  std::size_t out_features() const { return out_; }
  std::size_t parameter_count() const override { return in_ * out_ + out_; }
  void bind(std::span<float> parameters, std::span<float> gradients) override;
  // He (normal, std √(2/in)) before a ReLU, Glorot (uniform, ±√(6/(in+out))) otherwise; zero bias.
  void init(std::mt19937& rng) override;
  std::unique_ptr<LayerPlan> plan(const memory::desc& src) override;

 private:
  friend class DensePlan;
  std::size_t in_;
  std::size_t out_;
  Init init_;
  std::span<float> weights_, bias_, weight_grad_, bias_grad_;
};

// One layer per operation (a new operation without a case here does not compile).
std::unique_ptr<Layer> make_layer(const model::Op& op);

// dst = a + b (residual connection) through oneDNN's binary primitive; dst takes a's format.
class AddPlan {
 public:
  AddPlan(const memory::desc& a, const memory::desc& b);
  const memory::desc& dst_desc() const { return dst_desc_; }
  void forward(const memory& a, const memory& b, const memory& dst);
  // Both inputs receive diff_dst (reordered when their formats differ).
  void backward(const memory& diff_dst, const memory& diff_a, const memory& diff_b);

 private:
  memory::desc dst_desc_;
  dnnl::binary add_;
};

// Concatenation along channels (dimension 1) through oneDNN's concat primitive.
class ConcatPlan {
 public:
  explicit ConcatPlan(const std::vector<memory::desc>& srcs);
  const memory::desc& dst_desc() const { return dst_desc_; }
  void forward(const std::vector<memory>& srcs, const memory& dst);
  // Each input's slice of diff_dst, copied out by a reorder from a sub-memory view.
  void backward(const memory& diff_dst, const std::vector<memory>& diff_srcs);

 private:
  memory::desc dst_desc_;
  dnnl::concat concat_;
  std::vector<memory::desc> srcs_, slices_;
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
