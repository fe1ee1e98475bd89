// The CUDA side of the cuda backend, behind a plain C++ interface so that only cuda_kernels.cu
// is compiled by nvcc. The GPU trainer is a later issue; for now: device queries and one kernel.
#pragma once

#include <cstddef>
#include <string>

namespace scalebench::trainer::cuda {

// Number of usable GPUs; 0 when there is no GPU or no driver (never throws).
int device_count();
// The device's name, e.g. "NVIDIA H100 80GB HBM3"; throws std::runtime_error on a CUDA error.
std::string device_name(int device);
// x ← alpha·x for n host floats, computed by a kernel on `device` (copy in, scale, copy out).
void scale_on_device(float* x, std::size_t n, float alpha, int device);

}  // namespace scalebench::trainer::cuda
