#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cfloat>

#include "trainer/cuda/check.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/nhwc_index.hpp"
#include "trainer/model/dropout_mask.hpp"

namespace scalebench::trainer::cuda {
namespace {

constexpr unsigned kThreads = 256;

// Enough blocks for a grid-stride loop over n elements, capped so that huge buffers reuse them.
unsigned blocks_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? (blocks == 0 ? 1 : blocks) : 65535);
}

#define SB_GRID_STRIDE(i, n)                                                                     \
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(blockDim.x) * gridDim.x)

__global__ void scale_kernel(float* x, std::size_t n, float alpha) {
  SB_GRID_STRIDE(i, n) x[i] *= alpha;
}

__global__ void fill_kernel(float* x, std::size_t n, float value) {
  SB_GRID_STRIDE(i, n) x[i] = value;
}

__global__ void to_bf16_kernel(const float* x, __nv_bfloat16* y, std::size_t n) {
  SB_GRID_STRIDE(i, n) y[i] = __float2bfloat16_rn(x[i]);
}

__global__ void from_bf16_kernel(const __nv_bfloat16* x, float* y, std::size_t n) {
  SB_GRID_STRIDE(i, n) y[i] = __bfloat162float(x[i]);
}

// Loads and stores of either element type, computing in fp32.
__device__ __forceinline__ float load(const float* p, std::size_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, std::size_t i) {
  return __bfloat162float(p[i]);
}
__device__ __forceinline__ void store(float* p, std::size_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, std::size_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

// channels == 0: the tensor is N×C×H×W, its position is the mask's index; else it is N×H×W×C
// and the mask's index is the element's N×C×H×W one (the CPU's elements are dropped).
template <typename T>
__global__ void dropout_kernel(const T* x, T* y, std::size_t n, const std::uint64_t* key_in_memory,
                               std::uint32_t threshold, float scale, std::uint64_t channels,
                               std::uint64_t plane) {
  const std::uint64_t key = *key_in_memory;
  SB_GRID_STRIDE(i, n) {
    const std::uint64_t index = channels == 0 ? i : nchw_index_of_nhwc(i, channels, plane);
    store(y, i, model::dropout_keeps(key, index, threshold) ? load(x, i) * scale : 0.0f);
  }
}

// y in `to` order from x in the other; kLayoutSame copies. Converts the element type on the way.
enum LayoutMove { kLayoutSame = 0, kToNhwc = 1, kToNchw = 2 };
template <typename In, typename Out>
__global__ void move_kernel(const In* x, Out* y, std::size_t n, std::uint64_t channels,
                            std::uint64_t plane, int move) {
  SB_GRID_STRIDE(i, n) {
    if (move == kToNhwc) {
      store(y, i, load(x, nchw_index_of_nhwc(i, channels, plane)));
    } else if (move == kToNchw) {
      store(y, nchw_index_of_nhwc(i, channels, plane), load(x, i));
    } else {
      store(y, i, load(x, i));
    }
  }
}

__global__ void add_bf16_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* y,
                                std::size_t n) {
  SB_GRID_STRIDE(i, n) store(y, i, load(a, i) + load(b, i));
}

__global__ void accumulate_bf16_kernel(__nv_bfloat16* a, const __nv_bfloat16* b, std::size_t n) {
  SB_GRID_STRIDE(i, n) store(a, i, load(a, i) + load(b, i));
}

// The channel of element i: innermost with channels last (or a batch × features matrix).
__device__ __forceinline__ std::size_t channel_of(std::size_t i, std::size_t channels,
                                                  std::size_t plane, bool channels_last) {
  return channels_last ? i % channels : (i / plane) % channels;
}

__global__ void add_channel_bias_kernel(__nv_bfloat16* y, const float* bias, std::size_t n,
                                        std::size_t channels, std::size_t plane,
                                        bool channels_last) {
  SB_GRID_STRIDE(i, n)
  store(y, i, load(y, i) + bias[channel_of(i, channels, plane, channels_last)]);
}

// The per-channel fp32 sums in two passes, in a fixed order (the same bits every run): each
// block sums a tile of kSumChannels channels over one chunk of the batch·plane pixels (threads
// across channels, so channels-last reads are coalesced) into partial[chunk][channel]; then
// each channel's chunks are added in order.
constexpr unsigned kSumChannels = 32, kSumLanes = 8, kSumMaxChunks = 256;

std::size_t sum_chunks(std::size_t count) {
  const std::size_t chunks = (count + 2047) / 2048;
  return chunks < 1 ? 1 : (chunks > kSumMaxChunks ? kSumMaxChunks : chunks);
}

__global__ void channel_partial_sums_kernel(const __nv_bfloat16* dy, float* partial,
                                            std::size_t batch, std::size_t channels,
                                            std::size_t plane, bool channels_last,
                                            std::size_t chunks) {
  __shared__ float lane_sums[kSumLanes][kSumChannels];
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * kSumChannels + threadIdx.x;
  const std::size_t count = batch * plane;
  const std::size_t per_chunk = (count + chunks - 1) / chunks;
  const std::size_t begin = blockIdx.y * per_chunk;
  const std::size_t end = begin + per_chunk < count ? begin + per_chunk : count;
  float sum = 0.0f;
  if (c < channels) {
    for (std::size_t j = begin + threadIdx.y; j < end; j += kSumLanes) {
      const std::size_t i =
          channels_last ? j * channels + c : ((j / plane) * channels + c) * plane + j % plane;
      sum += load(dy, i);
    }
  }
  lane_sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < channels) {
    float total = 0.0f;
    for (unsigned lane = 0; lane < kSumLanes; ++lane) total += lane_sums[lane][threadIdx.x];
    partial[blockIdx.y * channels + c] = total;
  }
}

__global__ void channel_chunk_sums_kernel(const float* partial, float* sums, std::size_t channels,
                                          std::size_t chunks) {
  SB_GRID_STRIDE(c, channels) {
    float total = 0.0f;
    for (std::size_t k = 0; k < chunks; ++k) total += partial[k * channels + c];
    sums[c] = total;
  }
}

// mode 0 relu, 1 relu6 (ReLU clipped at 6), 2 tanh; backward from y, as cuDNN's.
__device__ __forceinline__ float activate(float x, int mode) {
  return mode == 0 ? fmaxf(x, 0.0f) : mode == 1 ? fminf(fmaxf(x, 0.0f), 6.0f) : tanhf(x);
}
__device__ __forceinline__ float activation_slope(float y, int mode) {
  return mode == 0   ? (y > 0.0f ? 1.0f : 0.0f)
         : mode == 1 ? (y > 0.0f && y < 6.0f ? 1.0f : 0.0f)
                     : 1.0f - y * y;
}

__global__ void activation_forward_kernel(const __nv_bfloat16* x, __nv_bfloat16* y, std::size_t n,
                                          int mode) {
  SB_GRID_STRIDE(i, n) store(y, i, activate(load(x, i), mode));
}

__global__ void activation_backward_kernel(const __nv_bfloat16* y, const __nv_bfloat16* dy,
                                           __nv_bfloat16* dx, std::size_t n, int mode) {
  SB_GRID_STRIDE(i, n) store(dx, i, load(dy, i) * activation_slope(load(y, i), mode));
}

// One warp per row: the maximum and its first index, Σ exp(z − max) in double, then the loss
// and (optionally) the gradient, as trainer/cpu/layers.cpp computes them.
__global__ void softmax_cross_entropy_kernel(const float* logits, const std::int32_t* labels,
                                             int batch, int classes, double* row_loss,
                                             std::int32_t* row_correct, float* dlogits) {
  const int warps_per_block = blockDim.x / 32;
  const int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= batch) return;
  const float* z = logits + static_cast<std::size_t>(row) * classes;
  float best = -INFINITY;
  int best_index = classes;  // none yet: the first element seen wins even when it is −inf
  for (int j = lane; j < classes; j += 32) {
    if (z[j] > best || best_index == classes) {
      best = z[j];
      best_index = j;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_down_sync(0xffffffffu, best, offset);
    const int other_index = __shfl_down_sync(0xffffffffu, best_index, offset);
    if (other_index < classes &&
        (best_index == classes || other > best || (other == best && other_index < best_index))) {
      best = other;
      best_index = other_index;
    }
  }
  best = __shfl_sync(0xffffffffu, best, 0);
  best_index = __shfl_sync(0xffffffffu, best_index, 0);
  double sum = 0.0;
  for (int j = lane; j < classes; j += 32) sum += static_cast<double>(expf(z[j] - best));
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  sum = __shfl_sync(0xffffffffu, sum, 0);
  const int label = labels[row];
  if (lane == 0) {
    row_loss[row] = log(sum) - static_cast<double>(z[label] - best);
    row_correct[row] = best_index == label ? 1 : 0;
  }
  if (dlogits == nullptr) return;
  const float inv = static_cast<float>(1.0 / sum);
  const float scale = 1.0f / static_cast<float>(batch);
  float* d = dlogits + static_cast<std::size_t>(row) * classes;
  for (int j = lane; j < classes; j += 32) {
    const float p = expf(z[j] - best) * inv;
    d[j] = j == label ? p * scale - scale : p * scale;
  }
}

__device__ __forceinline__ float decayed(float g, float w, float wd) { return g + wd * w; }

__global__ void sgd_kernel(float* w, const float* g, std::size_t n, float lr, float wd) {
  SB_GRID_STRIDE(i, n) w[i] -= lr * decayed(g[i], w[i], wd);
}

__global__ void momentum_kernel(float* w, const float* g, float* v, std::size_t n, float lr,
                                float mu, bool nesterov, float wd) {
  SB_GRID_STRIDE(i, n) {
    const float gi = decayed(g[i], w[i], wd);
    const float vi = mu * v[i] + gi;
    v[i] = vi;
    w[i] -= lr * (nesterov ? gi + mu * vi : vi);
  }
}

__global__ void adadelta_kernel(float* w, const float* g, float* sq, float* acc, std::size_t n,
                                float lr, float rho, float eps, float wd) {
  SB_GRID_STRIDE(i, n) {
    const float gi = decayed(g[i], w[i], wd);
    const float s = rho * sq[i] + (1 - rho) * gi * gi;
    sq[i] = s;
    const float delta = sqrtf(acc[i] + eps) / sqrtf(s + eps) * gi;
    acc[i] = rho * acc[i] + (1 - rho) * delta * delta;
    w[i] -= lr * delta;
  }
}

__global__ void rmsprop_kernel(float* w, const float* g, float* sq, std::size_t n, float lr,
                               float alpha, float eps, float wd) {
  SB_GRID_STRIDE(i, n) {
    const float gi = decayed(g[i], w[i], wd);
    const float s = alpha * sq[i] + (1 - alpha) * gi * gi;
    sq[i] = s;
    w[i] -= lr * gi / (sqrtf(s) + eps);
  }
}

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, std::size_t n,
                            float scale, float adaptive_scale, bool adaptive, float b1, float b2,
                            float eps, float wd) {
  SB_GRID_STRIDE(i, n) {
    const float gi = decayed(g[i], w[i], wd);
    const float mi = b1 * m[i] + (1 - b1) * gi;
    const float vi = b2 * v[i] + (1 - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] -= adaptive ? scale * mi / (adaptive_scale * sqrtf(vi) + eps) : scale * mi;
  }
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
  SB_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

void scale_on_device(float* x, std::size_t n, float alpha, int device) {
  if (n == 0) return;
  SB_CHECK(cudaSetDevice(device));
  float* d_x = nullptr;
  SB_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  try {
    SB_CHECK(cudaMemcpy(d_x, x, n * sizeof(float), cudaMemcpyHostToDevice));
    scale_kernel<<<blocks_for(n), kThreads>>>(d_x, n, alpha);
    SB_CHECK(cudaGetLastError());
    SB_CHECK(cudaMemcpy(x, d_x, n * sizeof(float), cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(d_x);
    throw;
  }
  SB_CHECK(cudaFree(d_x));
}

void fill(float* x, std::size_t n, float value, cudaStream_t stream) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n, value);
  SB_CHECK(cudaGetLastError());
}

void to_bf16(const float* x, std::uint16_t* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  to_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, reinterpret_cast<__nv_bfloat16*>(y), n);
  SB_CHECK(cudaGetLastError());
}

void from_bf16(const std::uint16_t* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  from_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(x), y, n);
  SB_CHECK(cudaGetLastError());
}

void dropout_forward(const void* x, void* y, std::size_t n, const std::uint64_t* key,
                     std::uint32_t threshold, float scale, cudaStream_t stream,
                     std::size_t nhwc_channels, std::size_t plane, DType type) {
  if (n == 0) return;
  if (type == DType::bf16) {
    dropout_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x),
                                                           static_cast<__nv_bfloat16*>(y), n, key,
                                                           threshold, scale, nhwc_channels, plane);
  } else {
    dropout_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const float*>(x),
                                                           static_cast<float*>(y), n, key,
                                                           threshold, scale, nhwc_channels, plane);
  }
  SB_CHECK(cudaGetLastError());
}

void dropout_backward(const void* dy, void* dx, std::size_t n, const std::uint64_t* key,
                      std::uint32_t threshold, float scale, cudaStream_t stream,
                      std::size_t nhwc_channels, std::size_t plane, DType type) {
  // The same mask applied to the gradient: the forward kernel does exactly that.
  dropout_forward(dy, dx, n, key, threshold, scale, stream, nhwc_channels, plane, type);
}

namespace {

template <typename In, typename Out>
void launch_move(const void* x, void* y, std::size_t n, std::size_t channels, std::size_t plane,
                 int move, cudaStream_t stream) {
  move_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      static_cast<const In*>(x), static_cast<Out*>(y), n, channels, plane, move);
}

void move(const void* x, DType from, void* y, DType to, std::size_t batch, std::size_t channels,
          std::size_t plane, int how, cudaStream_t stream) {
  const std::size_t n = batch * channels * plane;
  if (n == 0) return;
  if (from == DType::f32 && to == DType::f32) {
    launch_move<float, float>(x, y, n, channels, plane, how, stream);
  } else if (from == DType::f32) {
    launch_move<float, __nv_bfloat16>(x, y, n, channels, plane, how, stream);
  } else if (to == DType::f32) {
    launch_move<__nv_bfloat16, float>(x, y, n, channels, plane, how, stream);
  } else {
    launch_move<__nv_bfloat16, __nv_bfloat16>(x, y, n, channels, plane, how, stream);
  }
  SB_CHECK(cudaGetLastError());
}

}  // namespace

void nchw_to_nhwc(const void* x, DType from, void* y, DType to, std::size_t batch,
                  std::size_t channels, std::size_t plane, cudaStream_t stream) {
  move(x, from, y, to, batch, channels, plane, kToNhwc, stream);
}

void nhwc_to_nchw(const void* x, DType from, void* y, DType to, std::size_t batch,
                  std::size_t channels, std::size_t plane, cudaStream_t stream) {
  move(x, from, y, to, batch, channels, plane, kToNchw, stream);
}

void convert(const void* x, DType from, void* y, DType to, std::size_t n, cudaStream_t stream) {
  move(x, from, y, to, n, 1, 1, kLayoutSame, stream);
}

void add_bf16(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* y, std::size_t n,
              cudaStream_t stream) {
  if (n == 0) return;
  add_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(reinterpret_cast<const __nv_bfloat16*>(a),
                                                          reinterpret_cast<const __nv_bfloat16*>(b),
                                                          reinterpret_cast<__nv_bfloat16*>(y), n);
  SB_CHECK(cudaGetLastError());
}

void add_channel_bias_bf16(std::uint16_t* y, const float* bias, std::size_t batch,
                           std::size_t channels, std::size_t plane, bool channels_last,
                           cudaStream_t stream) {
  const std::size_t n = batch * channels * plane;
  if (n == 0) return;
  add_channel_bias_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      reinterpret_cast<__nv_bfloat16*>(y), bias, n, channels, plane, channels_last);
  SB_CHECK(cudaGetLastError());
}

std::size_t channel_sums_scratch_bytes(std::size_t batch, std::size_t channels, std::size_t plane) {
  return sum_chunks(batch * plane) * channels * sizeof(float);
}

void channel_sums_bf16(const std::uint16_t* dy, float* sums, std::size_t batch,
                       std::size_t channels, std::size_t plane, bool channels_last, void* scratch,
                       cudaStream_t stream) {
  if (channels == 0) return;
  const std::size_t chunks = sum_chunks(batch * plane);
  const dim3 grid(static_cast<unsigned>((channels + kSumChannels - 1) / kSumChannels),
                  static_cast<unsigned>(chunks));
  const dim3 block(kSumChannels, kSumLanes);
  auto* partial = static_cast<float*>(scratch);
  channel_partial_sums_kernel<<<grid, block, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(dy), partial, batch, channels, plane, channels_last,
      chunks);
  SB_CHECK(cudaGetLastError());
  channel_chunk_sums_kernel<<<blocks_for(channels), kThreads, 0, stream>>>(partial, sums, channels,
                                                                           chunks);
  SB_CHECK(cudaGetLastError());
}

void activation_forward_bf16(const std::uint16_t* x, std::uint16_t* y, std::size_t n, int mode,
                             cudaStream_t stream) {
  if (n == 0) return;
  activation_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(x), reinterpret_cast<__nv_bfloat16*>(y), n, mode);
  SB_CHECK(cudaGetLastError());
}

void activation_backward_bf16(const std::uint16_t* y, const std::uint16_t* dy, std::uint16_t* dx,
                              std::size_t n, int mode, cudaStream_t stream) {
  if (n == 0) return;
  activation_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(y), reinterpret_cast<const __nv_bfloat16*>(dy),
      reinterpret_cast<__nv_bfloat16*>(dx), n, mode);
  SB_CHECK(cudaGetLastError());
}

void accumulate_bf16(std::uint16_t* a, const std::uint16_t* b, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  accumulate_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      reinterpret_cast<__nv_bfloat16*>(a), reinterpret_cast<const __nv_bfloat16*>(b), n);
  SB_CHECK(cudaGetLastError());
}

void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::size_t batch,
                           std::size_t classes, double* row_loss, std::int32_t* row_correct,
                           float* dlogits, cudaStream_t stream) {
  if (batch == 0) return;
  constexpr unsigned kWarps = 8;
  const auto blocks = static_cast<unsigned>((batch + kWarps - 1) / kWarps);
  softmax_cross_entropy_kernel<<<blocks, kWarps * 32, 0, stream>>>(
      logits, labels, static_cast<int>(batch), static_cast<int>(classes), row_loss, row_correct,
      dlogits);
  SB_CHECK(cudaGetLastError());
}

void sgd_step(float* w, const float* g, std::size_t n, float lr, float wd, cudaStream_t stream) {
  if (n == 0) return;
  sgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, g, n, lr, wd);
  SB_CHECK(cudaGetLastError());
}

void momentum_step(float* w, const float* g, float* velocity, std::size_t n, float lr,
                   float momentum, bool nesterov, float wd, cudaStream_t stream) {
  if (n == 0) return;
  momentum_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, g, velocity, n, lr, momentum, nesterov,
                                                          wd);
  SB_CHECK(cudaGetLastError());
}

void adadelta_step(float* w, const float* g, float* square_avg, float* acc_delta, std::size_t n,
                   float lr, float rho, float eps, float wd, cudaStream_t stream) {
  if (n == 0) return;
  adadelta_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, g, square_avg, acc_delta, n, lr, rho,
                                                          eps, wd);
  SB_CHECK(cudaGetLastError());
}

void rmsprop_step(float* w, const float* g, float* square_avg, std::size_t n, float lr, float alpha,
                  float eps, float wd, cudaStream_t stream) {
  if (n == 0) return;
  rmsprop_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, g, square_avg, n, lr, alpha, eps, wd);
  SB_CHECK(cudaGetLastError());
}

void adam_step(float* w, const float* g, float* m, float* v, std::size_t n, float scale,
               float adaptive_scale, bool adaptive, float beta1, float beta2, float eps, float wd,
               cudaStream_t stream) {
  if (n == 0) return;
  adam_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, g, m, v, n, scale, adaptive_scale,
                                                      adaptive, beta1, beta2, eps, wd);
  SB_CHECK(cudaGetLastError());
}

}  // namespace scalebench::trainer::cuda
