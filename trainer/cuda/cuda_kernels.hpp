// The custom kernels of the cuda backend, behind plain C++ functions so that only
// cuda_kernels.cu is compiled by nvcc. Only what cuDNN and cuBLAS have no call for: the dropout
// mask (the CPU backend's hash, so both drop the same elements), softmax with cross-entropy and
// its gradient in one pass, and the optimizers' element-wise updates (torch.optim's formulas,
// as trainer/cpu/optimizer.cpp). Every launch goes on `stream` and returns at once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "trainer/cuda/dtype.hpp"

namespace scalebench::trainer::cuda {

// Number of usable GPUs; 0 when there is no GPU or no driver (never throws).
int device_count();
// The device's name, e.g. "NVIDIA H100 80GB HBM3"; throws BackendError on a CUDA error.
std::string device_name(int device);
// x ← alpha·x for n host floats, computed by a kernel on `device` (copy in, scale, copy out).
void scale_on_device(float* x, std::size_t n, float alpha, int device);

void fill(float* x, std::size_t n, float value, cudaStream_t stream);

// fp32 → bfloat16 (round to nearest even) and back; bf16 values travel as their 16 bits.
void to_bf16(const float* x, std::uint16_t* y, std::size_t n, cudaStream_t stream);
void from_bf16(const std::uint16_t* x, float* y, std::size_t n, cudaStream_t stream);

// Inverted dropout with the mask of trainer/model/dropout_mask.hpp: element i is kept when the top
// 24 bits of splitmix64(*key + i) are >= threshold; kept elements are scaled by `scale`. The key is
// read from device memory when the kernel runs, so a captured CUDA graph gets each step's key.
// With nhwc_channels > 0 the tensor is stored N×H×W×C (plane = H·W) and element i is the one of
// N×C×H×W index i, wherever it is stored (trainer/cuda/channels_last.hpp).
// `type` is x's and y's element type (bf16 is computed in fp32 and rounded once).
void dropout_forward(const void* x, void* y, std::size_t n, const std::uint64_t* key,
                     std::uint32_t threshold, float scale, cudaStream_t stream,
                     std::size_t nhwc_channels = 0, std::size_t plane = 1, DType type = DType::f32);
void dropout_backward(const void* dy, void* dx, std::size_t n, const std::uint64_t* key,
                      std::uint32_t threshold, float scale, cudaStream_t stream,
                      std::size_t nhwc_channels = 0, std::size_t plane = 1,
                      DType type = DType::f32);

// N×C×H×W (plane = H·W) to N×H×W×C and back, into another buffer, converting the element type
// from `from` to `to` on the way (fp32 → bf16 rounds to nearest even).
void nchw_to_nhwc(const void* x, DType from, void* y, DType to, std::size_t batch,
                  std::size_t channels, std::size_t plane, cudaStream_t stream);
void nhwc_to_nchw(const void* x, DType from, void* y, DType to, std::size_t batch,
                  std::size_t channels, std::size_t plane, cudaStream_t stream);
// n values converted from `from` to `to`, the order kept.
void convert(const void* x, DType from, void* y, DType to, std::size_t n, cudaStream_t stream);
// y = a + b and a += b over n bf16 values, each sum in fp32 rounded once.
void add_bf16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* y, std::size_t n,
              cudaStream_t stream);
void accumulate_bf16(std::uint16_t* a, const std::uint16_t* b, std::size_t n, cudaStream_t stream);
// bf16 activations (--activation-type bf16) where cuDNN's calls are kept fp32-only: the bias
// (fp32, one per channel) added to y, the per-channel fp32 sums of dy (the bias gradient), and
// relu (mode 0), relu6 (1) and tanh (2) forward and backward (from y, as cuDNN's). A tensor is
// batch × channels × plane, or batch × plane × channels when channels_last (a matrix of batch
// rows of features is channels_last with plane 1).
void add_channel_bias_bf16(std::uint16_t* y, const float* bias, std::size_t batch,
                           std::size_t channels, std::size_t plane, bool channels_last,
                           cudaStream_t stream);
// channel_sums_bf16 needs `scratch` of channel_sums_scratch_bytes (partial sums per chunk of
// pixels, added in a fixed order: the same bits every run).
std::size_t channel_sums_scratch_bytes(std::size_t batch, std::size_t channels, std::size_t plane);
void channel_sums_bf16(const std::uint16_t* dy, float* sums, std::size_t batch,
                       std::size_t channels, std::size_t plane, bool channels_last, void* scratch,
                       cudaStream_t stream);
void activation_forward_bf16(const std::uint16_t* x, std::uint16_t* y, std::size_t n, int mode,
                             cudaStream_t stream);
void activation_backward_bf16(const std::uint16_t* y, const std::uint16_t* dy, std::uint16_t* dx,
                              std::size_t n, int mode, cudaStream_t stream);

// Per row of batch × classes logits: row_loss = −log softmax(z)[label] and row_correct = 1 when
// the first arg-max is the label; with dlogits, also d(mean loss)/dz = (softmax(z) − 1ₗ)/batch.
void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::size_t batch,
                           std::size_t classes, double* row_loss, std::int32_t* row_correct,
                           float* dlogits, cudaStream_t stream);

// The optimizers' updates of n parameters w from gradients g (weight decay wd added to g first).
void sgd_step(float* w, const float* g, std::size_t n, float lr, float wd, cudaStream_t stream);
void momentum_step(float* w, const float* g, float* velocity, std::size_t n, float lr,
                   float momentum, bool nesterov, float wd, cudaStream_t stream);
void adadelta_step(float* w, const float* g, float* square_avg, float* acc_delta, std::size_t n,
                   float lr, float rho, float eps, float wd, cudaStream_t stream);
void rmsprop_step(float* w, const float* g, float* square_avg, std::size_t n, float lr, float alpha,
                  float eps, float wd, cudaStream_t stream);
// Adam/RAdam: w −= scale·m / (adaptive_scale·√v + eps) when adaptive, else w −= scale·m.
void adam_step(float* w, const float* g, float* m, float* v, std::size_t n, float scale,
               float adaptive_scale, bool adaptive, float beta1, float beta2, float eps, float wd,
               cudaStream_t stream);

}  // namespace scalebench::trainer::cuda
