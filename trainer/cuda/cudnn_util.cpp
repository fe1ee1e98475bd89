#include "trainer/cuda/cudnn_util.hpp"

#include <fmt/format.h>

#include <stdexcept>

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

}  // namespace scalebench::trainer::cuda
