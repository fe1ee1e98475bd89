#include "trainer/cpu/cpu_backend.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <xmmintrin.h>

#include <algorithm>

#include "trainer/cpu/models.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cpu {

void set_threads(int threads) {
  omp_set_num_threads(std::max(1, threads));
  // Flush denormals to zero on every OpenMP thread: tiny gradients otherwise make oneDNN's
  // GEMM-based kernels run up to 100× slower (measured on the first convolution's
  // backward-weights), and values below 1e-38 do not matter to training.
#pragma omp parallel
  _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ
}

namespace {

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  std::string description() const override {
    const dnnl_version_t* v = dnnl_version();
    return fmt::format("cpu: oneDNN {}.{}.{}", v->major, v->minor, v->patch);
  }
  int device_count() const override { return 1; }
  void scale(std::span<float> x, float alpha) const override {
    for (float& v : x) v *= alpha;
  }
  std::unique_ptr<Model> make_model(const ModelSpec& spec, const SgdOptions& sgd,
                                    const BackendOptions& options) const override {
    if (options.precision != "fp32") {
      throw BackendError(
          fmt::format("backend cpu trains in fp32 only (--precision {} needs --backend cuda)",
                      options.precision));
    }
    set_threads(options.threads);
    return cpu::make_model(spec, sgd);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace scalebench::trainer::cpu
