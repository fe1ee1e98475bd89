#include "trainer/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  std::string description() const override {
    const int n = device_count();
    if (n == 0) return "cuda: no GPU found";
    return fmt::format("cuda: {} GPU{} ({})", n, n == 1 ? "" : "s", device_name(0));
  }
  int device_count() const override { return cuda::device_count(); }
  void scale(std::span<float> x, float alpha) const override {
    if (device_count() == 0) throw BackendError("backend cuda: no GPU found");
    try {
      scale_on_device(x.data(), x.size(), alpha, 0);
    } catch (const std::runtime_error& e) {
      throw BackendError(fmt::format("backend cuda: {}", e.what()));
    }
  }
  std::unique_ptr<Model> make_model(const ModelSpec&, const SgdOptions&) const override {
    throw BackendError(
        "backend 'cuda' is not implemented yet for training (the GPU trainer is a later issue); "
        "use --backend cpu");
  }
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace scalebench::trainer::cuda
