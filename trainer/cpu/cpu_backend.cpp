#include "trainer/cpu/cpu_backend.hpp"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include "trainer/cpu/models.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cpu {
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
  std::unique_ptr<Model> make_model(const ModelSpec& spec, const SgdOptions& sgd) const override {
    if (spec.precision != "fp32") {
      throw BackendError(fmt::format(
          "backend cpu trains in fp32 only (--precision {} needs --backend cuda)", spec.precision));
    }
    return cpu::make_model(spec, sgd);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace scalebench::trainer::cpu
