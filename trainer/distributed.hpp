// Everything the trainer does with MPI lives in distributed.cpp (llm.c style): start-up, rank and
// size, the broadcast of the initial parameters, the gradient allreduce and the metric sums.
// Every function is a no-op for one process, and a process that was not started by a launcher
// (mpirun, srun, a PMI/PMIx runtime) never touches MPI at all.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/gradient_buckets.hpp"

namespace scalebench::trainer::dist {

// True when the environment shows an MPI launcher: OMPI_COMM_WORLD_SIZE (Open MPI's mpirun),
// PMI_SIZE (MPICH/Hydra, Intel MPI), PMIX_RANK (PMIx runtimes, Open MPI 5) or srun with more
// than one task (SLURM_STEP_NUM_TASKS, falling back to SLURM_NTASKS, > 1).
bool launcher_detected();

// Calls MPI_Init when a launcher was detected; otherwise sets up a single process.
void init(int* argc, char*** argv);
// MPI_Finalize if MPI was initialised; safe to call more than once.
void finalize();
// Ends every rank: MPI_Abort under MPI (so no rank hangs in a collective), std::exit otherwise.
[[noreturn]] void abort_all(int exit_code);

bool using_mpi();
int rank();
int size();
// The rank among the processes on this host (picks the GPU later); 0 for one process.
int local_rank();
const std::string& host_name();
// Every rank's host name, in rank order. Collective: every rank must call it.
std::vector<std::string> rank_host_names();
// The hosts, in rank order of first appearance with their rank counts: "node1:4,node2:4".
std::string hosts_summary(const std::vector<std::string>& rank_hosts);
// Each rank's host in rank order, a run of ranks on one host as HOST*COUNT: "node1*2,node2*2"
// (ranks 0-1 on node1, 2-3 on node2); round-robin placement gives "node1,node2,node1,node2".
std::string rank_hosts_runs(const std::vector<std::string>& rank_hosts);

// Copies rank 0's buffer to every rank.
void broadcast(std::span<float> data);
void broadcast_bytes(std::span<std::byte> data);
// This process's ranks and broadcast_bytes, for a backend's own communicator (NCCL).
ProcessGroup process_group();
// Replaces data on every rank by the sum over ranks (metrics: loss sums, correct counts).
void allreduce_sum(std::span<double> data);
void barrier();

// ---- Gradient allreduce in fusion buckets (trainer/gradient_buckets.hpp) ----

using trainer::Bucket;
using trainer::complete_buckets;
using trainer::kDefaultFusionBytes;
using trainer::make_buckets;

// Replaces a flat gradient buffer by its mean over ranks, bucket by bucket. One step:
//   gradients_ready(offset)...   (optional, from Model::set_gradients_ready during backward)
//   finish()                     (after train_batch; the buffer holds the mean afterwards)
// With overlap, gradients_ready starts a non-blocking in-place MPI_Iallreduce (sum) of each bucket
// that became complete and tests the outstanding ones (Open MPI advances non-blocking collectives
// only inside MPI calls, so these tests between layers are all the progress they make during
// backward); finish() starts the rest, waits for all and scales by 1/size. Without overlap
// gradients_ready does nothing and finish() runs one blocking MPI_Allreduce per bucket. For one
// process both do nothing (the sum over one rank is the mean).
// MPI is called from the calling thread only, so the callback must run on the thread that called
// init() (MPI_THREAD_SINGLE).
class GradientReducer final : public GradientAllreduce {
 public:
  GradientReducer(std::span<float> gradients, std::size_t bucket_bytes, bool overlap);
  ~GradientReducer() override;
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  void gradients_ready(std::size_t offset) override;
  void finish() override;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  bool overlap() const override { return overlap_; }
  // Buckets started so far in the current step (buckets[0, launched())).
  std::size_t launched() const { return launched_; }
  // Buckets launched by gradients_ready (before finish) in the last finished step: what overlap
  // achieved; always 0 without overlap or with one process.
  std::size_t launched_early() const { return launched_early_; }

 private:
  struct Requests;  // MPI_Request storage; mpi.h stays out of this header
  std::span<float> gradients_;
  std::vector<Bucket> buckets_;
  bool overlap_;
  std::size_t launched_ = 0;  // buckets[0, launched_) have been started this step
  std::size_t launched_early_ = 0;
  std::unique_ptr<Requests> requests_;
};

// ---- The allreduce benchmark over MPI (scalebench-train --benchmark allreduce) ----
//
// In-place MPI_Allreduce (MPI_FLOAT, MPI_SUM) over host memory. time() waits at an MPI_Barrier,
// then runs the warm-up and the timed allreduces back to back on a steady clock. Under a launcher
// MPI is called even for one rank (the library's cost of a sum over one rank); a plain single
// process has no MPI and nothing to move, so its allreduce is empty and its name() is "none".
std::unique_ptr<AllreduceBenchmark> make_mpi_allreduce_benchmark();

// Writes one whole line (a newline is appended) to stdout on rank 0 and flushes it at once, so
// a launcher never tags half a line. Other ranks print nothing.
void print0(std::string_view line);

}  // namespace scalebench::trainer::dist
