// BatchNorm on oneDNN's batch normalization primitives, its ReLU fused (trainer/cpu/layers.hpp).
#include <fmt/format.h>

#include <cassert>
#include <stdexcept>

#include "trainer/cpu/layers.hpp"
#include "trainer/model/parameters.hpp"

namespace scalebench::trainer::cpu {
namespace {

using tag = memory::format_tag;
using dt = memory::data_type;
using dnnl::algorithm;
using dnnl::prop_kind;

const dnnl::normalization_flags kScaleShift =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

}  // namespace

class BatchNormPlan final : public LayerPlan {
 public:
  BatchNormPlan(BatchNorm& layer, const memory::desc& src) : layer_(layer) {
    if (src.dims().size() < 2 || static_cast<std::size_t>(src.dims()[1]) != layer.channels_) {
      throw std::invalid_argument(
          fmt::format("batch_norm expects {} channels in dimension 1", layer.channels_));
    }
    dnnl::normalization_flags flags = kScaleShift;
    if (layer.relu_) flags = flags | dnnl::normalization_flags::fuse_norm_relu;
    const dnnl::batch_normalization_forward::primitive_desc train_pd(
        {prop_kind::forward_training, src, layer.epsilon_, flags}, engine());
    const dnnl::batch_normalization_forward::primitive_desc infer_pd(
        {prop_kind::forward_inference, src, layer.epsilon_,
         flags | dnnl::normalization_flags::use_global_stats},
        engine());
    dst_desc_ = train_pd.dst_desc();
    train_ = dnnl::batch_normalization_forward(train_pd);
    infer_ = dnnl::batch_normalization_forward(infer_pd);
    bwd_ = dnnl::batch_normalization_backward(dnnl::batch_normalization_backward::primitive_desc(
        {prop_kind::backward, src, src, layer.epsilon_, flags}, engine(), train_pd));
    // The fused ReLU's mask (one bit per element), written by the forward, read by the backward.
    if (layer.relu_) workspace_ = make_memory(train_pd.workspace_desc());
    mean_ = make_memory(train_pd.mean_desc());
    variance_ = make_memory(train_pd.variance_desc());
    const memory::desc c = plain_desc({static_cast<memory::dim>(layer.channels_)});
    gamma_ = wrap(c, layer.gamma_.data());
    beta_ = wrap(c, layer.beta_.data());
    gamma_grad_ = wrap(c, layer.gamma_grad_.data());
    beta_grad_ = wrap(c, layer.beta_grad_.data());
    running_mean_ = wrap(c, layer.running_mean_.data());
    running_var_ = wrap(c, layer.running_var_.data());
    const Dims& d = src.dims();
    per_channel_ = 1;
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (i != 1) per_channel_ *= static_cast<double>(d[i]);
    }
    src_desc_ = src;
  }

  void forward(const memory& src, const memory& dst, bool training) override {
    if (!training) {
      execute(infer_, {{DNNL_ARG_SRC, src},
                       {DNNL_ARG_DST, dst},
                       {DNNL_ARG_MEAN, running_mean_},
                       {DNNL_ARG_VARIANCE, running_var_},
                       {DNNL_ARG_SCALE, gamma_},
                       {DNNL_ARG_SHIFT, beta_}});
      return;
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},      {DNNL_ARG_DST, dst},
                                         {DNNL_ARG_MEAN, mean_},   {DNNL_ARG_VARIANCE, variance_},
                                         {DNNL_ARG_SCALE, gamma_}, {DNNL_ARG_SHIFT, beta_}};
    if (workspace_) args[DNNL_ARG_WORKSPACE] = workspace_;
    execute(train_, args);
    stream().wait();
    // PyTorch's running statistics: the variance term is the unbiased batch variance.
    const float m = layer_.momentum_;
    const float unbias =
        per_channel_ > 1 ? static_cast<float>(per_channel_ / (per_channel_ - 1)) : 1.0f;
    const float* mean = data_of(mean_);
    const float* var = data_of(variance_);
    for (std::size_t c = 0; c < layer_.channels_; ++c) {
      layer_.running_mean_[c] = (1 - m) * layer_.running_mean_[c] + m * mean[c];
      layer_.running_var_[c] = (1 - m) * layer_.running_var_[c] + m * var[c] * unbias;
    }
  }

  void backward(const memory& src, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    memory target = diff_src;
    if (!target) {
      if (!scratch_) scratch_ = make_memory(src_desc_);
      target = scratch_;
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_MEAN, mean_},
        {DNNL_ARG_VARIANCE, variance_},
        {DNNL_ARG_DIFF_DST, diff_dst},
        {DNNL_ARG_SCALE, gamma_},
        {DNNL_ARG_SHIFT, beta_},  // oneDNN 2.6 wants it, though unused
        {DNNL_ARG_DIFF_SRC, target},
        {DNNL_ARG_DIFF_SCALE, gamma_grad_},
        {DNNL_ARG_DIFF_SHIFT, beta_grad_}};
    if (workspace_) args[DNNL_ARG_WORKSPACE] = workspace_;
    execute(bwd_, args);
  }

 private:
  BatchNorm& layer_;
  dnnl::batch_normalization_forward train_, infer_;
  dnnl::batch_normalization_backward bwd_;
  memory mean_, variance_, gamma_, beta_, gamma_grad_, beta_grad_, running_mean_, running_var_;
  memory scratch_, workspace_;
  memory::desc src_desc_;
  double per_channel_ = 1;
};

BatchNorm::BatchNorm(int channels, float epsilon, float momentum, bool relu)
    : channels_(static_cast<std::size_t>(channels)),
      epsilon_(epsilon),
      momentum_(momentum),
      relu_(relu),
      running_mean_(channels_, 0.0f),
      running_var_(channels_, 1.0f) {}

void BatchNorm::bind(std::span<float> parameters, std::span<float> gradients) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  gamma_ = parameters.first(channels_);
  beta_ = parameters.subspan(channels_);
  gamma_grad_ = gradients.first(channels_);
  beta_grad_ = gradients.subspan(channels_);
}

void BatchNorm::init(std::mt19937& rng) {
  model::initialize(model::BatchNorm{static_cast<int>(channels_), epsilon_, momentum_, relu_},
                    std::span<float>(gamma_.data(), parameter_count()), rng);
}

std::unique_ptr<LayerPlan> BatchNorm::plan(const memory::desc& src) {
  return std::make_unique<BatchNormPlan>(*this, src);
}

}  // namespace scalebench::trainer::cpu
