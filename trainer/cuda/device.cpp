#include "trainer/cuda/device.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {

Precision parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  throw BackendError(fmt::format("backend cuda: unknown precision '{}' (fp32, bf16)", name));
}

std::optional<std::string> precision_refusal(Precision precision, std::string_view name, int major,
                                             int minor) {
  if (precision != Precision::bf16 || major >= 8) return std::nullopt;
  return fmt::format(
      "backend cuda: --precision bf16 needs bf16 tensor cores (compute capability 8.0 or newer); "
      "{} is {}.{}: use --precision fp32",
      name, major, minor);
}

std::optional<std::string> precision_refusal(Precision precision, int device) {
  int major = 0, minor = 0;
  SB_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  SB_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return precision_refusal(precision, device_name(device), major, minor);
}

Context::Context(int device, const DeviceOptions& options) : device_(device), options_(options) {
  SB_CHECK(cudaSetDevice(device));
  SB_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  SB_CHECK(cudnnCreate(&cudnn_));
  SB_CHECK(cudnnSetStream(cudnn_, stream_));
  SB_CHECK(cublasCreate(&cublas_));
  SB_CHECK(cublasSetStream(cublas_, stream_));
  // PyTorch's default for fp32 matrix products: no TF32 (torch.backends.cuda.matmul.allow_tf32
  // is False); cuDNN convolutions may use TF32, as PyTorch's cudnn.allow_tf32 = True allows.
  SB_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  SB_CHECK(cudaEventCreateWithFlags(&synchronized_, cudaEventDisableTiming));
  // A workspace of our own, so cuBLAS never allocates inside a CUDA graph capture.
  cublas_workspace_ = DeviceArray<unsigned char>(std::size_t{32} << 20);
  SB_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_.data(), cublas_workspace_.bytes()));
}

Context::~Context() {
  (void)cudaSetDevice(device_);
  if (synchronized_ != nullptr) (void)cudaEventDestroy(synchronized_);
  if (cublas_ != nullptr) (void)cublasDestroy(cublas_);
  if (cudnn_ != nullptr) (void)cudnnDestroy(cudnn_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

void Context::reserve_workspace(std::size_t bytes) {
  if (bytes <= workspace_.bytes()) return;
  synchronize();  // a queued kernel may still use the old workspace
  workspace_ = DeviceArray<unsigned char>();
  workspace_ = DeviceArray<unsigned char>(bytes);
  ++generation_;
}

void Context::reserve_bf16(BF16Slot slot, std::size_t count) {
  if (count <= bf16_[slot].size()) return;
  synchronize();  // a queued kernel may still use the old buffer
  bf16_[slot] = DeviceArray<std::uint16_t>();
  bf16_[slot] = DeviceArray<std::uint16_t>(count);
  ++generation_;
}

void Context::synchronize() const {
  if (health_checks_.empty()) {
    SB_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  SB_CHECK(cudaEventRecord(synchronized_, stream_));
  wait(synchronized_);
}

void Context::wait(cudaEvent_t event) const {
  if (health_checks_.empty()) {
    SB_CHECK(cudaEventSynchronize(event));
    return;
  }
  // Spin on the event, as CUDA's own synchronize does by default (a sleep between polls would
  // add its length to every step), and run the health checks once a millisecond.
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_check = Clock::now();
  for (;;) {
    const cudaError_t status = cudaEventQuery(event);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) SB_CHECK(status);
    if (Clock::now() - last_check >= std::chrono::milliseconds(1)) {
      for (const auto& [id, check] : health_checks_) check();
      last_check = Clock::now();
    }
    std::this_thread::yield();
  }
}

int Context::add_health_check(std::function<void()> check) {
  health_checks_.emplace_back(next_check_id_, std::move(check));
  return next_check_id_++;
}

void Context::remove_health_check(int id) {
  std::erase_if(health_checks_, [id](const auto& entry) { return entry.first == id; });
}

int pick_device(int local_rank) {
  const int count = device_count();
  if (count == 0) throw BackendError("backend cuda: no GPU found (is the NVIDIA driver loaded?)");
  // One visible GPU for every rank (SLURM's --gpus-per-task=1, or CUDA_VISIBLE_DEVICES set per
  // rank): each rank's device 0 is its own. (Two ranks on one GPU make NCCL fail, naming it.)
  if (count == 1) return 0;
  if (local_rank >= count) {
    throw BackendError(fmt::format(
        "backend cuda: local rank {} needs GPU {}, but this host has {} GPU{}; start at most {} "
        "rank{} per host (one GPU per rank)",
        local_rank, local_rank, count, count == 1 ? "" : "s", count, count == 1 ? "" : "s"));
  }
  return local_rank;
}

}  // namespace scalebench::trainer::cuda
