#include "trainer/cuda/layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <variant>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/errors.hpp"
#include "trainer/model/dropout_mask.hpp"

namespace scalebench::trainer::cuda {
namespace {

const float kOne = 1.0f;
const float kZero = 0.0f;

int output_extent(int size, int kernel, int stride, int padding, std::string_view layer) {
  const int padded = size + 2 * padding;
  if (padded < kernel) {
    throw std::invalid_argument(
        fmt::format("{}: kernel {} is larger than the padded input {}", layer, kernel, padded));
  }
  return (padded - kernel) / stride + 1;
}

void require_symmetric(const model::Pair& begin, const model::Pair& end, std::string_view layer) {
  if (begin != end) {
    throw BackendError(fmt::format(
        "backend cuda: {} with asymmetric padding ({},{} before, {},{} after) is not supported "
        "by cuDNN; use --backend cpu",
        layer, begin[0], begin[1], end[0], end[1]));
  }
}

void require_4d(const Shape& in, std::string_view layer) {
  if (in.h < 1 || in.w < 1) throw std::invalid_argument(fmt::format("{}: empty input", layer));
}

class FilterDesc : public Owned<cudnnFilterDescriptor_t, &cudnnDestroyFilterDescriptor> {
 public:
  FilterDesc(int k, int c, int h, int w, cudnnDataType_t type) {
    SB_CHECK(cudnnCreateFilterDescriptor(&handle_));
    SB_CHECK(cudnnSetFilter4dDescriptor(handle_, type, CUDNN_TENSOR_NCHW, k, c, h, w));
  }
};

class ConvDesc : public Owned<cudnnConvolutionDescriptor_t, &cudnnDestroyConvolutionDescriptor> {
 public:
  // fp32 arithmetic for fp32 and for bf16 tensors (cuDNN's PSEUDO_BFLOAT16_CONFIG).
  explicit ConvDesc(const model::Conv2dOptions& o) {
    SB_CHECK(cudnnCreateConvolutionDescriptor(&handle_));
    SB_CHECK(cudnnSetConvolution2dDescriptor(handle_, o.padding[0], o.padding[1], o.stride[0],
                                             o.stride[1], 1, 1, CUDNN_CROSS_CORRELATION,
                                             CUDNN_DATA_FLOAT));
    SB_CHECK(cudnnSetConvolutionGroupCount(handle_, o.groups));
  }
};

class ActivationDesc
    : public Owned<cudnnActivationDescriptor_t, &cudnnDestroyActivationDescriptor> {
 public:
  ActivationDesc(cudnnActivationMode_t mode, double coef) {
    SB_CHECK(cudnnCreateActivationDescriptor(&handle_));
    SB_CHECK(cudnnSetActivationDescriptor(handle_, mode, CUDNN_NOT_PROPAGATE_NAN, coef));
  }
};

class PoolingDesc : public Owned<cudnnPoolingDescriptor_t, &cudnnDestroyPoolingDescriptor> {
 public:
  explicit PoolingDesc(const model::Pool2dOptions& o) {
    const cudnnPoolingMode_t mode = o.kind == model::PoolKind::max ? CUDNN_POOLING_MAX
                                    : o.kind == model::PoolKind::average
                                        ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                        : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    SB_CHECK(cudnnCreatePoolingDescriptor(&handle_));
    SB_CHECK(cudnnSetPooling2dDescriptor(handle_, mode, CUDNN_NOT_PROPAGATE_NAN, o.kernel[0],
                                         o.kernel[1], o.padding[0], o.padding[1], o.stride[0],
                                         o.stride[1]));
  }
};

// ---- convolution algorithms: measured once per shape, cached for the process ----

struct ConvAlgorithms {
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t backward_data{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter{};
  cudnnMathType_t forward_math{}, data_math{}, filter_math{};
  std::size_t workspace = 0;  // the largest of the three
};

// The first (fastest) result that ran; cudnnFind* sorts by time.
// fp32 only: no algorithm that converts to fp16 inside (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION),
// none that needs more workspace than `limit`, and with `deterministic` none that cuDNN says
// may give different bits from run to run (atomics).
template <typename Perf>
const Perf& fastest(const Perf* results, int count, std::size_t limit, bool deterministic,
                    std::string_view what) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS && results[i].memory <= limit &&
        results[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
        (!deterministic || results[i].determinism == CUDNN_DETERMINISTIC)) {
      return results[i];
    }
  }
  throw BackendError(fmt::format("backend cuda: cuDNN found no {} algorithm that runs", what));
}

// Like PyTorch's cudnn.benchmark: the first plan of a shape runs every algorithm once
// (cudnnFind*) and keeps the fastest; later plans of the same shape (the same layer shape
// recurs dozens of times in ResNet-50) reuse it.
ConvAlgorithms find_algorithms(Context& context, const TensorDesc& x, const FilterDesc& w,
                               const TensorDesc& y, const ConvDesc& fwd, const ConvDesc& data,
                               const ConvDesc& filter, const std::string& key) {
  static std::mutex mutex;
  static std::map<std::string, ConvAlgorithms> cache;
  const std::lock_guard lock(mutex);
  const std::string device_key = fmt::format("{}:{}{}", context.device(), key,
                                             context.deterministic() ? " deterministic" : "");
  if (auto it = cache.find(device_key); it != cache.end()) return it->second;

  cudnnHandle_t h = context.cudnn();
  // Find times the algorithms on the handle's stream: queued work would count against the first.
  context.synchronize();
  // Leave room for the activations: no algorithm may want more than half the free memory.
  std::size_t free_bytes = 0, total_bytes = 0;
  SB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t workspace_limit = free_bytes / 2;
  ConvAlgorithms a;
  {
    cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    SB_CHECK(cudnnFindConvolutionForwardAlgorithm(h, x.get(), w.get(), fwd.get(), y.get(),
                                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
                                                  results));
    const auto& best =
        fastest(results, count, workspace_limit, context.deterministic(), "forward convolution");
    a.forward = best.algo;
    a.forward_math = best.mathType;
    a.workspace = std::max(a.workspace, best.memory);
  }
  {
    cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int count = 0;
    SB_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(h, w.get(), y.get(), data.get(), x.get(),
                                                       CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                       &count, results));
    const auto& best = fastest(results, count, workspace_limit, context.deterministic(),
                               "backward-data convolution");
    a.backward_data = best.algo;
    a.data_math = best.mathType;
    a.workspace = std::max(a.workspace, best.memory);
  }
  {
    cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int count = 0;
    SB_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x.get(), y.get(), filter.get(), w.get(),
                                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                         &count, results));
    const auto& best = fastest(results, count, workspace_limit, context.deterministic(),
                               "backward-filter convolution");
    a.backward_filter = best.algo;
    a.filter_math = best.mathType;
    a.workspace = std::max(a.workspace, best.memory);
  }
  return cache.emplace(device_key, a).first->second;
}

// ---- convolution ----

cudnnDataType_t compute_type(const Context& context) {
  return context.precision() == Precision::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// With bf16, the convolution reads bf16 copies of x, W and dy from the context's scratch slots
// and writes y, dx and dW in bf16 there; casts move them from and to the fp32 tensors. Bias,
// ReLU and everything around the layer stay fp32.
class ConvLayer final : public DeviceLayer {
 public:
  ConvLayer(const model::Conv2dOptions& o, Context& context, const Shape& in, float* params,
            float* grads)
      : context_(context),
        bf16_(context.precision() == Precision::bf16),
        has_bias_(o.bias),
        relu_(o.relu),
        in_(in),
        in_desc_(in),
        conv_in_desc_(in, compute_type(context)),
        w_desc_(o.out_channels, o.in_channels / o.groups, o.kernel[0], o.kernel[1],
                compute_type(context)),
        fwd_(o),
        data_(o),
        filter_(o),
        relu_desc_(CUDNN_ACTIVATION_RELU, 0.0) {
    require_symmetric(o.padding, o.padding_end, "conv2d");
    if (in.c != o.in_channels) {
      throw std::invalid_argument(
          fmt::format("conv2d expects {} input channels, got {}", o.in_channels, in.c));
    }
    out_ = {in.n, o.out_channels,
            output_extent(in.h, o.kernel[0], o.stride[0], o.padding[0], "conv2d"),
            output_extent(in.w, o.kernel[1], o.stride[1], o.padding[1], "conv2d")};
    int n = 0, c = 0, h = 0, w = 0;
    SB_CHECK(cudnnGetConvolution2dForwardOutputDim(fwd_.get(), conv_in_desc_.get(), w_desc_.get(),
                                                   &n, &c, &h, &w));
    if (Shape{n, c, h, w} != out_) {
      throw std::logic_error(fmt::format("conv2d: cuDNN's output {} differs from {}",
                                         Shape{n, c, h, w}.str(), out_.str()));
    }
    out_desc_ = TensorDesc(out_);
    conv_out_desc_ = TensorDesc(out_, compute_type(context));
    bias_desc_ = TensorDesc(Shape{1, o.out_channels, 1, 1});
    const std::size_t weights = static_cast<std::size_t>(o.out_channels) *
                                static_cast<std::size_t>(o.in_channels / o.groups) *
                                static_cast<std::size_t>(o.kernel[0] * o.kernel[1]);
    weight_count_ = weights;
    if (bf16_) {
      context.reserve_bf16(kBF16Input, in.count());
      context.reserve_bf16(kBF16Output, out_.count());
      context.reserve_bf16(kBF16Weights, weights);
    }
    weights_ = params;
    weight_grad_ = grads;
    bias_ = params + weights;
    bias_grad_ = grads + weights;
    const std::string key = fmt::format(
        "x{} k{}x{}x{} s{},{} p{},{} g{} {}", in.str(), o.out_channels, o.kernel[0], o.kernel[1],
        o.stride[0], o.stride[1], o.padding[0], o.padding[1], o.groups, bf16_ ? "bf16" : "fp32");
    algorithms_ =
        find_algorithms(context, conv_in_desc_, w_desc_, conv_out_desc_, fwd_, data_, filter_, key);
    SB_CHECK(cudnnSetConvolutionMathType(fwd_.get(), algorithms_.forward_math));
    SB_CHECK(cudnnSetConvolutionMathType(data_.get(), algorithms_.data_math));
    SB_CHECK(cudnnSetConvolutionMathType(filter_.get(), algorithms_.filter_math));
    context.reserve_workspace(algorithms_.workspace);
  }

  void forward(const float* x, float* y, bool) override {
    cudnnHandle_t h = context_.cudnn();
    if (bf16_) {
      cudaStream_t s = context_.stream();
      to_bf16(x, context_.bf16(kBF16Input), in_.count(), s);
      to_bf16(weights_, context_.bf16(kBF16Weights), weight_count_, s);
      SB_CHECK(cudnnConvolutionForward(
          h, &kOne, conv_in_desc_.get(), context_.bf16(kBF16Input), w_desc_.get(),
          context_.bf16(kBF16Weights), fwd_.get(), algorithms_.forward, context_.workspace(),
          context_.workspace_bytes(), &kZero, conv_out_desc_.get(), context_.bf16(kBF16Output)));
      from_bf16(context_.bf16(kBF16Output), y, out_.count(), s);
    } else {
      SB_CHECK(cudnnConvolutionForward(h, &kOne, in_desc_.get(), x, w_desc_.get(), weights_,
                                       fwd_.get(), algorithms_.forward, context_.workspace(),
                                       context_.workspace_bytes(), &kZero, out_desc_.get(), y));
    }
    if (has_bias_) {
      SB_CHECK(cudnnAddTensor(h, &kOne, bias_desc_.get(), bias_, &kOne, out_desc_.get(), y));
    }
    if (relu_) {
      SB_CHECK(cudnnActivationForward(h, relu_desc_.get(), &kOne, out_desc_.get(), y, &kZero,
                                      out_desc_.get(), y));
    }
  }

  void backward(const float* x, const float* y, float* dy, float* dx) override {
    cudnnHandle_t h = context_.cudnn();
    if (relu_) {
      // dy ← dy·[y > 0] in place (y > 0 exactly where the pre-activation was).
      SB_CHECK(cudnnActivationBackward(h, relu_desc_.get(), &kOne, out_desc_.get(), y,
                                       out_desc_.get(), dy, out_desc_.get(), y, &kZero,
                                       out_desc_.get(), dy));
    }
    if (bf16_) {
      backward_bf16(x, dy, dx);
      return;
    }
    SB_CHECK(cudnnConvolutionBackwardFilter(h, &kOne, in_desc_.get(), x, out_desc_.get(), dy,
                                            filter_.get(), algorithms_.backward_filter,
                                            context_.workspace(), context_.workspace_bytes(),
                                            &kZero, w_desc_.get(), weight_grad_));
    if (has_bias_) {
      SB_CHECK(cudnnConvolutionBackwardBias(h, &kOne, out_desc_.get(), dy, &kZero, bias_desc_.get(),
                                            bias_grad_));
    }
    if (dx != nullptr) {
      SB_CHECK(cudnnConvolutionBackwardData(h, &kOne, w_desc_.get(), weights_, out_desc_.get(), dy,
                                            data_.get(), algorithms_.backward_data,
                                            context_.workspace(), context_.workspace_bytes(),
                                            &kZero, in_desc_.get(), dx));
    }
  }

 private:
  // dy (after the fused ReLU's mask) in bf16 feeds both products; x and W are cast again rather
  // than kept from forward, so the scratch slots stay shared by all layers.
  void backward_bf16(const float* x, float* dy, float* dx) {
    cudnnHandle_t h = context_.cudnn();
    cudaStream_t s = context_.stream();
    std::uint16_t* x16 = context_.bf16(kBF16Input);
    std::uint16_t* dy16 = context_.bf16(kBF16Output);
    std::uint16_t* w16 = context_.bf16(kBF16Weights);
    if (has_bias_) {
      SB_CHECK(cudnnConvolutionBackwardBias(h, &kOne, out_desc_.get(), dy, &kZero, bias_desc_.get(),
                                            bias_grad_));
    }
    to_bf16(dy, dy16, out_.count(), s);
    to_bf16(x, x16, in_.count(), s);
    SB_CHECK(cudnnConvolutionBackwardFilter(
        h, &kOne, conv_in_desc_.get(), x16, conv_out_desc_.get(), dy16, filter_.get(),
        algorithms_.backward_filter, context_.workspace(), context_.workspace_bytes(), &kZero,
        w_desc_.get(), w16));
    from_bf16(w16, weight_grad_, weight_count_, s);
    if (dx == nullptr) return;
    to_bf16(weights_, w16, weight_count_, s);
    SB_CHECK(cudnnConvolutionBackwardData(h, &kOne, w_desc_.get(), w16, conv_out_desc_.get(), dy16,
                                          data_.get(), algorithms_.backward_data,
                                          context_.workspace(), context_.workspace_bytes(), &kZero,
                                          conv_in_desc_.get(), x16));
    from_bf16(x16, dx, in_.count(), s);
  }

  Context& context_;
  bool bf16_, has_bias_, relu_;
  Shape in_;
  std::size_t weight_count_ = 0;
  // fp32 descriptors of x and y (bias, ReLU, and the convolution in fp32), and the
  // convolution's own (bf16 when the precision is).
  TensorDesc in_desc_, conv_in_desc_, out_desc_, conv_out_desc_, bias_desc_;
  FilterDesc w_desc_;
  ConvDesc fwd_, data_, filter_;  // one per direction: each keeps its algorithm's math type
  ActivationDesc relu_desc_;
  ConvAlgorithms algorithms_;
  float *weights_ = nullptr, *weight_grad_ = nullptr, *bias_ = nullptr, *bias_grad_ = nullptr;
};

// ---- pooling ----

class PoolLayer final : public DeviceLayer {
 public:
  PoolLayer(const model::Pool2dOptions& o, Context& context, const Shape& in)
      : context_(context), in_desc_(in), pool_(o) {
    require_4d(in, "pooling");
    require_symmetric(o.padding, o.padding_end, "pooling");
    out_ = {in.n, in.c, output_extent(in.h, o.kernel[0], o.stride[0], o.padding[0], "pooling"),
            output_extent(in.w, o.kernel[1], o.stride[1], o.padding[1], "pooling")};
    int n = 0, c = 0, h = 0, w = 0;
    SB_CHECK(cudnnGetPooling2dForwardOutputDim(pool_.get(), in_desc_.get(), &n, &c, &h, &w));
    if (Shape{n, c, h, w} != out_) {
      throw std::logic_error(fmt::format("pooling: cuDNN's output {} differs from {}",
                                         Shape{n, c, h, w}.str(), out_.str()));
    }
    out_desc_ = TensorDesc(out_);
  }
  void forward(const float* x, float* y, bool) override {
    SB_CHECK(cudnnPoolingForward(context_.cudnn(), pool_.get(), &kOne, in_desc_.get(), x, &kZero,
                                 out_desc_.get(), y));
  }
  void backward(const float* x, const float* y, float* dy, float* dx) override {
    if (dx == nullptr) return;
    SB_CHECK(cudnnPoolingBackward(context_.cudnn(), pool_.get(), &kOne, out_desc_.get(), y,
                                  out_desc_.get(), dy, in_desc_.get(), x, &kZero, in_desc_.get(),
                                  dx));
  }

 private:
  Context& context_;
  TensorDesc in_desc_, out_desc_;
  PoolingDesc pool_;
};

// ---- batch normalization ----

class BatchNormLayer final : public DeviceLayer {
 public:
  BatchNormLayer(const model::BatchNorm& op, Context& context, const Shape& in, float* params,
                 float* grads, LayerState& state)
      : context_(context),
        state_(state),
        epsilon_(op.epsilon),
        momentum_(op.momentum),
        relu_(op.relu),
        desc_(in),
        relu_desc_(CUDNN_ACTIVATION_RELU, 0.0),
        param_desc_(desc_),
        save_mean_(static_cast<std::size_t>(op.channels)),
        save_inv_var_(static_cast<std::size_t>(op.channels)) {
    if (in.c != op.channels) {
      throw std::invalid_argument(
          fmt::format("batch_norm expects {} channels in dimension 1", op.channels));
    }
    if (epsilon_ < CUDNN_BN_MIN_EPSILON) {
      throw BackendError(fmt::format("backend cuda: batch norm epsilon {} is below cuDNN's {}",
                                     epsilon_, CUDNN_BN_MIN_EPSILON));
    }
    out_ = in;
    const auto c = static_cast<std::size_t>(op.channels);
    gamma_ = params;
    beta_ = params + c;
    gamma_grad_ = grads;
    beta_grad_ = grads + c;
  }

  void forward(const float* x, float* y, bool training) override {
    cudnnHandle_t h = context_.cudnn();
    if (training) {
      // cuDNN updates the running variance from the unbiased batch variance, as PyTorch does.
      SB_CHECK(cudnnBatchNormalizationForwardTraining(
          h, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, desc_.get(), x, desc_.get(), y,
          param_desc_.get(), gamma_, beta_, momentum_, state_.running_mean.data(),
          state_.running_var.data(), epsilon_, save_mean_.data(), save_inv_var_.data()));
    } else {
      SB_CHECK(cudnnBatchNormalizationForwardInference(
          h, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, desc_.get(), x, desc_.get(), y,
          param_desc_.get(), gamma_, beta_, state_.running_mean.data(), state_.running_var.data(),
          epsilon_));
    }
    if (relu_) {
      SB_CHECK(cudnnActivationForward(h, relu_desc_.get(), &kOne, desc_.get(), y, &kZero,
                                      desc_.get(), y));
    }
  }

  void backward(const float* x, const float* y, float* dy, float* dx) override {
    cudnnHandle_t h = context_.cudnn();
    if (relu_) {
      SB_CHECK(cudnnActivationBackward(h, relu_desc_.get(), &kOne, desc_.get(), y, desc_.get(), dy,
                                       desc_.get(), y, &kZero, desc_.get(), dy));
    }
    float* target = dx;
    if (target == nullptr) {  // cuDNN always writes dx; the first layer has nowhere to put it
      if (scratch_.size() == 0) scratch_ = DeviceArray<float>(out_.count());
      target = scratch_.data();
    }
    SB_CHECK(cudnnBatchNormalizationBackward(
        h, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero, desc_.get(), x, desc_.get(), dy,
        desc_.get(), target, param_desc_.get(), gamma_, gamma_grad_, beta_grad_, epsilon_,
        save_mean_.data(), save_inv_var_.data()));
  }

 private:
  Context& context_;
  LayerState& state_;
  double epsilon_, momentum_;
  bool relu_;
  TensorDesc desc_;
  ActivationDesc relu_desc_;
  BatchNormParamDesc param_desc_;
  DeviceArray<float> save_mean_, save_inv_var_, scratch_;
  float *gamma_ = nullptr, *beta_ = nullptr, *gamma_grad_ = nullptr, *beta_grad_ = nullptr;
};

// ---- activations ----

class ActivationLayer final : public DeviceLayer {
 public:
  ActivationLayer(model::Activation activation, Context& context, const Shape& in)
      : context_(context),
        desc_(in),
        activation_(activation == model::Activation::relu    ? CUDNN_ACTIVATION_RELU
                    : activation == model::Activation::relu6 ? CUDNN_ACTIVATION_CLIPPED_RELU
                                                             : CUDNN_ACTIVATION_TANH,
                    activation == model::Activation::relu6 ? 6.0 : 0.0) {
    out_ = in;
  }
  void forward(const float* x, float* y, bool) override {
    SB_CHECK(cudnnActivationForward(context_.cudnn(), activation_.get(), &kOne, desc_.get(), x,
                                    &kZero, desc_.get(), y));
  }
  void backward(const float* x, const float* y, float* dy, float* dx) override {
    if (dx == nullptr) return;
    SB_CHECK(cudnnActivationBackward(context_.cudnn(), activation_.get(), &kOne, desc_.get(), y,
                                     desc_.get(), dy, desc_.get(), x, &kZero, desc_.get(), dx));
  }

 private:
  Context& context_;
  TensorDesc desc_;
  ActivationDesc activation_;
};

// ---- dropout ----

class DropoutLayer final : public DeviceLayer {
 public:
  DropoutLayer(const model::Dropout& op, Context& context, const Shape& in, LayerState& state)
      : context_(context),
        seed_(op.seed),
        state_(state),
        rate_(op.rate),
        threshold_(model::dropout_threshold(op.rate)),
        scale_(1.0f / (1.0f - op.rate)),
        host_key_(1),
        device_key_(1) {
    out_ = in;
  }
  void prepare_step() override {
    // The CPU backend's key for its k-th call, so both backends drop the same elements. The
    // previous step's copy of it has run: its forward finished before its loss was read.
    host_key_.data()[0] = model::dropout_mask_key(seed_, state_.dropout_calls++);
  }
  void forward(const float* x, float* y, bool training) override {
    if (!training || rate_ <= 0.0f) {
      copy(x, y);
      return;
    }
    SB_CHECK(cudaMemcpyAsync(device_key_.data(), host_key_.data(), sizeof(std::uint64_t),
                             cudaMemcpyHostToDevice, context_.stream()));
    dropout_forward(x, y, out_.count(), device_key_.data(), threshold_, scale_, context_.stream());
  }
  void backward(const float*, const float*, float* dy, float* dx) override {
    if (dx == nullptr) return;
    if (rate_ <= 0.0f) {
      copy(dy, dx);
      return;
    }
    dropout_backward(dy, dx, out_.count(), device_key_.data(), threshold_, scale_,
                     context_.stream());
  }

 private:
  void copy(const float* from, float* to) {
    if (from == to) return;
    SB_CHECK(cudaMemcpyAsync(to, from, out_.count() * sizeof(float), cudaMemcpyDeviceToDevice,
                             context_.stream()));
  }
  Context& context_;
  std::uint64_t seed_;
  LayerState& state_;
  float rate_;
  std::uint32_t threshold_;
  float scale_;
  PinnedArray<std::uint64_t> host_key_;
  DeviceArray<std::uint64_t> device_key_;
};

// ---- flatten: the same memory, copied to its own buffer ----

class FlattenLayer final : public DeviceLayer {
 public:
  FlattenLayer(Context& context, const Shape& in) : context_(context) {
    out_ = {in.n, in.c * in.h * in.w, 1, 1};
  }
  void forward(const float* x, float* y, bool) override { copy(x, y); }
  void backward(const float*, const float*, float* dy, float* dx) override {
    if (dx != nullptr) copy(dy, dx);
  }

 private:
  void copy(const float* from, float* to) {
    SB_CHECK(cudaMemcpyAsync(to, from, out_.count() * sizeof(float), cudaMemcpyDeviceToDevice,
                             context_.stream()));
  }
  Context& context_;
};

// ---- dense ----

// Row-major y (batch × out) = x (batch × in) · W (in × out) + b. cuBLAS is column-major, where
// the same memory holds the transposes: yᵀ = Wᵀ·xᵀ with Wᵀ (out × in, ld out) and xᵀ (in × batch).
class DenseLayer final : public DeviceLayer {
 public:
  DenseLayer(const model::Dense& op, Context& context, const Shape& in, float* params, float* grads)
      : context_(context),
        bf16_(context.precision() == Precision::bf16),
        in_(static_cast<int>(op.in)),
        outputs_(static_cast<int>(op.out)) {
    if (static_cast<std::size_t>(in.c) * static_cast<std::size_t>(in.h) *
            static_cast<std::size_t>(in.w) !=
        op.in) {
      throw std::invalid_argument(
          fmt::format("dense expects {} features per image, got {}", op.in, in.str()));
    }
    batch_ = in.n;
    out_ = {in.n, outputs_, 1, 1};
    out_desc_ = TensorDesc(out_);
    bias_desc_ = TensorDesc(Shape{1, outputs_, 1, 1});
    const std::size_t weights = op.in * op.out;
    weights_ = params;
    bias_ = params + weights;
    weight_grad_ = grads;
    bias_grad_ = grads + weights;
    if (bf16_) {
      context.reserve_bf16(kBF16Input, static_cast<std::size_t>(batch_) * op.in);
      context.reserve_bf16(kBF16Output, static_cast<std::size_t>(batch_) * op.out);
      context.reserve_bf16(kBF16Weights, weights);
    }
  }

  void forward(const float* x, float* y, bool) override {
    if (bf16_) {
      // bf16 inputs, fp32 output and accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F).
      to_bf16(x, context_.bf16(kBF16Input), rows(in_), context_.stream());
      to_bf16(weights_, context_.bf16(kBF16Weights), weight_count(), context_.stream());
      gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_N, outputs_, batch_, in_, context_.bf16(kBF16Weights),
                outputs_, context_.bf16(kBF16Input), in_, y, outputs_);
    } else {
      SB_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, outputs_, batch_, in_,
                           &kOne, weights_, outputs_, x, in_, &kZero, y, outputs_));
    }
    SB_CHECK(cudnnAddTensor(context_.cudnn(), &kOne, bias_desc_.get(), bias_, &kOne,
                            out_desc_.get(), y));
  }

  void backward(const float* x, const float*, float* dy, float* dx) override {
    if (bf16_) {
      backward_bf16(x, dy, dx);
      return;
    }
    // dW (in × out, row-major) = xᵀ·dy; column-major: dWᵀ (out × in) = dyᵀ · x.
    SB_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, outputs_, in_, batch_, &kOne,
                         dy, outputs_, x, in_, &kZero, weight_grad_, outputs_));
    // db = Σ over rows of dy: the per-channel sum of an N×out×1×1 tensor.
    SB_CHECK(cudnnConvolutionBackwardBias(context_.cudnn(), &kOne, out_desc_.get(), dy, &kZero,
                                          bias_desc_.get(), bias_grad_));
    if (dx != nullptr) {
      // dx (batch × in) = dy·Wᵀ; column-major: dxᵀ (in × batch) = W (in × out) · dyᵀ.
      SB_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, in_, batch_, outputs_,
                           &kOne, weights_, outputs_, dy, outputs_, &kZero, dx, in_));
    }
  }

 private:
  std::size_t rows(int width) const {
    return static_cast<std::size_t>(batch_) * static_cast<std::size_t>(width);
  }
  std::size_t weight_count() const {
    return static_cast<std::size_t>(in_) * static_cast<std::size_t>(outputs_);
  }
  void gemm_bf16(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                 const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb, float* c,
                 int ldc) {
    SB_CHECK(cublasGemmEx(context_.cublas(), ta, tb, m, n, k, &kOne, a, CUDA_R_16BF, lda, b,
                          CUDA_R_16BF, ldb, &kZero, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
  }
  // The same three products as fp32, on bf16 copies of x, dy and W.
  void backward_bf16(const float* x, float* dy, float* dx) {
    cudaStream_t s = context_.stream();
    std::uint16_t* x16 = context_.bf16(kBF16Input);
    std::uint16_t* dy16 = context_.bf16(kBF16Output);
    std::uint16_t* w16 = context_.bf16(kBF16Weights);
    to_bf16(dy, dy16, rows(outputs_), s);
    to_bf16(x, x16, rows(in_), s);
    gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_T, outputs_, in_, batch_, dy16, outputs_, x16, in_,
              weight_grad_, outputs_);
    SB_CHECK(cudnnConvolutionBackwardBias(context_.cudnn(), &kOne, out_desc_.get(), dy, &kZero,
                                          bias_desc_.get(), bias_grad_));
    if (dx == nullptr) return;
    to_bf16(weights_, w16, weight_count(), s);
    gemm_bf16(CUBLAS_OP_T, CUBLAS_OP_N, in_, batch_, outputs_, w16, outputs_, dy16, outputs_, dx,
              in_);
  }

  Context& context_;
  bool bf16_;
  int in_, outputs_, batch_ = 0;
  TensorDesc out_desc_, bias_desc_;
  float *weights_ = nullptr, *bias_ = nullptr, *weight_grad_ = nullptr, *bias_grad_ = nullptr;
};

DeviceArray<float> to_device(std::span<const float> host) {
  DeviceArray<float> a(host.size());
  if (!host.empty()) {
    SB_CHECK(cudaMemcpy(a.data(), host.data(), a.bytes(), cudaMemcpyHostToDevice));
  }
  return a;
}

}  // namespace

std::string Shape::str() const { return fmt::format("{}x{}x{}x{}", n, c, h, w); }

TensorDesc::TensorDesc(const Shape& s, cudnnDataType_t type) {
  SB_CHECK(cudnnCreateTensorDescriptor(&handle_));
  SB_CHECK(cudnnSetTensor4dDescriptor(handle_, CUDNN_TENSOR_NCHW, type, s.n, s.c, s.h, s.w));
}

BatchNormParamDesc::BatchNormParamDesc(const TensorDesc& data) {
  SB_CHECK(cudnnCreateTensorDescriptor(&handle_));
  SB_CHECK(cudnnDeriveBNTensorDescriptor(handle_, data.get(), CUDNN_BATCHNORM_SPATIAL));
}

std::optional<std::string> unsupported(const model::Op& op) {
  const auto asymmetric = [](std::string_view what, const model::Pair& begin,
                             const model::Pair& end) -> std::optional<std::string> {
    if (begin == end) return std::nullopt;
    return fmt::format(
        "{} with asymmetric padding ({},{} before, {},{} after) is not supported by cuDNN", what,
        begin[0], begin[1], end[0], end[1]);
  };
  if (const auto* conv = std::get_if<model::Conv2d>(&op))
    return asymmetric("conv2d", conv->options.padding, conv->options.padding_end);
  if (const auto* pool = std::get_if<model::Pool2d>(&op))
    return asymmetric("pooling", pool->options.padding, pool->options.padding_end);
  if (const auto* bn = std::get_if<model::BatchNorm>(&op); bn && bn->epsilon < CUDNN_BN_MIN_EPSILON)
    return fmt::format("batch norm epsilon {} is below cuDNN's {}", bn->epsilon,
                       CUDNN_BN_MIN_EPSILON);
  return std::nullopt;
}

LayerState make_layer_state(const model::Op& op) {
  LayerState state;
  if (const auto* bn = std::get_if<model::BatchNorm>(&op)) {
    const auto channels = static_cast<std::size_t>(bn->channels);
    state.running_mean = to_device(std::vector<float>(channels, 0.0f));
    state.running_var = to_device(std::vector<float>(channels, 1.0f));
  }
  return state;
}

std::unique_ptr<DeviceLayer> make_device_layer(const model::Op& op, Context& context,
                                               const Shape& in, float* params, float* grads,
                                               LayerState& state) {
  // One device layer per operation; a new operation without a case here does not compile.
  return std::visit(
      [&](const auto& o) -> std::unique_ptr<DeviceLayer> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, model::Conv2d>) {
          return std::make_unique<ConvLayer>(o.options, context, in, params, grads);
        } else if constexpr (std::is_same_v<T, model::Pool2d>) {
          return std::make_unique<PoolLayer>(o.options, context, in);
        } else if constexpr (std::is_same_v<T, model::GlobalAvgPool>) {
          model::Pool2dOptions pool;
          pool.kind = model::PoolKind::average;
          pool.kernel = {in.h, in.w};
          pool.stride = {1, 1};
          return std::make_unique<PoolLayer>(pool, context, in);
        } else if constexpr (std::is_same_v<T, model::BatchNorm>) {
          return std::make_unique<BatchNormLayer>(o, context, in, params, grads, state);
        } else if constexpr (std::is_same_v<T, model::Eltwise>) {
          return std::make_unique<ActivationLayer>(o.activation, context, in);
        } else if constexpr (std::is_same_v<T, model::Dropout>) {
          return std::make_unique<DropoutLayer>(o, context, in, state);
        } else if constexpr (std::is_same_v<T, model::Flatten>) {
          return std::make_unique<FlattenLayer>(context, in);
        } else {
          static_assert(std::is_same_v<T, model::Dense>, "an operation cuda cannot lower");
          return std::make_unique<DenseLayer>(o, context, in, params, grads);
        }
      },
      op);
}

}  // namespace scalebench::trainer::cuda
