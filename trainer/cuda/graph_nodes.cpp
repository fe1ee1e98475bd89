// The graph's nodes that are not layers: the residual add, the channel concat, and the
// accumulation of a second gradient share (trainer/cuda/layers.hpp).
#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <vector>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/cudnn_util.hpp"
#include "trainer/cuda/layers.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {

DeviceAdd::DeviceAdd(Context& context, const Shape& a, const Shape& b)
    : context_(context), shape_(a), desc_(a) {
  if (a != b) {
    throw std::invalid_argument(
        fmt::format("add: the inputs' shapes differ ({} and {})", a.str(), b.str()));
  }
}

DeviceAdd::AddDesc::AddDesc() {
  SB_CHECK(cudnnCreateOpTensorDescriptor(&handle_));
  SB_CHECK(cudnnSetOpTensorDescriptor(handle_, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                      CUDNN_NOT_PROPAGATE_NAN));
}

void DeviceAdd::forward(const void* a, const void* b, void* dst) {
  if (context_.activation_type() == DType::bf16) {
    add_bf16(static_cast<const std::uint16_t*>(a), static_cast<const std::uint16_t*>(b),
             static_cast<std::uint16_t*>(dst), shape_.count(), context_.stream());
    return;
  }
  SB_CHECK(cudnnOpTensor(context_.cudnn(), add_.get(), &kOne, desc_.get(), a, &kOne, desc_.get(), b,
                         &kZero, desc_.get(), dst));
}

void DeviceAdd::backward(const void* dy, void* d_input) {
  SB_CHECK(cudaMemcpyAsync(d_input, dy, shape_.count() * bytes_of(context_.activation_type()),
                           cudaMemcpyDeviceToDevice, context_.stream()));
}

DeviceConcat::DeviceConcat(Context& context, const std::vector<Shape>& inputs)
    : context_(context), inputs_(inputs) {
  if (inputs.empty()) throw std::invalid_argument("concat needs at least one input");
  shape_ = inputs[0];
  shape_.c = 0;
  for (const Shape& s : inputs) {
    if (s.n != shape_.n || s.h != shape_.h || s.w != shape_.w) {
      throw std::invalid_argument(fmt::format("concat: input {} does not match {}x?x{}x{}", s.str(),
                                              shape_.n, shape_.h, shape_.w));
    }
    offsets_.push_back(static_cast<std::size_t>(shape_.c));
    shape_.c += s.c;
  }
}

DeviceConcat::Rows DeviceConcat::rows(std::size_t k) const {
  const std::size_t plane = shape_.plane();
  const auto channels = static_cast<std::size_t>(inputs_[k].c);
  const std::size_t value = bytes_of(context_.activation_type());
  if (context_.layout() == Layout::nhwc) {
    // One row per pixel: input k's C_k values go to channel offset k of the output's C.
    return Rows{offsets_[k] * value, channels * value, static_cast<std::size_t>(shape_.c) * value,
                static_cast<std::size_t>(shape_.n) * plane};
  }
  // One row per image: input k's C_k·H·W values go to channel offset k of the output row.
  return Rows{offsets_[k] * plane * value, channels * plane * value,
              static_cast<std::size_t>(shape_.c) * plane * value,
              static_cast<std::size_t>(shape_.n)};
}

void DeviceConcat::forward(const std::vector<const void*>& inputs, void* dst) {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Rows r = rows(k);
    SB_CHECK(cudaMemcpy2DAsync(static_cast<unsigned char*>(dst) + r.offset, r.pitch, inputs[k],
                               r.width, r.width, r.count, cudaMemcpyDeviceToDevice,
                               context_.stream()));
  }
}

void DeviceConcat::backward(const void* dy, std::size_t k, void* d_input) {
  const Rows r = rows(k);
  SB_CHECK(cudaMemcpy2DAsync(d_input, r.width, static_cast<const unsigned char*>(dy) + r.offset,
                             r.pitch, r.width, r.count, cudaMemcpyDeviceToDevice,
                             context_.stream()));
}

void accumulate(Context& context, void* a, const void* b, std::size_t n) {
  if (context.activation_type() == DType::bf16) {
    accumulate_bf16(static_cast<std::uint16_t*>(a), static_cast<const std::uint16_t*>(b), n,
                    context.stream());
    return;
  }
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw BackendError(fmt::format("backend cuda: cannot add {} floats in one cublasSaxpy", n));
  }
  SB_CHECK(cublasSaxpy(context.cublas(), static_cast<int>(n), &kOne, static_cast<const float*>(b),
                       1, static_cast<float*>(a), 1));
}

}  // namespace scalebench::trainer::cuda
