// Everything the trainer does with MPI lives in distributed.cpp (llm.c style): start-up, rank and
// size, the broadcast of the initial parameters, the gradient allreduce and the metric sums.
// Every function is a no-op for one process, and a process that was not started by a launcher
// (mpirun, srun, a PMI/PMIx runtime) never touches MPI at all.
#pragma once

#include <span>
#include <string>
#include <string_view>

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

// Copies rank 0's buffer to every rank.
void broadcast(std::span<float> data);
// Replaces data on every rank by the mean over ranks: one MPI_Allreduce (in place, sum), then a
// scale by 1/size.
void allreduce_average(std::span<float> data);
// Replaces data on every rank by the sum over ranks (metrics: loss sums, correct counts).
void allreduce_sum(std::span<double> data);
void barrier();

// Writes one whole line (a newline is appended) to stdout on rank 0 and flushes it at once, so
// a launcher never tags half a line. Other ranks print nothing.
void print0(std::string_view line);

}  // namespace scalebench::trainer::dist
