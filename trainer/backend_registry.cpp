#include "trainer/backend_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "trainer/cpu/cpu_backend.hpp"
#include "trainer/errors.hpp"
#ifdef SCALEBENCH_HAVE_CUDA
#include "trainer/cuda/cuda_backend.hpp"
#endif

namespace scalebench::trainer {
namespace {

const std::vector<std::unique_ptr<Backend>>& registry() {
  static const std::vector<std::unique_ptr<Backend>> backends = [] {
    std::vector<std::unique_ptr<Backend>> list;
    list.push_back(cpu::make_cpu_backend());
#ifdef SCALEBENCH_HAVE_CUDA
    list.push_back(cuda::make_cuda_backend());
#endif
    return list;
  }();
  return backends;
}

}  // namespace

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& backend : registry()) names.emplace_back(backend->name());
  return names;
}

const Backend* try_find_backend(std::string_view name) {
  for (const auto& backend : registry()) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

const Backend& find_backend(std::string_view name) {
  if (const Backend* backend = try_find_backend(name)) return *backend;
  std::string hint;
  if (name == "cuda") hint = " (configure with nvcc, cuDNN and NCCL installed to build it)";
  throw BackendError(fmt::format("backend '{}' is not in this build{}; available: {}", name, hint,
                                 fmt::join(available_backends(), ", ")));
}

}  // namespace scalebench::trainer
