#include "trainer/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include "trainer/cuda/check.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/device.hpp"
#include "trainer/cuda/nccl.hpp"
#include "trainer/cuda/network.hpp"
#include "trainer/errors.hpp"
#include "trainer/model/parameters.hpp"
#include "trainer/model/zoo.hpp"

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
  std::unique_ptr<Model> make_model(const ModelSpec& spec, const SgdOptions& sgd,
                                    const BackendOptions& backend) const override {
    set_error_rank(spec.rank);
    DeviceOptions options;
    options.precision = parse_precision(backend.precision);
    options.cuda_graph = backend.cuda_graph;
    options.deterministic = backend.deterministic;
    options.layout = backend.channels_last ? Layout::nhwc : Layout::nchw;
    options.conv_engine = backend.conv_engine == "graph" ? ConvEngine::graph : ConvEngine::legacy;
    options.verbose = backend.verbose;
    options.activations = backend.activation_type == "bf16" ? DType::bf16 : DType::f32;
    if (options.activations == DType::bf16 && options.precision != Precision::bf16) {
      throw BackendError("backend cuda: bf16 activations need --precision bf16");
    }
    const int device = pick_device(backend.local_rank);
    if (const auto why = precision_refusal(options.precision, device)) throw BackendError(*why);
    // The backend-neutral description and its initial parameters (the CPU backend's for the
    // same seed): no CPU network, no host mirror until one is asked for.
    auto description = model::describe_model(spec);
    auto initial = model::initial_parameters(description.graph, spec.seed);
    return std::make_unique<CudaNetwork>(std::move(description), std::move(initial), sgd, device,
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
