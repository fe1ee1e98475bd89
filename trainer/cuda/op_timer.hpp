// --profile-ops on the GPU: a pair of CUDA events around each operation of a training step
// (forward and backward of every node, the input copy, the loss, the optimizer step), read once
// the step's device work has finished. Events time the device, not the host's launches; the
// host waits for each step's end before the next one starts (collect), so profiling removes the
// overlap of one step's host work with the previous step's device work.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/cuda/device.hpp"

namespace scalebench::trainer::cuda {

class OpEventTimer {
 public:
  // What a pair of events times: node i's forward (node 0: the input copy) or backward, the loss
  // or the optimizer step.
  enum class Part { forward, backward, loss, optimizer };

  explicit OpEventTimer(std::size_t nodes);
  ~OpEventTimer();
  OpEventTimer(const OpEventTimer&) = delete;
  OpEventTimer& operator=(const OpEventTimer&) = delete;

  void begin(Part part, std::size_t node, cudaStream_t stream);
  void end(Part part, std::size_t node, cudaStream_t stream);
  // Waits (through `context`, which polls NCCL's health) for the last event recorded, then adds
  // every recorded pair's time to `times` and forgets the records.
  void collect(const Context& context, OpTimes& times);

 private:
  std::size_t slot(Part part, std::size_t node) const;
  void destroy_events();
  std::size_t nodes_;
  std::vector<cudaEvent_t> start_, stop_;
  std::vector<char> recorded_;  // slot -> a begin/end pair is waiting to be read
  cudaEvent_t last_ = nullptr;  // the last end recorded
};

}  // namespace scalebench::trainer::cuda
