// The CUDA backend (built only when CMake finds nvcc, cuDNN and NCCL): the CPU backend's models
// trained on one GPU per rank with cuDNN and cuBLAS, gradients averaged with NCCL.
#pragma once

#include <memory>

#include "trainer/backend.hpp"

namespace scalebench::trainer::cuda {

std::unique_ptr<Backend> make_cuda_backend();

}  // namespace scalebench::trainer::cuda
