// Conv2d through cuDNN's graph API (--conv-engine graph, trainer/cuda/cudnn_graph.hpp): forward,
// backward-data and backward-filter plans chosen by heuristics and timed once per shape, the
// forward fused with the bias and the ReLU where cuDNN has a plan for that graph. bf16 reads
// bf16 copies from the context's scratch slots as the legacy layer does (conv2d.cpp). Whatever
// cannot be planned throws BackendError; make_conv2d_layer then falls back to the legacy layer
// and says why under --verbose. Unverified on a GPU when written (none was lent).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/cudnn_graph.hpp"
#include "trainer/cuda/cudnn_util.hpp"
#include "trainer/cuda/layers.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

// One cache for the process, as the legacy algorithms' (conv2d.cpp): ResNet-50 repeats shapes.
ConvPlanCache& plan_cache() {
  static ConvPlanCache cache;
  return cache;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

class GraphConvLayer final : public DeviceLayer {
 public:
  GraphConvLayer(const model::Conv2dOptions& o, Context& context, const Shape& in, float* params,
                 float* grads)
      : context_(context),
        bf16_(context.precision() == Precision::bf16),
        has_bias_(o.bias),
        relu_(o.relu),
        in_(in),
        relu_desc_(CUDNN_ACTIVATION_RELU, 0.0) {
    require_conv_input(o, in);
    ConvShape s;
    s.n = in.n;
    s.c = in.c;
    s.h = in.h;
    s.w = in.w;
    s.k = o.out_channels;
    s.r = o.kernel[0];
    s.s = o.kernel[1];
    s.stride_h = o.stride[0];
    s.stride_w = o.stride[1];
    s.pad_h = o.padding[0];
    s.pad_w = o.padding[1];
    s.groups = o.groups;
    out_ = {in.n, o.out_channels, static_cast<int>(s.out_h()), static_cast<int>(s.out_w())};
    weight_count_ = s.w_count();
    weights_ = params;
    weight_grad_ = grads;
    bias_ = params + weight_count_;
    bias_grad_ = grads + weight_count_;
    out_desc_ = TensorDesc(out_, CUDNN_DATA_FLOAT, context.layout());
    bias_desc_ = TensorDesc(Shape{1, o.out_channels, 1, 1});
    if (bf16_) {
      if (!bf16_io_) {  // bf16 activations are read and written where they are
        context.reserve_bf16(kBF16Input, in.count());
        context.reserve_bf16(kBF16Output, out_.count());
      }
      context.reserve_bf16(kBF16Weights, weight_count_);
      if (has_bias_) bias16_ = DeviceArray<std::uint16_t>(static_cast<std::size_t>(s.k));
    } else {
      // The graph API takes 16-byte aligned buffers only; a layer's slice of the flat parameter
      // buffers may start anywhere, so it gets aligned copies of its own.
      if (!aligned16(weights_) || !aligned16(weight_grad_)) {
        aligned_weights_ = DeviceArray<float>(weight_count_);
        aligned_grad_ = DeviceArray<float>(weight_count_);
      }
      if (has_bias_ && !aligned16(bias_)) {
        aligned_bias_ = DeviceArray<float>(static_cast<std::size_t>(s.k));
      }
    }
    plan(s, o);
  }

  void forward(const void* x, void* y, bool) override {
    cudnnHandle_t h = context_.cudnn();
    cudaStream_t stream = context_.stream();
    ConvBuffers b;
    if (bf16_io_) {  // x and y are bf16 already
      to_bf16(weights_, context_.bf16(kBF16Weights), weight_count_, stream);
      if (fused_bias_) to_bf16(bias_, bias16_.data(), bias16_.size(), stream);
      b = {const_cast<void*>(x), context_.bf16(kBF16Weights), y,
           fused_bias_ ? bias16_.data() : nullptr};
    } else if (bf16_) {
      to_bf16(static_cast<const float*>(x), context_.bf16(kBF16Input), in_.count(), stream);
      to_bf16(weights_, context_.bf16(kBF16Weights), weight_count_, stream);
      if (fused_bias_) to_bf16(bias_, bias16_.data(), bias16_.size(), stream);
      b = {context_.bf16(kBF16Input), context_.bf16(kBF16Weights), context_.bf16(kBF16Output),
           fused_bias_ ? bias16_.data() : nullptr};
    } else {
      b = {const_cast<void*>(x), weights_for_plan(), y, fused_bias_ ? bias_for_plan() : nullptr};
    }
    forward_->execute(h, b, context_.workspace(), context_.workspace_bytes());
    if (bf16_io_) {
      bias_relu_forward_bf16(context_, y, out_, has_bias_ && !fused_bias_ ? bias_ : nullptr,
                             relu_ && !fused_relu_);
      return;
    }
    if (bf16_) from_bf16(context_.bf16(kBF16Output), static_cast<float*>(y), out_.count(), stream);
    // What the plan could not fuse, as the legacy layer does it.
    if (has_bias_ && !fused_bias_) {
      SB_CHECK(cudnnAddTensor(h, &kOne, bias_desc_.get(), bias_, &kOne, out_desc_.get(), y));
    }
    if (relu_ && !fused_relu_) {
      SB_CHECK(cudnnActivationForward(h, relu_desc_.get(), &kOne, out_desc_.get(), y, &kZero,
                                      out_desc_.get(), y));
    }
  }

  void backward(const void* x, const void* y, void* dy, void* dx) override {
    cudnnHandle_t h = context_.cudnn();
    cudaStream_t stream = context_.stream();
    if (bf16_io_) {
      bias_relu_backward_bf16(context_, y, dy, out_, relu_, has_bias_ ? bias_grad_ : nullptr);
      std::uint16_t* w16 = context_.bf16(kBF16Weights);
      filter_->execute(h, {const_cast<void*>(x), w16, dy, nullptr}, context_.workspace(),
                       context_.workspace_bytes());
      from_bf16(w16, weight_grad_, weight_count_, stream);
      if (dx == nullptr) return;
      to_bf16(weights_, w16, weight_count_, stream);
      data_->execute(h, {dx, w16, dy, nullptr}, context_.workspace(), context_.workspace_bytes());
      return;
    }
    if (relu_) {
      // dy ← dy·[y > 0] in place (y > 0 exactly where the pre-activation was).
      SB_CHECK(cudnnActivationBackward(h, relu_desc_.get(), &kOne, out_desc_.get(), y,
                                       out_desc_.get(), dy, out_desc_.get(), y, &kZero,
                                       out_desc_.get(), dy));
    }
    if (has_bias_) {
      SB_CHECK(cudnnConvolutionBackwardBias(h, &kOne, out_desc_.get(), dy, &kZero, bias_desc_.get(),
                                            bias_grad_));
    }
    if (bf16_) {
      std::uint16_t* x16 = context_.bf16(kBF16Input);
      std::uint16_t* dy16 = context_.bf16(kBF16Output);
      std::uint16_t* w16 = context_.bf16(kBF16Weights);
      to_bf16(static_cast<const float*>(dy), dy16, out_.count(), stream);
      to_bf16(static_cast<const float*>(x), x16, in_.count(), stream);
      filter_->execute(h, {x16, w16, dy16, nullptr}, context_.workspace(),
                       context_.workspace_bytes());
      from_bf16(w16, weight_grad_, weight_count_, stream);
      if (dx == nullptr) return;
      to_bf16(weights_, w16, weight_count_, stream);
      data_->execute(h, {x16, w16, dy16, nullptr}, context_.workspace(),
                     context_.workspace_bytes());
      from_bf16(x16, static_cast<float*>(dx), in_.count(), stream);
      return;
    }
    float* dw = aligned_grad_.size() > 0 ? aligned_grad_.data() : weight_grad_;
    filter_->execute(h, {const_cast<void*>(x), dw, dy, nullptr}, context_.workspace(),
                     context_.workspace_bytes());
    if (dw != weight_grad_) copy(dw, weight_grad_, weight_count_);
    if (dx != nullptr) {
      data_->execute(h, {dx, weights_for_plan(), dy, nullptr}, context_.workspace(),
                     context_.workspace_bytes());
    }
  }

 private:
  // The three plans (tuned on scratch buffers of the plan's sizes, then freed) and the
  // workspace for the largest.
  void plan(const ConvShape& s, const model::Conv2dOptions& o) {
    ConvProblem p;
    p.shape = s;
    p.layout = context_.layout() == Layout::nhwc ? TensorLayout::nhwc : TensorLayout::nchw;
    p.data_type = bf16_ ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    const std::size_t value = bf16_ ? 2 : 4;
    DeviceArray<unsigned char> x(s.x_count() * value), w(s.w_count() * value),
        y(s.y_count() * value), bias(static_cast<std::size_t>(s.k) * value);
    // Zeros, not whatever the memory held: no NaN or denormal in the timed runs.
    // On the compute stream, which the autotune waits for (cudaMemset would go on the legacy
    // stream, which a non-blocking stream does not wait for).
    for (auto* a : {&x, &w, &y, &bias})
      SB_CHECK(cudaMemsetAsync(a->data(), 0, a->bytes(), context_.stream()));
    const ConvBuffers scratch{x.data(), w.data(), y.data(), bias.data()};
    AutotuneOptions tune;
    tune.deterministic = context_.deterministic();
    // Heuristics mode A ranks its proposals; finalizing one can compile it (NVRTC, seconds), and
    // ResNet-50 has ~70 problems: the first five of each (DeviceOptions), not PyTorch's ten.
    tune.max_candidates = context_.graph_candidates();
    // Forward with the bias and the ReLU fused, or with what of them cuDNN can fuse.
    std::vector<std::pair<bool, bool>> attempts{{o.bias, o.relu}};  // the most fused first
    if (o.relu && o.bias) attempts.emplace_back(true, false);
    if (o.relu || o.bias) attempts.emplace_back(false, false);
    for (const auto& [bias_fused, relu_fused] : attempts) {
      p.direction = ConvDirection::forward;
      p.bias = bias_fused;
      p.relu = relu_fused;
      try {
        forward_ = plan_cache().get(context_.cudnn(), p, scratch, tune);
        fused_bias_ = bias_fused;
        fused_relu_ = relu_fused;
        break;
      } catch (const BackendError& e) {
        if (!bias_fused && !relu_fused) throw;
        if (context_.verbose()) {
          fmt::print(stderr, "scalebench-train: conv2d {}: not fused ({}); trying less\n", p.key(),
                     e.what());
        }
      }
    }
    p.bias = p.relu = false;
    p.direction = ConvDirection::backward_data;
    data_ = plan_cache().get(context_.cudnn(), p, scratch, tune);
    p.direction = ConvDirection::backward_filter;
    filter_ = plan_cache().get(context_.cudnn(), p, scratch, tune);
    context_.reserve_workspace(std::max(
        {forward_->workspace_bytes(), data_->workspace_bytes(), filter_->workspace_bytes()}));
    if (bf16_io_ && o.bias) {  // the bias gradient's partial sums, before the products use it
      context_.reserve_workspace(channel_sums_scratch_bytes(
          static_cast<std::size_t>(s.n), static_cast<std::size_t>(s.k), out_.plane()));
    }
    if (context_.verbose()) {
      fmt::print(stderr, "scalebench-train: conv2d {}: forward {}{}{}, data {}, filter {}\n",
                 p.key(), forward_->engine(), fused_bias_ ? " +bias" : "",
                 fused_relu_ ? " +relu" : "", data_->engine(), filter_->engine());
    }
  }

  float* weights_for_plan() {
    if (aligned_weights_.size() == 0) return weights_;
    copy(weights_, aligned_weights_.data(), weight_count_);
    return aligned_weights_.data();
  }
  float* bias_for_plan() {
    if (aligned_bias_.size() == 0) return bias_;
    copy(bias_, aligned_bias_.data(), aligned_bias_.size());
    return aligned_bias_.data();
  }
  void copy(const float* from, float* to, std::size_t n) {
    SB_CHECK(
        cudaMemcpyAsync(to, from, n * sizeof(float), cudaMemcpyDeviceToDevice, context_.stream()));
  }

  Context& context_;
  bool bf16_, has_bias_, relu_;
  bool bf16_io_ = context_.activation_type() == DType::bf16;  // bf16 activations
  bool fused_bias_ = false, fused_relu_ = false;
  Shape in_;
  std::size_t weight_count_ = 0;
  TensorDesc out_desc_, bias_desc_;
  ActivationDesc relu_desc_;
  std::shared_ptr<const ConvPlan> forward_, data_, filter_;
  DeviceArray<float> aligned_weights_, aligned_grad_, aligned_bias_;
  DeviceArray<std::uint16_t> bias16_;
  float *weights_ = nullptr, *weight_grad_ = nullptr, *bias_ = nullptr, *bias_grad_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceLayer> make_graph_conv2d_layer(const model::Conv2dOptions& options,
                                                     Context& context, const Shape& in,
                                                     float* params, float* grads) {
  return std::make_unique<GraphConvLayer>(options, context, in, params, grads);
}

}  // namespace scalebench::trainer::cuda
