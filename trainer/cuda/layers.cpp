// The layers without a file of their own (pooling, batch norm, activations, dropout, flatten,
// dense) and the lowering of a model operation to its device layer; the convolution is in
// conv2d.cpp, add and concat in graph_nodes.cpp.
#include "trainer/cuda/layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/cudnn_util.hpp"
#include "trainer/errors.hpp"
#include "trainer/model/dropout_mask.hpp"

namespace scalebench::trainer::cuda {
namespace {

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

// ---- pooling ----

class PoolLayer final : public DeviceLayer {
 public:
  PoolLayer(const model::Pool2dOptions& o, Context& context, const Shape& in)
      : context_(context),
        in_desc_(in, cudnn_type(context.activation_type()), context.layout()),
        pool_(o) {
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
    out_desc_ = TensorDesc(out_, cudnn_type(context.activation_type()), context.layout());
  }
  void forward(const void* x, void* y, bool) override {
    SB_CHECK(cudnnPoolingForward(context_.cudnn(), pool_.get(), &kOne, in_desc_.get(), x, &kZero,
                                 out_desc_.get(), y));
  }
  void backward(const void* x, const void* y, void* dy, void* dx) override {
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
        desc_(in, cudnn_type(context.activation_type()), context.layout()),
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
    if (context.layout() == Layout::nhwc) plan_persistent();
  }

  void forward(const void* x, void* y, bool training) override {
    cudnnHandle_t h = context_.cudnn();
    if (training && persistent_) {
      const cudnnStatus_t status = cudnnBatchNormalizationForwardTrainingEx(
          h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &kOne, &kZero, desc_.get(),
          x, nullptr, nullptr, desc_.get(), y, param_desc_.get(), gamma_, beta_, momentum_,
          state_.running_mean.data(), state_.running_var.data(), epsilon_, save_mean_.data(),
          save_inv_var_.data(), nullptr, context_.workspace(), context_.workspace_bytes(),
          reserve_.data(), reserve_.bytes());
      if (status == CUDNN_STATUS_SUCCESS) {
        apply_relu(y);
        return;
      }
      // Sized but refused when run: the plain calls from now on (this step's backward too).
      if (status != CUDNN_STATUS_NOT_SUPPORTED)
        check(status, "cudnnBatchNormalizationForwardTrainingEx", __FILE__, __LINE__);
      say_plain(status);
      persistent_ = false;
    }
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
    apply_relu(y);
  }

  void backward(const void* x, const void* y, void* dy, void* dx) override {
    cudnnHandle_t h = context_.cudnn();
    if (relu_ && bf16_) {
      activation_backward_bf16(static_cast<const std::uint16_t*>(y),
                               static_cast<std::uint16_t*>(dy), static_cast<std::uint16_t*>(dy),
                               out_.count(), 0, context_.stream());
    } else if (relu_) {
      SB_CHECK(cudnnActivationBackward(h, relu_desc_.get(), &kOne, desc_.get(), y, desc_.get(), dy,
                                       desc_.get(), y, &kZero, desc_.get(), dy));
    }
    void* target = dx;
    if (target == nullptr) {  // cuDNN always writes dx; the first layer has nowhere to put it
      if (scratch_.size() == 0) scratch_ = DeviceArray<float>(out_.count());
      target = scratch_.data();
    }
    if (persistent_) {
      SB_CHECK(cudnnBatchNormalizationBackwardEx(
          h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &kOne, &kZero, &kOne,
          &kZero, desc_.get(), x, nullptr, nullptr, desc_.get(), dy, nullptr, nullptr, desc_.get(),
          target, param_desc_.get(), gamma_, beta_, gamma_grad_, beta_grad_, epsilon_,
          save_mean_.data(), save_inv_var_.data(), nullptr, context_.workspace(),
          context_.workspace_bytes(), reserve_.data(), reserve_.bytes()));
      return;
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
  bool bf16_ = context_.activation_type() == DType::bf16;
  TensorDesc desc_;
  ActivationDesc relu_desc_;
  BatchNormParamDesc param_desc_;
  DeviceArray<float> save_mean_, save_inv_var_, scratch_;
  // Channels last: training through cuDNN's persistent NHWC kernels (the *Ex calls, as PyTorch
  // for channels_last), with their workspace (the context's) and this layer's reserve space,
  // written by forward and read by backward.
  bool persistent_ = false;
  DeviceArray<unsigned char> reserve_;
  float *gamma_ = nullptr, *beta_ = nullptr, *gamma_grad_ = nullptr, *beta_grad_ = nullptr;

  // The sizes the persistent calls need; a status other than success keeps the plain calls
  // (said under --verbose), never a wrong result.
  // fp32 only (PyTorch's use for channels_last; bf16 data keep the plain calls). The sizes the
  // persistent calls need; a status other than success keeps the plain calls (said under
  // --verbose), never a wrong result. The ReLU stays a pass of its own: cuDNN fuses it
  // (CUDNN_BATCHNORM_OPS_BN_ACTIVATION) for fp16 data only.
  void plan_persistent() {
    if (bf16_) return;
    cudnnHandle_t h = context_.cudnn();
    const auto mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    const auto ops = CUDNN_BATCHNORM_OPS_BN;
    std::size_t forward_bytes = 0, backward_bytes = 0, reserve_bytes = 0;
    cudnnStatus_t status = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
        h, mode, ops, desc_.get(), nullptr, desc_.get(), param_desc_.get(), nullptr,
        &forward_bytes);
    if (status == CUDNN_STATUS_SUCCESS) {
      status = cudnnGetBatchNormalizationBackwardExWorkspaceSize(
          h, mode, ops, desc_.get(), nullptr, desc_.get(), nullptr, desc_.get(), param_desc_.get(),
          nullptr, &backward_bytes);
    }
    if (status == CUDNN_STATUS_SUCCESS) {
      status = cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, ops, nullptr,
                                                                    desc_.get(), &reserve_bytes);
    }
    if (status != CUDNN_STATUS_SUCCESS) {
      say_plain(status);
      return;
    }
    // Never a null workspace: with one the *Ex calls are the plain ones (cudnn_ops.h).
    context_.reserve_workspace(std::max({forward_bytes, backward_bytes, std::size_t{256}}));
    reserve_ = DeviceArray<unsigned char>(std::max<std::size_t>(reserve_bytes, 1));
    persistent_ = true;
  }
  // The fused ReLU of the batch norm, in place.
  void apply_relu(void* y) {
    if (!relu_) return;
    if (bf16_) {
      activation_forward_bf16(static_cast<std::uint16_t*>(y), static_cast<std::uint16_t*>(y),
                              out_.count(), 0, context_.stream());
      return;
    }
    SB_CHECK(cudnnActivationForward(context_.cudnn(), relu_desc_.get(), &kOne, desc_.get(), y,
                                    &kZero, desc_.get(), y));
  }
  void say_plain(cudnnStatus_t status) const {
    if (!context_.verbose()) return;
    fmt::print(stderr,
               "scalebench-train: batch norm on {}: no persistent NHWC kernels ({}); using the "
               "plain calls\n",
               out_.str(), cudnnGetErrorString(status));
  }
};

// ---- activations ----

class ActivationLayer final : public DeviceLayer {
 public:
  ActivationLayer(model::Activation activation, Context& context, const Shape& in)
      : context_(context),
        desc_(in, CUDNN_DATA_FLOAT, context.layout()),
        activation_(activation == model::Activation::relu    ? CUDNN_ACTIVATION_RELU
                    : activation == model::Activation::relu6 ? CUDNN_ACTIVATION_CLIPPED_RELU
                                                             : CUDNN_ACTIVATION_TANH,
                    activation == model::Activation::relu6 ? 6.0 : 0.0) {
    out_ = in;
    mode_ = activation == model::Activation::relu    ? 0
            : activation == model::Activation::relu6 ? 1
                                                     : 2;
  }
  void forward(const void* x, void* y, bool) override {
    if (bf16_) {
      activation_forward_bf16(static_cast<const std::uint16_t*>(x), static_cast<std::uint16_t*>(y),
                              out_.count(), mode_, context_.stream());
      return;
    }
    SB_CHECK(cudnnActivationForward(context_.cudnn(), activation_.get(), &kOne, desc_.get(), x,
                                    &kZero, desc_.get(), y));
  }
  void backward(const void* x, const void* y, void* dy, void* dx) override {
    if (dx == nullptr) return;
    if (bf16_) {
      activation_backward_bf16(
          static_cast<const std::uint16_t*>(y), static_cast<const std::uint16_t*>(dy),
          static_cast<std::uint16_t*>(dx), out_.count(), mode_, context_.stream());
      return;
    }
    SB_CHECK(cudnnActivationBackward(context_.cudnn(), activation_.get(), &kOne, desc_.get(), y,
                                     desc_.get(), dy, desc_.get(), x, &kZero, desc_.get(), dx));
  }

 private:
  Context& context_;
  TensorDesc desc_;
  ActivationDesc activation_;
  // bf16 activations: the kernels of cuda_kernels.hpp (0 relu, 1 relu6, 2 tanh).
  bool bf16_ = context_.activation_type() == DType::bf16;
  int mode_ = 0;
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
    // Channels last: the kernel maps each stored element to its N×C×H×W index, the CPU's.
    if (context.layout() == Layout::nhwc && in.channels_last_differs()) {
      nhwc_channels_ = static_cast<std::size_t>(in.c);
      plane_ = in.plane();
    }
  }
  void prepare_step() override {
    // The CPU backend's key for its k-th call, so both backends drop the same elements. The
    // previous step's copy of it has run: its forward finished before its loss was read.
    host_key_.data()[0] = model::dropout_mask_key(seed_, state_.dropout_calls++);
  }
  void forward(const void* x, void* y, bool training) override {
    if (!training || rate_ <= 0.0f) {
      copy(x, y);
      return;
    }
    SB_CHECK(cudaMemcpyAsync(device_key_.data(), host_key_.data(), sizeof(std::uint64_t),
                             cudaMemcpyHostToDevice, context_.stream()));
    dropout_forward(x, y, out_.count(), device_key_.data(), threshold_, scale_, context_.stream(),
                    nhwc_channels_, plane_, context_.activation_type());
  }
  void backward(const void*, const void*, void* dy, void* dx) override {
    if (dx == nullptr) return;
    if (rate_ <= 0.0f) {
      copy(dy, dx);
      return;
    }
    dropout_backward(dy, dx, out_.count(), device_key_.data(), threshold_, scale_,
                     context_.stream(), nhwc_channels_, plane_, context_.activation_type());
  }

 private:
  void copy(const void* from, void* to) {
    if (from == to) return;
    SB_CHECK(cudaMemcpyAsync(to, from, out_.count() * bytes_of(context_.activation_type()),
                             cudaMemcpyDeviceToDevice, context_.stream()));
  }
  Context& context_;
  std::uint64_t seed_;
  LayerState& state_;
  float rate_;
  std::uint32_t threshold_;
  float scale_;
  PinnedArray<std::uint64_t> host_key_;
  DeviceArray<std::uint64_t> device_key_;
  std::size_t nhwc_channels_ = 0, plane_ = 1;  // 0: stored N×C×H×W (or the same memory)
};

// ---- flatten: N×C×H×W memory copied to its own buffer; channels last: reordered to it ----

class FlattenLayer final : public DeviceLayer {
 public:
  FlattenLayer(Context& context, const Shape& in) : context_(context), in_(in) {
    out_ = {in.n, in.c * in.h * in.w, 1, 1};
    reorder_ = context.layout() == Layout::nhwc && in.channels_last_differs();
  }
  void forward(const void* x, void* y, bool) override {
    const DType t = context_.activation_type();
    if (reorder_) {
      nhwc_to_nchw(x, t, y, t, batch(), channels(), plane(), context_.stream());
    } else {
      copy(x, y);
    }
  }
  void backward(const void*, const void*, void* dy, void* dx) override {
    if (dx == nullptr) return;
    const DType t = context_.activation_type();
    if (reorder_) {
      nchw_to_nhwc(dy, t, dx, t, batch(), channels(), plane(), context_.stream());
    } else {
      copy(dy, dx);
    }
  }

 private:
  std::size_t batch() const { return static_cast<std::size_t>(in_.n); }
  std::size_t channels() const { return static_cast<std::size_t>(in_.c); }
  std::size_t plane() const { return in_.plane(); }
  void copy(const void* from, void* to) {
    SB_CHECK(cudaMemcpyAsync(to, from, out_.count() * bytes_of(context_.activation_type()),
                             cudaMemcpyDeviceToDevice, context_.stream()));
  }
  Context& context_;
  Shape in_;
  bool reorder_ = false;
};

// ---- dense ----

// Row-major y (batch × out) = x (batch × in) · W (in × out) + b. cuBLAS is column-major, where
// the same memory holds the transposes: yᵀ = Wᵀ·xᵀ with Wᵀ (out × in, ld out) and xᵀ (in × batch).
// fp32 activations: cublasSgemm, or with bf16 precision cublasGemmEx on bf16 copies of x, W and
// dy (fp32 outputs). bf16 activations: x, dx and (except for the logits) y and dy are bf16
// already; only W is cast.
class DenseLayer final : public DeviceLayer {
 public:
  DenseLayer(const model::Dense& op, Context& context, const Shape& in, float* params, float* grads,
             DType out_type)
      : context_(context),
        bf16_(context.precision() == Precision::bf16),
        bf16_io_(context.activation_type() == DType::bf16),
        out_type_(out_type),
        in_(static_cast<int>(op.in)),
        outputs_(static_cast<int>(op.out)) {
    if (static_cast<std::size_t>(in.c) * static_cast<std::size_t>(in.h) *
            static_cast<std::size_t>(in.w) !=
        op.in) {
      throw std::invalid_argument(
          fmt::format("dense expects {} features per image, got {}", op.in, in.str()));
    }
    if (context.layout() == Layout::nhwc && in.channels_last_differs()) {
      // Its weights read channel-major features; only Flatten reorders N×H×W×C to those.
      throw BackendError(fmt::format(
          "backend cuda: a dense layer straight on a {} tensor reads it channel-major; with "
          "--memory-format channels_last put a flatten before it",
          in.str()));
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
      if (!bf16_io_) {  // bf16 activations are read where they are (the logits' dy is cast)
        context.reserve_bf16(kBF16Input, static_cast<std::size_t>(batch_) * op.in);
      }
      context.reserve_bf16(kBF16Output, static_cast<std::size_t>(batch_) * op.out);
      context.reserve_bf16(kBF16Weights, weights);
    }
    if (bf16_io_ && out_type_ == DType::bf16) {  // the bias gradient's partial sums
      context.reserve_workspace(
          channel_sums_scratch_bytes(static_cast<std::size_t>(batch_), op.out, 1));
    }
  }

  void forward(const void* x, void* y, bool) override {
    if (bf16_io_) {
      to_bf16(weights_, context_.bf16(kBF16Weights), weight_count(), context_.stream());
      gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_N, outputs_, batch_, in_, context_.bf16(kBF16Weights),
                outputs_, static_cast<const std::uint16_t*>(x), in_, y, out_type_, outputs_);
      if (out_type_ == DType::bf16) {
        add_channel_bias_bf16(static_cast<std::uint16_t*>(y), bias_,
                              static_cast<std::size_t>(batch_), static_cast<std::size_t>(outputs_),
                              1, true, context_.stream());
        return;
      }
    } else if (bf16_) {
      // bf16 inputs, fp32 output and accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F).
      to_bf16(static_cast<const float*>(x), context_.bf16(kBF16Input), rows(in_),
              context_.stream());
      to_bf16(weights_, context_.bf16(kBF16Weights), weight_count(), context_.stream());
      gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_N, outputs_, batch_, in_, context_.bf16(kBF16Weights),
                outputs_, context_.bf16(kBF16Input), in_, y, DType::f32, outputs_);
    } else {
      SB_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, outputs_, batch_, in_,
                           &kOne, weights_, outputs_, static_cast<const float*>(x), in_, &kZero,
                           static_cast<float*>(y), outputs_));
    }
    SB_CHECK(cudnnAddTensor(context_.cudnn(), &kOne, bias_desc_.get(), bias_, &kOne,
                            out_desc_.get(), y));
  }

  void backward(const void* x, const void*, void* dy, void* dx) override {
    if (bf16_) {  // bf16 activations come with bf16 precision only
      backward_bf16(x, dy, dx);
      return;
    }
    const auto* xf = static_cast<const float*>(x);
    auto* dyf = static_cast<float*>(dy);
    // dW (in × out, row-major) = xᵀ·dy; column-major: dWᵀ (out × in) = dyᵀ · x.
    SB_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, outputs_, in_, batch_, &kOne,
                         dyf, outputs_, xf, in_, &kZero, weight_grad_, outputs_));
    // db = Σ over rows of dy: the per-channel sum of an N×out×1×1 tensor.
    SB_CHECK(cudnnConvolutionBackwardBias(context_.cudnn(), &kOne, out_desc_.get(), dy, &kZero,
                                          bias_desc_.get(), bias_grad_));
    if (dx != nullptr) {
      // dx (batch × in) = dy·Wᵀ; column-major: dxᵀ (in × batch) = W (in × out) · dyᵀ.
      SB_CHECK(cublasSgemm(context_.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, in_, batch_, outputs_,
                           &kOne, weights_, outputs_, dyf, outputs_, &kZero,
                           static_cast<float*>(dx), in_));
    }
  }

 private:
  std::size_t rows(int width) const {
    return static_cast<std::size_t>(batch_) * static_cast<std::size_t>(width);
  }
  std::size_t weight_count() const {
    return static_cast<std::size_t>(in_) * static_cast<std::size_t>(outputs_);
  }
  // C (fp32 or bf16) = op(A)·op(B) of bf16 A and B, fp32 accumulation.
  void gemm_bf16(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                 const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb, void* c,
                 DType c_type, int ldc) {
    SB_CHECK(cublasGemmEx(context_.cublas(), ta, tb, m, n, k, &kOne, a, CUDA_R_16BF, lda, b,
                          CUDA_R_16BF, ldb, &kZero, c,
                          c_type == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
  }
  // The three products of fp32 on bf16 x, dy and W: copies of them in the scratch slots unless
  // the activations are bf16 already (then only W, and dy of the fp32 logits, are cast).
  void backward_bf16(const void* x, void* dy, void* dx) {
    cudaStream_t s = context_.stream();
    const std::uint16_t* x16 = static_cast<const std::uint16_t*>(x);
    if (!bf16_io_) {
      to_bf16(static_cast<const float*>(x), context_.bf16(kBF16Input), rows(in_), s);
      x16 = context_.bf16(kBF16Input);
    }
    const std::uint16_t* dy16 = static_cast<const std::uint16_t*>(dy);
    if (out_type_ == DType::f32) {
      to_bf16(static_cast<const float*>(dy), context_.bf16(kBF16Output), rows(outputs_), s);
      dy16 = context_.bf16(kBF16Output);
    }
    std::uint16_t* w16 = context_.bf16(kBF16Weights);
    gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_T, outputs_, in_, batch_, dy16, outputs_, x16, in_,
              weight_grad_, DType::f32, outputs_);
    if (out_type_ == DType::f32) {
      SB_CHECK(cudnnConvolutionBackwardBias(context_.cudnn(), &kOne, out_desc_.get(), dy, &kZero,
                                            bias_desc_.get(), bias_grad_));
    } else {
      channel_sums_bf16(dy16, bias_grad_, static_cast<std::size_t>(batch_),
                        static_cast<std::size_t>(outputs_), 1, true, context_.workspace(), s);
    }
    if (dx == nullptr) return;
    to_bf16(weights_, w16, weight_count(), s);
    gemm_bf16(CUBLAS_OP_T, CUBLAS_OP_N, in_, batch_, outputs_, w16, outputs_, dy16, outputs_, dx,
              bf16_io_ ? DType::bf16 : DType::f32, in_);
  }

  Context& context_;
  bool bf16_, bf16_io_;
  DType out_type_;
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

TensorDesc::TensorDesc(const Shape& s, cudnnDataType_t type, Layout layout) {
  SB_CHECK(cudnnCreateTensorDescriptor(&handle_));
  SB_CHECK(cudnnSetTensor4dDescriptor(
      handle_, layout == Layout::nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, type, s.n, s.c, s.h,
      s.w));
}

BatchNormParamDesc::BatchNormParamDesc(const TensorDesc& data) {
  SB_CHECK(cudnnCreateTensorDescriptor(&handle_));
  SB_CHECK(cudnnDeriveBNTensorDescriptor(handle_, data.get(), CUDNN_BATCHNORM_SPATIAL));
  // The scale, shift and statistics must be fp32 unless the data are double (cudnn_ops.h); the
  // header does not say what the derivation gives for bf16 data, so make sure (PyTorch and
  // TensorFlow build this descriptor themselves).
  cudnnDataType_t type{};
  int n = 0, c = 0, h = 0, w = 0, sn = 0, sc = 0, sh = 0, sw = 0;
  SB_CHECK(cudnnGetTensor4dDescriptor(handle_, &type, &n, &c, &h, &w, &sn, &sc, &sh, &sw));
  if (type != CUDNN_DATA_FLOAT && type != CUDNN_DATA_DOUBLE) {
    SB_CHECK(cudnnSetTensor4dDescriptor(handle_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, c, 1, 1));
  }
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
                                               LayerState& state, DType out_type) {
  if (out_type != context.activation_type() && !std::holds_alternative<model::Dense>(op)) {
    throw BackendError(fmt::format(
        "backend cuda: {} cannot give {} from {} activations (the logits must come from a dense "
        "layer with --activation-type bf16)",
        model::op_name(op), dtype_name(out_type), dtype_name(context.activation_type())));
  }
  // One device layer per operation; a new operation without a case here does not compile.
  return std::visit(
      [&](const auto& o) -> std::unique_ptr<DeviceLayer> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, model::Conv2d>) {
          return make_conv2d_layer(o.options, context, in, params, grads);
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
          return std::make_unique<DenseLayer>(o, context, in, params, grads, out_type);
        }
      },
      op);
}

}  // namespace scalebench::trainer::cuda
