#include "trainer/cuda/cudnn_util.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {

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

void require_conv_input(const model::Conv2dOptions& o, const Shape& in) {
  require_symmetric(o.padding, o.padding_end, "conv2d");
  if (in.c != o.in_channels) {
    throw std::invalid_argument(
        fmt::format("conv2d expects {} input channels, got {}", o.in_channels, in.c));
  }
}

void bias_relu_forward_bf16(const Context& context, void* y, const Shape& out, const float* bias,
                            bool relu) {
  auto* y16 = static_cast<std::uint16_t*>(y);
  if (bias != nullptr) {
    add_channel_bias_bf16(y16, bias, static_cast<std::size_t>(out.n),
                          static_cast<std::size_t>(out.c), out.plane(),
                          context.layout() == Layout::nhwc, context.stream());
  }
  if (relu) activation_forward_bf16(y16, y16, out.count(), 0, context.stream());
}

void bias_relu_backward_bf16(const Context& context, const void* y, void* dy, const Shape& out,
                             bool relu, float* bias_grad) {
  auto* dy16 = static_cast<std::uint16_t*>(dy);
  if (relu) {
    activation_backward_bf16(static_cast<const std::uint16_t*>(y), dy16, dy16, out.count(), 0,
                             context.stream());
  }
  if (bias_grad != nullptr) {
    channel_sums_bf16(dy16, bias_grad, static_cast<std::size_t>(out.n),
                      static_cast<std::size_t>(out.c), out.plane(),
                      context.layout() == Layout::nhwc, context.workspace(), context.stream());
  }
}

}  // namespace scalebench::trainer::cuda
