// The cuDNN plumbing shared by the CUDA layer files (layers.cpp, conv2d.cpp, graph_nodes.cpp):
// the scaling constants cuDNN and cuBLAS take by pointer, shape checks and the activation
// descriptor.
#pragma once

#include <cudnn.h>

#include <string_view>

#include "trainer/cuda/device.hpp"
#include "trainer/cuda/layers.hpp"
#include "trainer/model/ops.hpp"

namespace scalebench::trainer::cuda {

// alpha and beta of cuDNN's and cuBLAS's y = alpha·op(x) + beta·y.
inline const float kOne = 1.0f;
inline const float kZero = 0.0f;

// Output extent of a window of `kernel` with `stride` over `size` padded by `padding` on both
// sides; std::invalid_argument naming `layer` when the kernel is larger than the padded input.
int output_extent(int size, int kernel, int stride, int padding, std::string_view layer);
// BackendError unless the padding before equals the padding after (all cuDNN takes).
void require_symmetric(const model::Pair& begin, const model::Pair& end, std::string_view layer);
// std::invalid_argument for an input without height or width.
void require_4d(const Shape& in, std::string_view layer);
// A convolution's checks on its input: symmetric padding (BackendError) and the channel count
// (std::invalid_argument).
void require_conv_input(const model::Conv2dOptions& o, const Shape& in);

// A convolution's bias and ReLU on bf16 activations, as kernels (cuDNN's bias and activation
// calls are kept to fp32 here): y += bias then y = relu(y) in place (each only when asked).
void bias_relu_forward_bf16(const Context& context, void* y, const Shape& out, const float* bias,
                            bool relu);
// Backward of the same: dy ← dy·[y > 0] in place (with `relu`), then the bias gradient (with a
// bias_grad): the per-channel sums of dy, through the context's workspace (reserve
// channel_sums_scratch_bytes of it at plan time).
void bias_relu_backward_bf16(const Context& context, const void* y, void* dy, const Shape& out,
                             bool relu, float* bias_grad);

// The data type of convolutions and matrix products: bf16 with --precision bf16, else fp32.
inline cudnnDataType_t compute_type(const Context& context) {
  return context.precision() == Precision::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

// cuDNN's name of a stored element type.
inline cudnnDataType_t cudnn_type(DType type) {
  return type == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

class ActivationDesc
    : public Owned<cudnnActivationDescriptor_t, &cudnnDestroyActivationDescriptor> {
 public:
  ActivationDesc(cudnnActivationMode_t mode, double coef) {
    SB_CHECK(cudnnCreateActivationDescriptor(&handle_));
    SB_CHECK(cudnnSetActivationDescriptor(handle_, mode, CUDNN_NOT_PROPAGATE_NAN, coef));
  }
};

}  // namespace scalebench::trainer::cuda
