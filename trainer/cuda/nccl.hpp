// Everything the cuda backend does with NCCL: the communicator (rank 0's ncclUniqueId reaches
// the other ranks through the MPI layer's broadcast, ProcessGroup::broadcast), the gradient
// allreduce in fusion buckets on a communication stream, and the allreduce benchmark. With one
// process there is nothing to reduce and no communicator is made for training.
#pragma once

#include <cstddef>
#include <memory>

#include "trainer/backend.hpp"
#include "trainer/cuda/device.hpp"

namespace scalebench::trainer::cuda {

// Averages the `count` device floats at `gradients` over the ranks of `group` with
// ncclAllReduce(ncclAvg), one bucket of trainer/gradient_buckets.hpp at a time, on a
// high-priority stream of its own. With overlap, gradients_ready() (called as backward queues
// each layer) launches every bucket that became complete, ordered after the work queued so far
// on the compute stream by an event, so the allreduce of the last layers runs while the GPU
// computes the first layers' gradients. finish() launches the rest and makes the compute stream
// wait for all of them before the optimizer step. Nothing waits on the host. One rank gets a
// reducer that does nothing, unless `even_for_one_rank` (tests: the NCCL path on one GPU).
std::unique_ptr<GradientAllreduce> make_nccl_gradient_allreduce(
    Context& context, float* gradients, std::size_t count, const ProcessGroup& group,
    std::size_t bucket_bytes, bool overlap, bool even_for_one_rank = false);

// The allreduce benchmark over device memory of this rank's GPU (nccl-tests' all_reduce_perf:
// sum of floats, in place, iterations launched back to back then waited for).
std::unique_ptr<AllreduceBenchmark> make_nccl_allreduce_benchmark(const ProcessGroup& group);

}  // namespace scalebench::trainer::cuda
