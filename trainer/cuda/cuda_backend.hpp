// The CUDA backend (built only when CMake finds nvcc, cuDNN and NCCL). Training on the GPU is a
// later issue: make_model() reports that; device queries and scale() already run on the GPU.
#pragma once

#include <memory>

#include "trainer/backend.hpp"

namespace scalebench::trainer::cuda {

std::unique_ptr<Backend> make_cuda_backend();

}  // namespace scalebench::trainer::cuda
