#include "trainer/cuda/nccl.hpp"

#include <fmt/format.h>
#include <nccl.h>

#include <span>
#include <vector>

#include "trainer/cuda/check.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/errors.hpp"
#include "trainer/gradient_buckets.hpp"

namespace scalebench::trainer::cuda {
namespace {

class Communicator {
 public:
  Communicator(const ProcessGroup& group, int device) : size_(group.size) {
    if (group.size > 1 && !group.broadcast) {
      throw BackendError("backend cuda: NCCL needs the MPI broadcast of rank 0's ncclUniqueId");
    }
    ncclUniqueId id{};
    if (group.rank == 0) SB_CHECK(ncclGetUniqueId(&id));
    if (group.broadcast) group.broadcast(std::as_writable_bytes(std::span(&id, 1)));
    SB_CHECK(cudaSetDevice(device));
    SB_CHECK(ncclCommInitRank(&comm_, group.size, id, group.rank));
  }
  ~Communicator() {
    if (comm_ != nullptr) (void)ncclCommDestroy(comm_);
  }
  Communicator(Communicator&&) = delete;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ncclComm_t get() const { return comm_; }
  int size() const { return size_; }
  // Throws (after aborting the communicator, which frees the kernels waiting on it) when NCCL
  // reports an asynchronous error: a peer or the network failed mid-collective.
  void check_async_error() {
    if (comm_ == nullptr) return;
    ncclResult_t state = ncclSuccess;
    SB_CHECK(ncclCommGetAsyncError(comm_, &state));
    if (state == ncclSuccess || state == ncclInProgress) return;
    (void)ncclCommAbort(comm_);
    comm_ = nullptr;
    throw BackendError(fmt::format(
        "backend cuda: NCCL failed during the gradient allreduce ({}): a peer rank or the "
        "network between ranks failed",
        ncclGetErrorString(state)));
  }

 private:
  ncclComm_t comm_ = nullptr;
  int size_;
};

// A high-priority non-blocking stream: a bucket's allreduce should not queue behind
// backward's kernels.
class Stream : public Owned<cudaStream_t, &cudaStreamDestroy> {
 public:
  Stream() {
    int least = 0, greatest = 0;
    SB_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SB_CHECK(cudaStreamCreateWithPriority(&handle_, cudaStreamNonBlocking, greatest));
  }
};

class Event : public Owned<cudaEvent_t, &cudaEventDestroy> {
 public:
  explicit Event(unsigned flags = cudaEventDisableTiming) {
    SB_CHECK(cudaEventCreateWithFlags(&handle_, flags));
  }
};

// One process: the sum over one rank is the mean already.
class NoAllreduce final : public GradientAllreduce {
 public:
  void gradients_ready(std::size_t) override {}
  void finish() override {}
  bool overlap() const override { return false; }
};

class NcclGradientAllreduce final : public GradientAllreduce {
 public:
  NcclGradientAllreduce(Context& context, float* gradients, std::size_t count,
                        const ProcessGroup& group, std::size_t bucket_bytes, bool overlap)
      : context_(context),
        gradients_(gradients),
        buckets_(make_buckets(count, bucket_bytes)),
        overlap_(overlap),
        communicator_(group, context.device()) {
    health_check_ = context_.add_health_check([this] { communicator_.check_async_error(); });
  }
  ~NcclGradientAllreduce() override {
    // The gradient buffer must outlive any allreduce still in flight (an exception mid-step),
    // but a failed peer must not make this wait hang: wait polling the health checks (ours
    // included), and give up on an error.
    if (communicator_.get() != nullptr) {
      try {
        SB_CHECK(cudaEventRecord(reduced_.get(), stream_.get()));
        context_.wait(reduced_.get());
      } catch (...) {
      }
    }
    context_.remove_health_check(health_check_);
  }

  void gradients_ready(std::size_t offset) override {
    if (!overlap_) return;
    launch_until(complete_buckets(buckets_, offset));
  }

  void finish() override {
    launch_until(buckets_.size());
    launched_ = 0;
    SB_CHECK(cudaEventRecord(reduced_.get(), stream_.get()));
    SB_CHECK(cudaStreamWaitEvent(context_.stream(), reduced_.get(), 0));
  }

  bool overlap() const override { return overlap_; }

 private:
  void launch_until(std::size_t complete) {
    if (complete <= launched_) return;
    // Everything queued on the compute stream so far, the gradients of these buckets included.
    SB_CHECK(cudaEventRecord(computed_.get(), context_.stream()));
    SB_CHECK(cudaStreamWaitEvent(stream_.get(), computed_.get(), 0));
    SB_CHECK(ncclGroupStart());
    for (; launched_ < complete; ++launched_) {
      const Bucket& b = buckets_[launched_];
      float* data = gradients_ + b.begin;
      SB_CHECK(ncclAllReduce(data, data, b.end - b.begin, ncclFloat, ncclAvg, communicator_.get(),
                             stream_.get()));
    }
    SB_CHECK(ncclGroupEnd());
  }

  Context& context_;
  float* gradients_;
  std::vector<Bucket> buckets_;
  bool overlap_;
  Communicator communicator_;
  Stream stream_;
  Event computed_, reduced_;
  std::size_t launched_ = 0;
  int health_check_ = -1;
};

class NcclAllreduceBenchmark final : public AllreduceBenchmark {
 public:
  explicit NcclAllreduceBenchmark(const ProcessGroup& group)
      : rank_(group.rank),
        size_(group.size),
        device_(pick_device(group.local_rank)),
        communicator_(group, device_) {}
  ~NcclAllreduceBenchmark() override { (void)cudaStreamSynchronize(stream_.get()); }

  std::string_view name() const override { return "nccl"; }

  std::size_t check(std::size_t n) override {
    reserve(n);
    fill(buffer_.data(), n, static_cast<float>(rank_ + 1), stream_.get());
    SB_CHECK(ncclAllReduce(buffer_.data(), buffer_.data(), n, ncclFloat, ncclSum,
                           communicator_.get(), stream_.get()));
    std::vector<float> host(n);
    SB_CHECK(cudaStreamSynchronize(stream_.get()));
    if (n > 0) {
      SB_CHECK(cudaMemcpy(host.data(), buffer_.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
    }
    const auto expected = static_cast<float>(size_ * (size_ + 1) / 2);
    std::size_t wrong = 0;
    for (float x : host) wrong += x != expected ? 1 : 0;
    return wrong;
  }

  double time(std::size_t n, int warmup, int iterations) override {
    reserve(n);
    // Zeros stay zeros however many sums run (the check's values would grow without bound).
    SB_CHECK(cudaMemsetAsync(buffer_.data(), 0, n * sizeof(float), stream_.get()));
    for (int i = 0; i < warmup; ++i) run(n);
    SB_CHECK(cudaStreamSynchronize(stream_.get()));
    SB_CHECK(cudaEventRecord(start_.get(), stream_.get()));
    for (int i = 0; i < iterations; ++i) run(n);
    SB_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
    SB_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    SB_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return iterations > 0 ? static_cast<double>(ms) * 1e-3 / iterations : 0.0;
  }

 private:
  void reserve(std::size_t n) {
    if (n > buffer_.size()) {
      SB_CHECK(cudaStreamSynchronize(stream_.get()));
      buffer_ = DeviceArray<float>();
      buffer_ = DeviceArray<float>(n);
    }
  }
  void run(std::size_t n) {
    SB_CHECK(ncclAllReduce(buffer_.data(), buffer_.data(), n, ncclFloat, ncclSum,
                           communicator_.get(), stream_.get()));
  }

  int rank_, size_, device_;
  Communicator communicator_;
  Stream stream_;
  Event start_{cudaEventDefault}, stop_{cudaEventDefault};
  DeviceArray<float> buffer_;
};

}  // namespace

std::unique_ptr<GradientAllreduce> make_nccl_gradient_allreduce(
    Context& context, float* gradients, std::size_t count, const ProcessGroup& group,
    std::size_t bucket_bytes, bool overlap, bool even_for_one_rank) {
  if (group.size <= 1 && !even_for_one_rank) return std::make_unique<NoAllreduce>();
  return std::make_unique<NcclGradientAllreduce>(context, gradients, count, group, bucket_bytes,
                                                 overlap);
}

std::unique_ptr<AllreduceBenchmark> make_nccl_allreduce_benchmark(const ProcessGroup& group) {
  return std::make_unique<NcclAllreduceBenchmark>(group);
}

}  // namespace scalebench::trainer::cuda
