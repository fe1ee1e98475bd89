// Device memory and the per-model CUDA context (one GPU, one compute stream, the cuDNN and
// cuBLAS handles bound to it, and one convolution workspace shared by every layer).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainer/cuda/channels_last.hpp"
#include "trainer/cuda/check.hpp"
#include "trainer/cuda/dtype.hpp"

namespace scalebench::trainer::cuda {

// An owned allocation of `count` elements of T (uninitialised), by Allocate and Free: device
// memory (DeviceArray) or page-locked host memory, so that copies to the device are
// asynchronous and at full speed (PinnedArray).
template <typename T, cudaError_t (*Allocate)(void**, std::size_t), cudaError_t (*Free)(void*)>
class CudaArray {
 public:
  CudaArray() = default;
  explicit CudaArray(std::size_t count) : count_(count) {
    if (count > 0) SB_CHECK(Allocate(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  ~CudaArray() { release(); }
  CudaArray(CudaArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  CudaArray& operator=(CudaArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() {
    if (data_ != nullptr) (void)Free(data_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// cuda_runtime.h overloads cudaMalloc and cudaMallocHost with templates: plain functions to
// take the address of.
inline cudaError_t allocate_device(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
inline cudaError_t allocate_pinned(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
inline cudaError_t free_device(void* p) { return cudaFree(p); }
inline cudaError_t free_pinned(void* p) { return cudaFreeHost(p); }

template <typename T>
using DeviceArray = CudaArray<T, allocate_device, free_device>;
template <typename T>
using PinnedArray = CudaArray<T, allocate_pinned, free_pinned>;

// Owns a library handle (a cuDNN descriptor, a stream, an event) and destroys it with Destroy.
// A derived class creates it into handle_ in its constructor; if that constructor throws after
// creating it, this base still destroys it.
template <typename Handle, auto Destroy>
class Owned {
 public:
  Owned() = default;
  ~Owned() { reset(); }
  Owned(Owned&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, nullptr);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Handle get() const { return handle_; }

 protected:
  void reset() {
    if (handle_ != nullptr) (void)Destroy(handle_);
    handle_ = nullptr;
  }
  Handle handle_ = nullptr;
};

// fp32, or bf16 mixed precision: convolutions and matrix products read bfloat16 copies of their
// inputs and weights (fp32 accumulation); parameters, gradients, activations, batch norm and the
// optimizer stay fp32.
enum class Precision { fp32, bf16 };
// "fp32" or "bf16"; throws BackendError otherwise.
Precision parse_precision(std::string_view name);
// Why GPU `name` of compute capability major.minor cannot train in `precision`, or nothing:
// bf16 tensor cores came with compute capability 8.0 (Ampere); older GPUs would emulate it,
// slower than fp32, so a bf16 figure from them would mislead.
std::optional<std::string> precision_refusal(Precision precision, std::string_view name, int major,
                                             int minor);
// The same for `device`, asked of the driver.
std::optional<std::string> precision_refusal(Precision precision, int device);

enum class ConvEngine { legacy, graph };

// How a model runs on its GPU (scalebench-train --precision, --cuda-graph, --deterministic).
struct DeviceOptions {
  Precision precision = Precision::fp32;
  bool cuda_graph = false;
  // Only convolution algorithms cuDNN documents as deterministic (CUDNN_DETERMINISTIC): the same
  // run twice gives the same bits, at some cost in speed (cudnn.deterministic in PyTorch).
  bool deterministic = false;
  // Where a tensor's channels go (--memory-format): nchw, or nhwc (channels_last.hpp).
  Layout layout = Layout::nchw;
  // Convolutions through the legacy API (cudnnFind, the verified path) or the graph API with
  // fused epilogues (--conv-engine graph, conv2d_graph.cpp).
  ConvEngine conv_engine = ConvEngine::legacy;
  // How many of the heuristics' plans the graph API finalizes and times per problem (the first
  // is the heuristics' best guess; tests that check numbers, not speed, take 1).
  int graph_candidates = 5;
  // Say on stderr which plans were chosen, and why something fell back (--verbose).
  bool verbose = false;
  // The element type of stored activations and their gradients (--activation-type; bf16 only
  // with Precision::bf16): the logits stay fp32.
  DType activations = DType::f32;
};

// bfloat16 scratch buffers a layer fills right before the library call that reads them (work
// on one stream runs in order, so every layer can share them).
enum BF16Slot { kBF16Input = 0, kBF16Output = 1, kBF16Weights = 2, kBF16Slots = 3 };

class Context {
 public:
  explicit Context(int device, const DeviceOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  Precision precision() const { return options_.precision; }
  bool deterministic() const { return options_.deterministic; }
  Layout layout() const { return options_.layout; }
  ConvEngine conv_engine() const { return options_.conv_engine; }
  int graph_candidates() const { return options_.graph_candidates; }
  bool verbose() const { return options_.verbose; }
  DType activation_type() const { return options_.activations; }
  // A bf16 scratch slot of at least `count` elements, grown (never shrunk) at plan time.
  void reserve_bf16(BF16Slot slot, std::size_t count);
  std::uint16_t* bf16(BF16Slot slot) const { return bf16_[slot].data(); }
  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  // The convolution workspace: at least `bytes`, grown (never shrunk) as plans ask for more.
  void reserve_workspace(std::size_t bytes);
  void* workspace() const { return workspace_.data(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }
  // Bumped whenever the workspace or a bf16 slot moves: a CUDA graph captured before holds the
  // old addresses and must be captured again.
  std::uint64_t buffers_generation() const { return generation_; }
  // Waits for everything queued on the compute stream, or for `event`. Both poll, and call the
  // health checks between polls (NCCL's asynchronous errors: a failed peer or network would
  // otherwise leave the stream, and this wait, hanging forever).
  void synchronize() const;
  void wait(cudaEvent_t event) const;
  // A check that throws when something the stream waits on can no longer finish; returns an id
  // for remove_health_check.
  int add_health_check(std::function<void()> check);
  void remove_health_check(int id);

 private:
  int device_;
  DeviceOptions options_;
  std::array<DeviceArray<std::uint16_t>, kBF16Slots> bf16_;
  std::uint64_t generation_ = 0;
  DeviceArray<unsigned char> cublas_workspace_;
  std::vector<std::pair<int, std::function<void()>>> health_checks_;
  int next_check_id_ = 0;
  cudaEvent_t synchronized_ = nullptr;  // recorded by synchronize() to wait on
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  DeviceArray<unsigned char> workspace_;
};

// The device rank `local_rank` uses: one GPU per rank on each host. Throws BackendError when
// there is no GPU or fewer GPUs than ranks on this host.
int pick_device(int local_rank);

}  // namespace scalebench::trainer::cuda
