// Conv2d on oneDNN's convolution primitives (forward, backward data, backward weights), its ReLU
// fused (trainer/cpu/layers.hpp).
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

}  // namespace

// ---- Conv2d ----

class Conv2dPlan final : public LayerPlan {
 public:
  Conv2dPlan(Conv2d& layer, const memory::desc& src) : layer_(layer) {
    const Conv2dOptions& o = layer.o_;
    require_4d(src, "conv2d");
    const Dims s = src.dims();
    if (s[1] != o.in_channels) {
      throw std::invalid_argument(
          fmt::format("conv2d expects {} input channels, got {}", o.in_channels, s[1]));
    }
    const Dims dst_dims{
        s[0], o.out_channels,
        output_extent(s[2], o.kernel[0], o.stride[0], o.padding[0], o.padding_end[0], "conv2d"),
        output_extent(s[3], o.kernel[1], o.stride[1], o.padding[1], o.padding_end[1], "conv2d")};
    const Dims w_dims = o.groups == 1
                            ? Dims{o.out_channels, o.in_channels, o.kernel[0], o.kernel[1]}
                            : Dims{o.groups, o.out_channels / o.groups, o.in_channels / o.groups,
                                   o.kernel[0], o.kernel[1]};
    const memory::desc w_user = plain_desc(w_dims);
    const memory::desc bias = o.bias ? plain_desc({o.out_channels}) : memory::desc();
    const Dims strides = to_dims(o.stride), pad_l = to_dims(o.padding),
               pad_r = to_dims(o.padding_end);

    // 3×3 stride-1 convolutions over 16+ input channels let oneDNN pick Winograd F(4×4, 3×3)
    // where its heuristic says it pays (mnist_cnn's second convolution: 43 → 31 ms per step of
    // 128 on one AVX-512 core); with fewer input channels Winograd's transforms cost more than
    // they save (its first convolution: 1.2 → 9.7 ms), so those stay direct. Winograd rounds
    // differently from the direct algorithm, as cuDNN's does; oneDNN only picks it for large
    // shapes (not for the small reference cases of tests/trainer/test_layers_torch.cpp).
    const bool winograd_candidate =
        o.kernel == Pair{3, 3} && o.stride == Pair{1, 1} && o.groups == 1 && o.in_channels >= 16;
    const algorithm conv_alg =
        winograd_candidate ? algorithm::convolution_auto : algorithm::convolution_direct;
    dnnl::primitive_attr attr;
    if (o.relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    const dnnl::convolution_forward::primitive_desc fwd_pd(
        {prop_kind::forward_training, conv_alg, any_desc(s), any_desc(w_dims), bias,
         any_desc(dst_dims), strides, pad_l, pad_r},
        attr, engine());
    dst_desc_ = fwd_pd.dst_desc();
    fwd_ = dnnl::convolution_forward(fwd_pd);
    src_ = Staged(src, fwd_pd.src_desc());
    w_fwd_ = Staged(w_user, fwd_pd.weights_desc());

    const dnnl::convolution_backward_data::primitive_desc data_pd(
        {conv_alg, any_desc(s), any_desc(w_dims), any_desc(dst_dims), strides, pad_l, pad_r},
        engine(), fwd_pd);
    bwd_data_ = dnnl::convolution_backward_data(data_pd);
    diff_src_ = Staged(src, data_pd.diff_src_desc());
    w_bwd_ = Staged(w_user, data_pd.weights_desc());
    diff_dst_data_ = Staged(dst_desc_, data_pd.diff_dst_desc());

    const dnnl::convolution_backward_weights::primitive_desc weights_pd(
        {conv_alg, fwd_pd.src_desc(), any_desc(w_dims), bias, any_desc(dst_dims), strides, pad_l,
         pad_r},
        engine(), fwd_pd);
    // src as the forward had it: for a 1-channel first layer 'any' would pick a blocked format
    // padded 8× and a reorder every step.
    bwd_weights_ = dnnl::convolution_backward_weights(weights_pd);
    reuse_src_ = weights_pd.src_desc() == fwd_pd.src_desc();
    if (!reuse_src_) src_weights_ = Staged(src, weights_pd.src_desc());
    diff_w_ = Staged(w_user, weights_pd.diff_weights_desc());
    diff_dst_weights_ = Staged(dst_desc_, weights_pd.diff_dst_desc());

    if (o.relu) {
      // ReLU's backward from its output: dy ← dy·[y > 0], in place.
      const dnnl::eltwise_forward::primitive_desc hint(
          {prop_kind::forward_training, algorithm::eltwise_relu_use_dst_for_bwd, dst_desc_, 0.0f},
          engine());
      relu_bwd_ = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(
          {algorithm::eltwise_relu_use_dst_for_bwd, dst_desc_, dst_desc_, 0.0f}, engine(), hint));
    }
    weights_ = wrap(w_user, layer.weights_.data());
    weight_grad_ = wrap(w_user, layer.weight_grad_.data());
    if (o.bias) {
      bias_ = wrap(bias, layer.bias_.data());
      bias_grad_ = wrap(bias, layer.bias_grad_.data());
    }
  }

  void forward(const memory& src, const memory& dst, bool) override {
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src_.in(src)}, {DNNL_ARG_WEIGHTS, w_fwd_.in(weights_)}, {DNNL_ARG_DST, dst}};
    if (bias_) args[DNNL_ARG_BIAS] = bias_;
    execute(fwd_, args);
  }

  void backward(const memory& src, const memory& dst, const memory& diff_dst,
                const memory& diff_src) override {
    if (relu_bwd_) {
      if (!relu_diff_) relu_diff_ = make_memory(dst_desc_);
      execute(
          relu_bwd_,
          {{DNNL_ARG_DST, dst}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, relu_diff_}});
      backward_linear(src, relu_diff_, diff_src);
      return;
    }
    backward_linear(src, diff_dst, diff_src);
  }

 private:
  void backward_linear(const memory& src, const memory& diff_dst, const memory& diff_src) {
    // The forward's staged copy of src is still there when the formats agree.
    const memory src_w = reuse_src_ ? src_.target(src) : src_weights_.in(src);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_w},
                                         {DNNL_ARG_DIFF_DST, diff_dst_weights_.in(diff_dst)},
                                         {DNNL_ARG_DIFF_WEIGHTS, diff_w_.target(weight_grad_)}};
    if (bias_grad_) args[DNNL_ARG_DIFF_BIAS] = bias_grad_;
    execute(bwd_weights_, args);
    diff_w_.out(weight_grad_);
    if (!diff_src) return;
    const memory target = diff_src_.target(diff_src);
    execute(bwd_data_, {{DNNL_ARG_DIFF_DST, diff_dst_data_.in(diff_dst)},
                        {DNNL_ARG_WEIGHTS, w_bwd_.in(weights_)},
                        {DNNL_ARG_DIFF_SRC, target}});
    diff_src_.out(diff_src);
  }

  Conv2d& layer_;
  memory relu_diff_;  // dy·[y > 0] of the fused ReLU
  dnnl::convolution_forward fwd_;
  dnnl::convolution_backward_data bwd_data_;
  dnnl::convolution_backward_weights bwd_weights_;
  dnnl::eltwise_backward relu_bwd_;
  bool reuse_src_ = true;
  Staged src_, w_fwd_, diff_src_, w_bwd_, diff_dst_data_, src_weights_, diff_w_, diff_dst_weights_;
  memory weights_, weight_grad_, bias_, bias_grad_;
};

std::size_t Conv2d::weight_count() const {
  return static_cast<std::size_t>(o_.out_channels) *
         static_cast<std::size_t>(o_.in_channels / o_.groups) *
         static_cast<std::size_t>(o_.kernel[0] * o_.kernel[1]);
}

std::size_t Conv2d::parameter_count() const {
  return weight_count() + (o_.bias ? static_cast<std::size_t>(o_.out_channels) : 0);
}

void Conv2d::bind(std::span<float> parameters, std::span<float> gradients) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  if (o_.groups < 1 || o_.in_channels % o_.groups != 0 || o_.out_channels % o_.groups != 0) {
    throw std::invalid_argument(fmt::format("conv2d: groups {} must divide {} and {}", o_.groups,
                                            o_.in_channels, o_.out_channels));
  }
  const std::size_t w = weight_count();
  weights_ = parameters.first(w);
  weight_grad_ = gradients.first(w);
  bias_ = parameters.subspan(w);
  bias_grad_ = gradients.subspan(w);
}

void Conv2d::init(std::mt19937& rng) {
  model::initialize(model::Conv2d{o_}, std::span<float>(weights_.data(), parameter_count()), rng);
}

std::unique_ptr<LayerPlan> Conv2d::plan(const memory::desc& src) {
  return std::make_unique<Conv2dPlan>(*this, src);
}

}  // namespace scalebench::trainer::cpu
