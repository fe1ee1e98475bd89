#include "trainer/cpu/layers.hpp"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "trainer/model/dropout_mask.hpp"
#include "trainer/model/parameters.hpp"

namespace scalebench::trainer::cpu {
namespace {

using tag = memory::format_tag;
using dt = memory::data_type;
using dnnl::algorithm;
using dnnl::prop_kind;

memory::desc any_desc(const Dims& dims) { return memory::desc(dims, dt::f32, tag::any); }

Dims to_dims(const Pair& p) { return {p[0], p[1]}; }

void require_4d(const memory::desc& src, std::string_view layer) {
  if (src.dims().size() != 4) {
    throw std::invalid_argument(
        fmt::format("{} needs a 4-D input (N×C×H×W), got {} dimensions", layer, src.dims().size()));
  }
}

// Output extent of a window of `kernel` with `stride` over `size` padded by begin and end.
memory::dim output_extent(memory::dim size, int kernel, int stride, int begin, int end,
                          std::string_view layer) {
  const memory::dim padded = size + begin + end;
  if (padded < kernel) {
    throw std::invalid_argument(
        fmt::format("{}: kernel {} is larger than the padded input {}", layer, kernel, padded));
  }
  return (padded - kernel) / stride + 1;
}

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

namespace {

// ---- pooling ----

class PoolPlan final : public LayerPlan {
 public:
  PoolPlan(const Pool2dOptions& o, const memory::desc& src) {
    require_4d(src, "pooling");
    const Dims s = src.dims();
    const Dims dst_dims{
        s[0], s[1],
        output_extent(s[2], o.kernel[0], o.stride[0], o.padding[0], o.padding_end[0], "pooling"),
        output_extent(s[3], o.kernel[1], o.stride[1], o.padding[1], o.padding_end[1], "pooling")};
    const algorithm alg = o.kind == PoolKind::max       ? algorithm::pooling_max
                          : o.kind == PoolKind::average ? algorithm::pooling_avg_include_padding
                                                        : algorithm::pooling_avg_exclude_padding;
    const Dims strides = to_dims(o.stride), kernel = to_dims(o.kernel), pad_l = to_dims(o.padding),
               pad_r = to_dims(o.padding_end);
    // 2×2/2 max pooling of nChw8c (the convolutions' format on AVX2) runs in a loop of our own:
    // oneDNN 2.6's jit pooling takes ~4× the memory-bound time, and its backward zero-fills
    // diff_src before scattering. The backward finds the window's first maximum again from src
    // and dst (the order oneDNN and PyTorch pick it in) instead of keeping a workspace.
    fast_ = o.kind == PoolKind::max && o.kernel == Pair{2, 2} && o.stride == Pair{2, 2} &&
            o.padding == Pair{0, 0} && o.padding_end == Pair{0, 0} && s[2] % 2 == 0 &&
            s[3] % 2 == 0 && src == memory::desc(s, dt::f32, tag::aBcd8b);
    if (fast_) {
      dst_desc_ = memory::desc(dst_dims, dt::f32, tag::aBcd8b);
      blocks_ = static_cast<std::int64_t>(s[0] * ((s[1] + 7) / 8));
      oh_ = static_cast<std::int64_t>(dst_dims[2]);
      ow_ = static_cast<std::int64_t>(dst_dims[3]);
      return;
    }
    const dnnl::pooling_forward::primitive_desc fwd_pd(
        {prop_kind::forward_training, alg, src, any_desc(dst_dims), strides, kernel, pad_l, pad_r},
        engine());
    dst_desc_ = fwd_pd.dst_desc();
    fwd_ = dnnl::pooling_forward(fwd_pd);
    if (o.kind == PoolKind::max) workspace_ = make_memory(fwd_pd.workspace_desc());
    bwd_ = dnnl::pooling_backward(dnnl::pooling_backward::primitive_desc(
        {alg, src, dst_desc_, strides, kernel, pad_l, pad_r}, engine(), fwd_pd));
  }

  void forward(const memory& src, const memory& dst, bool) override {
    if (fast_) {
      fast_forward(data_of(src), data_of(dst));
      return;
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if (workspace_) args[DNNL_ARG_WORKSPACE] = workspace_;
    execute(fwd_, args);
  }

  void backward(const memory& src, const memory& dst, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    if (fast_) {
      fast_backward(data_of(src), data_of(dst), data_of(diff_dst), data_of(diff_src));
      return;
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, diff_dst},
                                         {DNNL_ARG_DIFF_SRC, diff_src}};
    if (workspace_) args[DNNL_ARG_WORKSPACE] = workspace_;
    execute(bwd_, args);
  }

 private:
  // nChw8c: the 8 channels of a block are contiguous, then width, then height.
  void fast_forward(const float* x, float* y) const {
    const std::int64_t ow = ow_, iw8 = 2 * ow_ * 8, rows = blocks_ * oh_;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* r0 = x + 2 * r * iw8;
      const float* r1 = r0 + iw8;
      float* out = y + r * ow * 8;
      for (std::int64_t j = 0; j < ow; ++j) {
        const float* a = r0 + 16 * j;
        const float* b = r1 + 16 * j;
        float* o = out + 8 * j;
#pragma omp simd
        for (int c = 0; c < 8; ++c) {
          const float m0 = a[c + 8] > a[c] ? a[c + 8] : a[c];
          const float m1 = b[c + 8] > b[c] ? b[c + 8] : b[c];
          o[c] = m1 > m0 ? m1 : m0;
        }
      }
    }
  }

  void fast_backward(const float* x, const float* y, const float* dy, float* dx) const {
    const std::int64_t ow = ow_, iw8 = 2 * ow_ * 8, rows = blocks_ * oh_;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* x0 = x + 2 * r * iw8;
      const float* x1 = x0 + iw8;
      float* d0 = dx + 2 * r * iw8;
      float* d1 = d0 + iw8;
      const float* yr = y + r * ow * 8;
      const float* dyr = dy + r * ow * 8;
      for (std::int64_t j = 0; j < ow; ++j) {
#pragma omp simd
        for (int c = 0; c < 8; ++c) {
          const std::int64_t k = 8 * j + c, i = 16 * j + c;
          const float m = yr[k], g0 = dyr[k];
          // The first of (0,0), (0,1), (1,0), (1,1) equal to the maximum takes the gradient.
          const bool e00 = x0[i] == m, e01 = x0[i + 8] == m, e10 = x1[i] == m;
          d0[i] = e00 ? g0 : 0.0f;
          const float g1 = e00 ? 0.0f : g0;
          d0[i + 8] = e01 ? g1 : 0.0f;
          const float g2 = e01 ? 0.0f : g1;
          d1[i] = e10 ? g2 : 0.0f;
          d1[i + 8] = e10 ? 0.0f : g2;
        }
      }
    }
  }

  bool fast_ = false;
  std::int64_t blocks_ = 0, oh_ = 0, ow_ = 0;
  dnnl::pooling_forward fwd_;
  dnnl::pooling_backward bwd_;
  memory workspace_;
};

// ---- batch normalization ----

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

namespace {

// ---- eltwise ----

class EltwisePlan final : public LayerPlan {
 public:
  EltwisePlan(Activation activation, const memory::desc& src) {
    const algorithm alg = activation == Activation::relu    ? algorithm::eltwise_relu
                          : activation == Activation::relu6 ? algorithm::eltwise_clip_v2
                                                            : algorithm::eltwise_tanh;
    const float alpha = 0.0f, beta = activation == Activation::relu6 ? 6.0f : 0.0f;
    const dnnl::eltwise_forward::primitive_desc fwd_pd(
        {prop_kind::forward_training, alg, src, alpha, beta}, engine());
    dst_desc_ = fwd_pd.dst_desc();
    fwd_ = dnnl::eltwise_forward(fwd_pd);
    bwd_ = dnnl::eltwise_backward(
        dnnl::eltwise_backward::primitive_desc({alg, src, src, alpha, beta}, engine(), fwd_pd));
  }
  void forward(const memory& src, const memory& dst, bool) override {
    execute(fwd_, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  }
  void backward(const memory& src, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    execute(bwd_,
            {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}});
  }

 private:
  dnnl::eltwise_forward fwd_;
  dnnl::eltwise_backward bwd_;
};

// ---- flatten ----

class FlattenPlan final : public LayerPlan {
 public:
  explicit FlattenPlan(const memory::desc& src) : plain_(plain_desc(src.dims())) {
    const Dims& d = src.dims();
    memory::dim features = 1;
    for (std::size_t i = 1; i < d.size(); ++i) features *= d[i];
    dst_desc_ = plain_desc({d[0], features});
    to_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), src, engine(), plain_));
    from_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain_, engine(), src));
  }
  void forward(const memory& src, const memory& dst, bool) override {
    to_plain_.execute(stream(), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, wrap(plain_, data_of(dst))}});
  }
  void backward(const memory&, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    from_plain_.execute(
        stream(), {{DNNL_ARG_FROM, wrap(plain_, data_of(diff_dst))}, {DNNL_ARG_TO, diff_src}});
  }

 private:
  memory::desc plain_;
  dnnl::reorder to_plain_, from_plain_;
};

}  // namespace

// ---- dropout ----

class DropoutPlan final : public LayerPlan {
 public:
  // Works on the plain (NCHW) layout so that element i of the mask is logical element i,
  // whatever blocked format the producer chose: the mask then depends on neither the CPU's ISA
  // (nChw8c on AVX2, nChw16c on AVX-512) nor the backend (the cuda backend's tensors are NCHW
  // and it hashes the same indices). A blocked input is reordered to plain on the way in, and
  // its gradient back on the way out.
  DropoutPlan(Dropout& layer, const memory::desc& src)
      : layer_(layer),
        plain_(plain_desc(src.dims())),
        count_(float_count(plain_)),
        mask_(count_),
        src_is_plain_(src == plain_) {
    dst_desc_ = plain_;
    if (!src_is_plain_) {
      to_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), src, engine(), plain_));
      from_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain_, engine(), src));
      diff_plain_ = make_memory(plain_);
    }
  }
  void forward(const memory& src, const memory& dst, bool training) override {
    float* y = data_of(dst);
    const float* x = data_of(src);
    if (!src_is_plain_) {
      to_plain_.execute(stream(), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
      stream().wait();
      x = y;  // masked in place below
    }
    if (!training || layer_.rate_ <= 0.0f) {
      if (x != y) std::memcpy(y, x, count_ * sizeof(float));
      return;
    }
    const std::uint64_t key = layer_.mask_key(layer_.calls_++);
    const std::uint32_t threshold = model::dropout_threshold(layer_.rate_);
    const float scale = 1.0f / (1.0f - layer_.rate_);
    float* mask = mask_.data();
    const auto n = static_cast<std::int64_t>(count_);
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const bool keep = model::dropout_keeps(key, static_cast<std::uint64_t>(i), threshold);
      mask[i] = keep ? scale : 0.0f;
      y[i] = keep ? x[i] * scale : 0.0f;
    }
  }
  void backward(const memory&, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    const float* dy = data_of(diff_dst);
    float* dx = src_is_plain_ ? data_of(diff_src) : data_of(diff_plain_);
    if (layer_.rate_ <= 0.0f) {
      if (dx != dy) std::memcpy(dx, dy, count_ * sizeof(float));
    } else {
      // The mask holds 0 or the scale: one multiply (dy·0 is ±0, as good as the 0 it was).
      const float* mask = mask_.data();
      const auto n = static_cast<std::int64_t>(count_);
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) dx[i] = dy[i] * mask[i];
    }
    if (!src_is_plain_) {
      from_plain_.execute(stream(), {{DNNL_ARG_FROM, diff_plain_}, {DNNL_ARG_TO, diff_src}});
      stream().wait();
    }
  }

 private:
  Dropout& layer_;
  memory::desc plain_;
  std::size_t count_;        // logical elements
  std::vector<float> mask_;  // 0 (dropped) or 1/(1 − rate) (kept), in logical order
  bool src_is_plain_;
  dnnl::reorder to_plain_, from_plain_;
  memory diff_plain_;  // the gradient in plain layout before its reorder to src's
};

// ---- dense ----

class DensePlan final : public LayerPlan {
 public:
  DensePlan(Dense& layer, const memory::desc& src) : layer_(layer) {
    const Dims& d = src.dims();
    memory::dim features = 1;
    for (std::size_t i = 1; i < d.size(); ++i) features *= d[i];
    if (!is_plain(src) || static_cast<std::size_t>(features) != layer.in_) {
      throw std::invalid_argument(fmt::format(
          "dense expects a plain input of {} features per image (put a flatten before it)",
          layer.in_));
    }
    batch_ = static_cast<std::size_t>(d[0]);
    dst_desc_ = plain_desc({d[0], static_cast<memory::dim>(layer.out_)});
  }
  void forward(const memory& src, const memory& dst, bool) override {
    const std::size_t in = layer_.in_, out = layer_.out_;
    float* y = data_of(dst);
    // Start every row of y at the bias, then y += x·W.
    for (std::size_t r = 0; r < batch_; ++r)
      std::copy(layer_.bias_.begin(), layer_.bias_.end(), y + r * out);
    sgemm('N', 'N', batch_, out, in, 1.0f, data_of(src), in, layer_.weights_.data(), out, 1.0f, y,
          out);
  }
  void backward(const memory& src, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    const std::size_t in = layer_.in_, out = layer_.out_;
    const float* dy = data_of(diff_dst);
    // dW = xᵀ·dy (in × out), db = column sums of dy, dx = dy·Wᵀ.
    sgemm('T', 'N', in, out, batch_, 1.0f, data_of(src), in, dy, out, 0.0f,
          layer_.weight_grad_.data(), out);
    std::fill(layer_.bias_grad_.begin(), layer_.bias_grad_.end(), 0.0f);
    for (std::size_t r = 0; r < batch_; ++r) {
      const float* row = dy + r * out;
      for (std::size_t j = 0; j < out; ++j) layer_.bias_grad_[j] += row[j];
    }
    if (diff_src) {
      sgemm('N', 'T', batch_, in, out, 1.0f, dy, out, layer_.weights_.data(), out, 0.0f,
            data_of(diff_src), in);
    }
  }

 private:
  Dense& layer_;
  std::size_t batch_ = 0;
};

// ---- the layers ----

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

std::unique_ptr<LayerPlan> Pool2d::plan(const memory::desc& src) {
  return std::make_unique<PoolPlan>(o_, src);
}

std::unique_ptr<LayerPlan> GlobalAvgPool::plan(const memory::desc& src) {
  require_4d(src, "global_avg_pool");
  Pool2dOptions o;
  o.kind = PoolKind::average;
  o.kernel = {static_cast<int>(src.dims()[2]), static_cast<int>(src.dims()[3])};
  o.stride = {1, 1};
  return std::make_unique<PoolPlan>(o, src);
}

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

std::unique_ptr<LayerPlan> Eltwise::plan(const memory::desc& src) {
  return std::make_unique<EltwisePlan>(activation_, src);
}

std::uint64_t Dropout::mask_key(std::uint64_t call) const {
  return model::dropout_mask_key(seed_, call);
}

std::unique_ptr<LayerPlan> Dropout::plan(const memory::desc& src) {
  return std::make_unique<DropoutPlan>(*this, src);
}

std::unique_ptr<LayerPlan> Flatten::plan(const memory::desc& src) {
  return std::make_unique<FlattenPlan>(src);
}

void Dense::bind(std::span<float> parameters, std::span<float> gradients) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  weights_ = parameters.first(in_ * out_);
  bias_ = parameters.subspan(in_ * out_, out_);
  weight_grad_ = gradients.first(in_ * out_);
  bias_grad_ = gradients.subspan(in_ * out_, out_);
}

void Dense::init(std::mt19937& rng) {
  model::initialize(model::Dense{in_, out_, init_},
                    std::span<float>(weights_.data(), parameter_count()), rng);
}

std::unique_ptr<LayerPlan> Dense::plan(const memory::desc& src) {
  return std::make_unique<DensePlan>(*this, src);
}

// ---- add and concat ----

AddPlan::AddPlan(const memory::desc& a, const memory::desc& b) : dst_desc_(a) {
  if (a.dims() != b.dims()) throw std::invalid_argument("add: the inputs' shapes differ");
  add_ = dnnl::binary(dnnl::binary::primitive_desc({algorithm::binary_add, a, b, a}, engine()));
}

void AddPlan::forward(const memory& a, const memory& b, const memory& dst) {
  execute(add_, {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, dst}});
}

void AddPlan::backward(const memory& diff_dst, const memory& diff_a, const memory& diff_b) {
  if (diff_a) reorder(diff_dst, diff_a);
  if (diff_b) reorder(diff_dst, diff_b);
}

ConcatPlan::ConcatPlan(const std::vector<memory::desc>& srcs) : srcs_(srcs) {
  if (srcs.empty()) throw std::invalid_argument("concat needs at least one input");
  const dnnl::concat::primitive_desc pd(1, srcs, engine());
  dst_desc_ = pd.dst_desc();
  concat_ = dnnl::concat(pd);
  memory::dim offset = 0;
  for (const memory::desc& s : srcs) {
    Dims offsets(s.dims().size(), 0);
    offsets[1] = offset;
    slices_.push_back(dst_desc_.submemory_desc(s.dims(), offsets));
    offset += s.dims()[1];
  }
}

void ConcatPlan::forward(const std::vector<memory>& srcs, const memory& dst) {
  std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}};
  for (std::size_t i = 0; i < srcs.size(); ++i)
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
  execute(concat_, args);
}

void ConcatPlan::backward(const memory& diff_dst, const std::vector<memory>& diff_srcs) {
  for (std::size_t i = 0; i < diff_srcs.size(); ++i) {
    if (diff_srcs[i])
      reorder(memory(slices_[i], engine(), diff_dst.get_data_handle()), diff_srcs[i]);
  }
}

// ---- softmax cross-entropy and sgemm ----

void sgemm(char transa, char transb, std::size_t m, std::size_t n, std::size_t k, float alpha,
           const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
           std::size_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(transa, transb, static_cast<dnnl_dim_t>(m), static_cast<dnnl_dim_t>(n),
                 static_cast<dnnl_dim_t>(k), alpha, a, static_cast<dnnl_dim_t>(lda), b,
                 static_cast<dnnl_dim_t>(ldb), beta, c, static_cast<dnnl_dim_t>(ldc));
  if (status != dnnl_success) {
    throw std::runtime_error(
        fmt::format("dnnl_sgemm({}, {}, M={}, N={}, K={}) failed with status {}", transa, transb, m,
                    n, k, static_cast<int>(status)));
  }
}

LossResult softmax_cross_entropy_forward(std::span<const float> logits,
                                         std::span<const std::int32_t> labels, std::size_t batch,
                                         std::size_t classes, std::span<float> probabilities) {
  LossResult result;
  for (std::size_t r = 0; r < batch; ++r) {
    const float* z = logits.data() + r * classes;
    float* p = probabilities.data() + r * classes;
    // Subtract the row maximum so exp() cannot overflow.
    const std::size_t arg_max = static_cast<std::size_t>(std::max_element(z, z + classes) - z);
    const float z_max = z[arg_max];
    double sum = 0.0;
    for (std::size_t j = 0; j < classes; ++j) {
      p[j] = std::exp(z[j] - z_max);
      sum += p[j];
    }
    const auto inv = static_cast<float>(1.0 / sum);
    for (std::size_t j = 0; j < classes; ++j) p[j] *= inv;
    const auto label = static_cast<std::size_t>(labels[r]);
    // log p(label) = z_label − z_max − log Σ exp(z − z_max): exact even when p underflows.
    result.loss_sum += std::log(sum) - static_cast<double>(z[label] - z_max);
    if (arg_max == label) ++result.correct;
  }
  return result;
}

void softmax_cross_entropy_backward(std::span<const float> probabilities,
                                    std::span<const std::int32_t> labels, std::size_t batch,
                                    std::size_t classes, std::span<float> dlogits) {
  const float scale = 1.0f / static_cast<float>(batch);
  for (std::size_t r = 0; r < batch; ++r) {
    const float* p = probabilities.data() + r * classes;
    float* d = dlogits.data() + r * classes;
    for (std::size_t j = 0; j < classes; ++j) d[j] = p[j] * scale;
    d[static_cast<std::size_t>(labels[r])] -= scale;
  }
}

}  // namespace scalebench::trainer::cpu
