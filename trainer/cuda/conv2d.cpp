// Conv2d on cuDNN: the algorithms measured once per shape, bias and ReLU fused after, and bf16
// mixed precision through the context's scratch slots (trainer/cuda/layers.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/cudnn_util.hpp"
#include "trainer/cuda/layers.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

// K×C×R×S weights, stored so (NCHW) or K×R×S×C (NHWC: with channels-last activations).
class FilterDesc : public Owned<cudnnFilterDescriptor_t, &cudnnDestroyFilterDescriptor> {
 public:
  FilterDesc(int k, int c, int h, int w, cudnnDataType_t type, Layout layout) {
    SB_CHECK(cudnnCreateFilterDescriptor(&handle_));
    SB_CHECK(cudnnSetFilter4dDescriptor(
        handle_, type, layout == Layout::nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, k, c, h, w));
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
        in_desc_(in, CUDNN_DATA_FLOAT, context.layout()),
        conv_in_desc_(in, compute_type(context), context.layout()),
        w_desc_(o.out_channels, o.in_channels / o.groups, o.kernel[0], o.kernel[1],
                compute_type(context), context.layout()),
        fwd_(o),
        data_(o),
        filter_(o),
        relu_desc_(CUDNN_ACTIVATION_RELU, 0.0) {
    require_conv_input(o, in);
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
    out_desc_ = TensorDesc(out_, CUDNN_DATA_FLOAT, context.layout());
    conv_out_desc_ = TensorDesc(out_, compute_type(context), context.layout());
    bias_desc_ = TensorDesc(Shape{1, o.out_channels, 1, 1});
    const std::size_t weights = static_cast<std::size_t>(o.out_channels) *
                                static_cast<std::size_t>(o.in_channels / o.groups) *
                                static_cast<std::size_t>(o.kernel[0] * o.kernel[1]);
    weight_count_ = weights;
    if (bf16_) {
      if (!bf16_io_) {  // bf16 activations are read and written where they are
        context.reserve_bf16(kBF16Input, in.count());
        context.reserve_bf16(kBF16Output, out_.count());
      }
      context.reserve_bf16(kBF16Weights, weights);
    }
    weights_ = params;
    weight_grad_ = grads;
    bias_ = params + weights;
    bias_grad_ = grads + weights;
    const std::string key =
        fmt::format("x{} k{}x{}x{} s{},{} p{},{} g{} {}{}", in.str(), o.out_channels, o.kernel[0],
                    o.kernel[1], o.stride[0], o.stride[1], o.padding[0], o.padding[1], o.groups,
                    bf16_ ? "bf16" : "fp32", context.layout() == Layout::nhwc ? " nhwc" : "");
    algorithms_ =
        find_algorithms(context, conv_in_desc_, w_desc_, conv_out_desc_, fwd_, data_, filter_, key);
    SB_CHECK(cudnnSetConvolutionMathType(fwd_.get(), algorithms_.forward_math));
    SB_CHECK(cudnnSetConvolutionMathType(data_.get(), algorithms_.data_math));
    SB_CHECK(cudnnSetConvolutionMathType(filter_.get(), algorithms_.filter_math));
    context.reserve_workspace(algorithms_.workspace);
    if (bf16_io_ && has_bias_) {  // the bias gradient's partial sums, before the products use it
      context.reserve_workspace(channel_sums_scratch_bytes(
          static_cast<std::size_t>(out_.n), static_cast<std::size_t>(out_.c), out_.plane()));
    }
  }

  void forward(const void* x, void* y, bool) override {
    cudnnHandle_t h = context_.cudnn();
    if (bf16_io_) {
      forward_bf16_io(x, y);
      return;
    }
    if (bf16_) {
      cudaStream_t s = context_.stream();
      to_bf16(static_cast<const float*>(x), context_.bf16(kBF16Input), in_.count(), s);
      to_bf16(weights_, context_.bf16(kBF16Weights), weight_count_, s);
      SB_CHECK(cudnnConvolutionForward(
          h, &kOne, conv_in_desc_.get(), context_.bf16(kBF16Input), w_desc_.get(),
          context_.bf16(kBF16Weights), fwd_.get(), algorithms_.forward, context_.workspace(),
          context_.workspace_bytes(), &kZero, conv_out_desc_.get(), context_.bf16(kBF16Output)));
      from_bf16(context_.bf16(kBF16Output), static_cast<float*>(y), out_.count(), s);
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

  void backward(const void* x, const void* y, void* dy, void* dx) override {
    cudnnHandle_t h = context_.cudnn();
    if (bf16_io_) {
      backward_bf16_io(x, y, dy, dx);
      return;
    }
    if (relu_) {
      // dy ← dy·[y > 0] in place (y > 0 exactly where the pre-activation was).
      SB_CHECK(cudnnActivationBackward(h, relu_desc_.get(), &kOne, out_desc_.get(), y,
                                       out_desc_.get(), dy, out_desc_.get(), y, &kZero,
                                       out_desc_.get(), dy));
    }
    if (bf16_) {
      backward_bf16(static_cast<const float*>(x), static_cast<float*>(dy), static_cast<float*>(dx));
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
  // bf16 activations: x, y, dy and dx are bf16 already; only W is cast, the bias and the ReLU
  // run as kernels (cuDNN's bias and activation calls are kept to fp32 here).
  void forward_bf16_io(const void* x, void* y) {
    cudaStream_t s = context_.stream();
    to_bf16(weights_, context_.bf16(kBF16Weights), weight_count_, s);
    SB_CHECK(cudnnConvolutionForward(context_.cudnn(), &kOne, conv_in_desc_.get(), x, w_desc_.get(),
                                     context_.bf16(kBF16Weights), fwd_.get(), algorithms_.forward,
                                     context_.workspace(), context_.workspace_bytes(), &kZero,
                                     conv_out_desc_.get(), y));
    bias_relu_forward_bf16(context_, y, out_, has_bias_ ? bias_ : nullptr, relu_);
  }
  void backward_bf16_io(const void* x, const void* y, void* dy, void* dx) {
    cudnnHandle_t h = context_.cudnn();
    cudaStream_t s = context_.stream();
    bias_relu_backward_bf16(context_, y, dy, out_, relu_, has_bias_ ? bias_grad_ : nullptr);
    std::uint16_t* w16 = context_.bf16(kBF16Weights);
    SB_CHECK(cudnnConvolutionBackwardFilter(h, &kOne, conv_in_desc_.get(), x, conv_out_desc_.get(),
                                            dy, filter_.get(), algorithms_.backward_filter,
                                            context_.workspace(), context_.workspace_bytes(),
                                            &kZero, w_desc_.get(), w16));
    from_bf16(w16, weight_grad_, weight_count_, s);
    if (dx == nullptr) return;
    to_bf16(weights_, w16, weight_count_, s);
    SB_CHECK(cudnnConvolutionBackwardData(h, &kOne, w_desc_.get(), w16, conv_out_desc_.get(), dy,
                                          data_.get(), algorithms_.backward_data,
                                          context_.workspace(), context_.workspace_bytes(), &kZero,
                                          conv_in_desc_.get(), dx));
  }

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
  bool bf16_io_ = context_.activation_type() == DType::bf16;  // bf16 activations
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

}  // namespace

std::unique_ptr<DeviceLayer> make_conv2d_layer(const model::Conv2dOptions& options,
                                               Context& context, const Shape& in, float* params,
                                               float* grads) {
  if (context.conv_engine() == ConvEngine::graph) {
    try {
      return make_graph_conv2d_layer(options, context, in, params, grads);
    } catch (const BackendError& e) {
      // Never silently: the run's header says conv_engine=graph, so say what did not use it.
      if (context.verbose()) {
        fmt::print(stderr,
                   "scalebench-train: conv2d on {}: the graph API has no plan ({}); "
                   "using the legacy API\n",
                   in.str(), e.what());
      }
    }
  }
  return std::make_unique<ConvLayer>(options, context, in, params, grads);
}

}  // namespace scalebench::trainer::cuda
