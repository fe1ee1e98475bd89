// The optimizers of the model recipe (trainer/model/optimizer_recipe.hpp) on the GPU: the same
// names, defaults and torch.optim formulas, one element-wise kernel per step over the flat device
// buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "trainer/backend.hpp"

namespace scalebench::trainer::cuda {

class DeviceOptimizer {
 public:
  virtual ~DeviceOptimizer() = default;
  // One update of n device parameters from their gradients, queued on `stream`.
  virtual void step(float* parameters, const float* gradients, std::size_t n, double lr,
                    cudaStream_t stream) = 0;
};

// Throws UsageError for an unknown name (the names of model::optimizer_names()).
std::unique_ptr<DeviceOptimizer> make_device_optimizer(const OptimizerOptions& options,
                                                       std::size_t size);

}  // namespace scalebench::trainer::cuda
