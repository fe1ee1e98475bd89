#include "trainer/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include "trainer/cpu/models.hpp"
#include "trainer/cuda/check.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/device.hpp"
#include "trainer/cuda/nccl.hpp"
#include "trainer/cuda/network.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  std::string description() const override {
    const int n = device_count();
    if (n == 0) return "cuda: no GPU found";
    return fmt::format("cuda: {} GPU{} ({}), cuDNN {}, NCCL {}.{}.{}", n, n == 1 ? "" : "s",
                       device_name(0), cudnnGetVersion(), NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  }
  int device_count() const override { return cuda::device_count(); }
  void scale(std::span<float> x, float alpha) const override {
    if (device_count() == 0) throw BackendError("backend cuda: no GPU found");
    scale_on_device(x.data(), x.size(), alpha, 0);
  }
  std::unique_ptr<Model> make_model(const ModelSpec& spec, const SgdOptions& sgd) const override {
    set_error_rank(spec.rank);
    DeviceOptions options;
    options.precision = parse_precision(spec.precision);
    options.cuda_graph = spec.cuda_graph;
    options.deterministic = spec.deterministic;
    const int device = pick_device(spec.local_rank);
    // The model's definition and initial parameters come from the CPU backend (which trains in
    // fp32 only, so it is asked for the fp32 model). Its optimizer never runs: plain SGD, which
    // keeps no state (Adam's would be two more host copies of the parameters).
    ModelSpec cpu_spec = spec;
    cpu_spec.precision = "fp32";
    OptimizerOptions stateless;
    stateless.lr = sgd.lr;
    return std::make_unique<CudaNetwork>(cpu::make_model(cpu_spec, stateless), sgd, device,
                                         options);
  }
  std::unique_ptr<AllreduceBenchmark> make_allreduce_benchmark(
      const ProcessGroup& group) const override {
    set_error_rank(group.rank);
    return make_nccl_allreduce_benchmark(group);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace scalebench::trainer::cuda
