#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "trainer/cuda/cuda_kernels.hpp"

namespace scalebench::trainer::cuda {
namespace {

void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + cudaGetErrorString(status));
}
#define SB_CUDA_CHECK(call) check((call), #call, __FILE__, __LINE__)

__global__ void scale_kernel(float* x, std::size_t n, float alpha) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= alpha;
}

}  // namespace

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" / "no driver" error
    return 0;
  }
  return count;
}

std::string device_name(int device) {
  cudaDeviceProp properties{};
  SB_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

void scale_on_device(float* x, std::size_t n, float alpha, int device) {
  if (n == 0) return;
  SB_CUDA_CHECK(cudaSetDevice(device));
  float* d_x = nullptr;
  SB_CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  try {
    SB_CUDA_CHECK(cudaMemcpy(d_x, x, n * sizeof(float), cudaMemcpyHostToDevice));
    constexpr unsigned kThreads = 256;
    const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
    scale_kernel<<<blocks, kThreads>>>(d_x, n, alpha);
    SB_CUDA_CHECK(cudaGetLastError());
    SB_CUDA_CHECK(cudaMemcpy(x, d_x, n * sizeof(float), cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(d_x);
    throw;
  }
  SB_CUDA_CHECK(cudaFree(d_x));
}

}  // namespace scalebench::trainer::cuda
