// The interface between the training loop and a compute backend (cpu/, cuda/). The loop only
// sees a Model: a flat parameter buffer, a flat gradient buffer (so the gradient allreduce is one
// call), a training step on one batch, an optimizer step and an evaluation. Which backends exist
// in a build is known only to backend_registry.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/model/spec.hpp"

namespace scalebench::trainer {

// What a model is and how it is optimised: backend-neutral, in trainer/model/spec.hpp.
using model::ModelSpec;
using model::OptimizerOptions;

// How a backend runs a model, as opposed to what the model is (ModelSpec): each backend reads
// its own settings and ignores the others'.
struct BackendOptions {
  // cpu: OpenMP threads for oneDNN, each flushing denormals to zero.
  int threads = 1;
  // The rank among this host's processes: picks the GPU (cuda).
  int local_rank = 0;
  // "fp32", or "bf16": convolutions and matrix products in bfloat16 with fp32 accumulation,
  // parameters, gradients and the optimizer in fp32 (mixed precision; cuda only, the cpu backend
  // refuses it).
  std::string precision = "fp32";
  // Capture each training step's device work in a CUDA graph and replay it (cuda).
  bool cuda_graph = false;
  // Only algorithms that give the same bits every run (cuda; the cpu backend always does).
  bool deterministic = false;
  // Activations stored N×H×W×C on the device (cuda; PyTorch's torch.channels_last).
  bool channels_last = false;
  // "legacy" (cudnnFind) or "graph" (cuDNN's graph API, fused epilogues) convolutions (cuda).
  std::string conv_engine = "legacy";
  // Say on stderr what the backend chose and why something fell back.
  bool verbose = false;
  // "fp32", or "bf16": activations and their gradients stored in bfloat16 (cuda, bf16 only).
  std::string activation_type = "fp32";
};

// What a backend needs from the MPI layer to set up a communicator of its own (NCCL), since only
// distributed.cpp talks to MPI: the ranks, and a broadcast of rank 0's bytes (the ncclUniqueId).
struct ProcessGroup {
  int rank = 0, size = 1, local_rank = 0;
  std::function<void(std::span<std::byte>)> broadcast;  // rank 0's bytes to every rank
};

// The gradient allreduce of one training step, in buckets (dist::GradientReducer on the host with
// MPI, or a device model's own, with NCCL). One step:
//   gradients_ready(offset)...  (from Model::set_gradients_ready during backward, with overlap)
//   finish()                    (after train_batch: the gradients hold the mean over ranks)
class GradientAllreduce {
 public:
  virtual ~GradientAllreduce() = default;
  virtual void gradients_ready(std::size_t offset) = 0;
  virtual void finish() = 0;
  virtual bool overlap() const = 0;
};

// One in-place sum allreduce of a float buffer, for the allreduce benchmark (nccl-tests style):
// MPI over host memory, or a backend's collective over device memory (NCCL).
class AllreduceBenchmark {
 public:
  virtual ~AllreduceBenchmark() = default;
  virtual std::string_view name() const = 0;  // "mpi", "nccl"
  // Fills a buffer of n floats with rank + 1, sums it over ranks once and returns this rank's
  // count of elements that differ from size·(size + 1)/2 (nccl-tests' #wrong).
  virtual std::size_t check(std::size_t n) = 0;
  // `warmup` untimed then `iterations` timed allreduces of n floats, launched back to back and
  // waited for at the end (as nccl-tests; MPI's are blocking anyway); returns this rank's mean
  // seconds per allreduce.
  virtual double time(std::size_t n, int warmup, int iterations) = 0;
};

using SgdOptions = OptimizerOptions;

// Sums over one batch, so that the loop can average over an epoch and over ranks.
struct BatchStats {
  double loss_sum = 0.0;     // sum of per-image cross-entropy losses
  std::int64_t correct = 0;  // images whose arg-max prediction is the label
};

// Per-operation times of training steps (--profile-ops), in seconds summed over the steps.
struct OpTime {
  double forward = 0.0;
  double backward = 0.0;
};
struct OpTimes {
  // By model::Graph node; node 0's forward is the batch's copy to the device (0 on the host).
  std::vector<OpTime> nodes;
  double loss = 0.0;       // softmax cross-entropy, its gradient and reading it back
  double optimizer = 0.0;  // the optimizer step
  std::int64_t steps = 0;
  std::string clock;                 // how they were measured ("host steady clock", "CUDA events")
  std::size_t activation_bytes = 4;  // bytes per stored activation value (fp32: 4)
};

class Model {
 public:
  virtual ~Model() = default;
  virtual std::size_t parameter_count() const = 0;
  // Host views of the flat buffers; gradients() holds the last train_batch's gradients of the
  // batch-mean loss. A device model copies its buffers to a host mirror on each call (tests, the
  // initial broadcast), so after writing through parameters() call parameters_changed().
  virtual std::span<float> parameters() = 0;
  virtual std::span<float> gradients() = 0;
  virtual void parameters_changed() {}
  // Forward and backward on `batch` images (batch × input_size floats) and their labels.
  virtual BatchStats train_batch(std::span<const float> images,
                                 std::span<const std::int32_t> labels, std::size_t batch) = 0;
  // One optimizer step with the current gradients() (after they were averaged over ranks), at the
  // learning rate of set_learning_rate() (initially OptimizerOptions::lr).
  virtual void optimizer_step() = 0;
  virtual void set_learning_rate(double lr) = 0;
  // Called during train_batch's backward each time the gradients from `offset` to the end of
  // gradients() are final: parameters are stored in layer order and backward runs from the last
  // layer to the first, so `offset` only decreases within one step (and ends at 0). Lets the
  // gradient allreduce of finished buckets overlap the rest of backward. A model that never
  // calls it is correct too: the loop reduces whatever is left after train_batch returns.
  using GradientsReady = std::function<void(std::size_t offset)>;
  virtual void set_gradients_ready(GradientsReady callback) { (void)callback; }
  // The gradient allreduce on the model's device (NCCL on the communication stream), or nullptr
  // for a host model: the loop then reduces gradients() with MPI (dist::GradientReducer).
  virtual std::unique_ptr<GradientAllreduce> make_gradient_allreduce(const ProcessGroup& group,
                                                                     std::size_t bucket_bytes,
                                                                     bool overlap) {
    (void)group;
    (void)bucket_bytes;
    (void)overlap;
    return nullptr;
  }
  // --profile-ops: from now on, time each operation of every training step and each optimizer
  // step, summed until take_op_times(). False when the model cannot (nothing is then timed).
  // Timing makes the host wait for each operation (cpu) or for each step (cuda).
  virtual bool start_op_timing() { return false; }
  // The sums since start_op_timing() or the previous call, which restarts them.
  virtual OpTimes take_op_times() { return {}; }
  // Forward only: loss and correct count, no gradients.
  virtual BatchStats evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                              std::size_t batch) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // One line for --help and error messages, e.g. the devices found.
  virtual std::string description() const = 0;
  virtual int device_count() const = 0;
  // The smallest real use of the backend's device: x ← alpha·x, computed on the device
  // (a round trip through device memory for accelerators). Used by the backend tests.
  virtual void scale(std::span<float> x, float alpha) const = 0;
  // Sets the backend up as `options` say (threads, precision, ...) and builds the model. Throws
  // BackendError (or UsageError for an unknown model) when it cannot train this model.
  virtual std::unique_ptr<Model> make_model(const ModelSpec& spec, const SgdOptions& sgd,
                                            const BackendOptions& options) const = 0;
  // The allreduce benchmark over the backend's device memory, or nullptr for a host backend
  // (the benchmark then times MPI_Allreduce over host memory).
  virtual std::unique_ptr<AllreduceBenchmark> make_allreduce_benchmark(
      const ProcessGroup& group) const {
    (void)group;
    return nullptr;
  }
};

}  // namespace scalebench::trainer
