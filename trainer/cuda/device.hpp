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
#include <string_view>
#include <utility>
#include <vector>

#include "trainer/cuda/check.hpp"

namespace scalebench::trainer::cuda {

// An owned device allocation of `count` elements of T (uninitialised).
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count) : count_(count) {
    if (count > 0) SB_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  ~DeviceArray() {
    if (data_ != nullptr) (void)cudaFree(data_);
  }
  DeviceArray(DeviceArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      if (data_ != nullptr) (void)cudaFree(data_);
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory, so that copies to the device are asynchronous and at full speed.
template <typename T>
class PinnedArray {
 public:
  PinnedArray() = default;
  explicit PinnedArray(std::size_t count) : count_(count) {
    if (count > 0) SB_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  ~PinnedArray() {
    if (data_ != nullptr) (void)cudaFreeHost(data_);
  }
  PinnedArray(PinnedArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedArray& operator=(PinnedArray&& o) noexcept {
    if (this != &o) {
      if (data_ != nullptr) (void)cudaFreeHost(data_);
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// fp32, or bf16 mixed precision: convolutions and matrix products read bfloat16 copies of their
// inputs and weights (fp32 accumulation); parameters, gradients, activations, batch norm and the
// optimizer stay fp32.
enum class Precision { fp32, bf16 };
// "fp32" or "bf16"; throws BackendError otherwise.
Precision parse_precision(std::string_view name);

// How a model runs on its GPU (scalebench-train --precision, --cuda-graph, --deterministic).
struct DeviceOptions {
  Precision precision = Precision::fp32;
  bool cuda_graph = false;
  // Only convolution algorithms cuDNN documents as deterministic (CUDNN_DETERMINISTIC): the same
  // run twice gives the same bits, at some cost in speed (cudnn.deterministic in PyTorch).
  bool deterministic = false;
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
