// trainer/cuda/: the smallest real use of the GPU (a scale kernel). Skipped (exit code 77)
// without a CUDA build or without a GPU.
#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

#include "test_support.hpp"
#include "trainer/backend_registry.hpp"

using namespace scalebench::trainer;

namespace {

// Why the cuda cases cannot run here, if they cannot.
std::optional<std::string> why_no_cuda() {
  const Backend* cuda = try_find_backend("cuda");
  if (cuda == nullptr) return "this build has no cuda backend";
  if (cuda->device_count() == 0) return "no GPU found";
  return std::nullopt;
}

}  // namespace

TEST_CASE("cuda scale kernel multiplies on the GPU") {
  SCALEBENCH_SKIP_IF(why_no_cuda());
  const Backend& cuda = *try_find_backend("cuda");
  MESSAGE(cuda.description());
  std::vector<float> x(100003);  // not a multiple of the block size
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000) - 500.0f;
  const std::vector<float> expected = [&] {
    std::vector<float> e = x;
    for (float& v : e) v *= -2.5f;
    return e;
  }();
  cuda.scale(x, -2.5f);
  CHECK(x == expected);  // exact: one float multiply either way
}
