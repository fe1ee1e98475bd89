// Error checks for every CUDA, cuDNN, cuBLAS and NCCL call of the cuda backend. A failed call
// throws BackendError naming the call, file:line, host and rank, e.g.
//   cudnnConvolutionForward(...) failed at trainer/cuda/layers.cpp:120 (host gpu07, rank 3):
//   CUDNN_STATUS_BAD_PARAM
// so that one line on stderr says which of many ranks broke and where.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <string_view>

namespace scalebench::trainer::cuda {

// The rank named in error messages (set once the model knows it; 0 before).
void set_error_rank(int rank);

[[noreturn]] void fail(std::string_view call, const char* file, int line, std::string_view what);

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) fail(call, file, line, cudaGetErrorString(status));
}
inline void check(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) fail(call, file, line, cudnnGetErrorString(status));
}
inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(call, file, line, cublasGetStatusString(status));
}
inline void check(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) fail(call, file, line, ncclGetErrorString(status));
}

}  // namespace scalebench::trainer::cuda

#define SB_CHECK(call) ::scalebench::trainer::cuda::check((call), #call, __FILE__, __LINE__)
