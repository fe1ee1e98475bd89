// scalebench-train --benchmark allreduce: nccl-tests' all_reduce_perf in the trainer. In-place sum
// allreduces of floats over a range of message sizes, each size checked and timed, one table row
// per size (docs/allreduce-benchmark.md). MPI over host memory for --backend cpu, the backend's
// own collective over device memory (NCCL) for a device backend.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/options.hpp"

namespace scalebench::trainer {

// nccl-tests' defaults: -b 8 -e 128M -f 2 -n 20 -w 5.
inline constexpr std::size_t kDefaultMinBytes = 8;
inline constexpr std::size_t kDefaultMaxBytes = std::size_t{128} << 20;
inline constexpr int kDefaultStepFactor = 2;
inline constexpr int kDefaultIterations = 20;
inline constexpr int kDefaultWarmupIterations = 5;
// The largest message: 4 GiB (MPI counts are int, so 2^31 - 1 floats at most).
inline constexpr std::size_t kMaxAllreduceBytes = std::size_t{4} << 30;

// "8", "64K", "128M", "1G" (K, M, G are powers of 1024, either case, optionally followed by B or
// iB: "1KiB", "4MB"). Throws UsageError naming `option` for anything else, including 0.
std::size_t parse_size(std::string_view text, std::string_view option = "size");

// min, min·factor, min·factor², ... up to and including max (nothing past it).
std::vector<std::size_t> size_sequence(std::size_t min_bytes, std::size_t max_bytes, int factor);

// nccl-tests' definitions (docs/metrics.md): algbw = bytes / time in GB/s (10^9 bytes/s), 0 when
// the time is not positive; busbw = algbw · 2(n − 1)/n for an allreduce over n ranks (0 for one).
double algorithm_bandwidth_gbs(std::size_t bytes, double seconds);
double allreduce_bus_bandwidth_gbs(double algbw_gbs, int ranks);

// The benchmark's settings after defaults and checks.
struct AllreduceSettings {
  std::size_t min_bytes = kDefaultMinBytes;
  std::size_t max_bytes = kDefaultMaxBytes;
  int step_factor = kDefaultStepFactor;
  int iterations = kDefaultIterations;
  int warmup_iterations = kDefaultWarmupIterations;
};
// From the command line; throws UsageError for sizes out of order or out of range.
AllreduceSettings allreduce_settings(const TrainOptions& options);

// What the first line reports.
struct AllreduceInfo {
  std::string transport;  // "mpi", "nccl"
  std::string backend;    // --backend
  int np = 1;
  AllreduceSettings settings;
  std::string hosts = {};       // "node1:1,node2:1" (dist::hosts_summary); printed when known
  std::string rank_hosts = {};  // "node1,node2" (dist::rank_hosts_runs); printed when known
};

// One size: `bytes` = count · 4 (the size asked for, rounded down to whole floats).
struct AllreduceRow {
  std::size_t bytes = 0;
  std::size_t count = 0;  // floats
  double seconds = 0.0;   // per allreduce: mean over the iterations, then mean over the ranks
  double algbw_gbs = 0.0;
  double busbw_gbs = 0.0;
  std::size_t wrong = 0;  // elements not equal to np(np + 1)/2, summed over ranks
};

struct AllreduceSummary {
  AllreduceInfo info;
  std::vector<AllreduceRow> rows;
  std::size_t wrong = 0;           // Σ rows' wrong
  double average_busbw_gbs = 0.0;  // mean of the rows' busbw
};

// The lines, exactly as printed (docs/trainer-output.md).
std::string format_allreduce_header(const AllreduceInfo& info);
std::vector<std::string> format_allreduce_columns();  // the two `#` column header lines
std::string format_allreduce_row(const AllreduceRow& row);
std::vector<std::string> format_allreduce_footer(const AllreduceSummary& summary);

// Warms up at the largest and the smallest size (as nccl-tests does), then checks and times
// every size of `info.settings` with `benchmark` on every rank of dist::,
// printing the header, one row per size and the footer through `print` (rank 0's lines). Time
// and #wrong are combined over ranks with an MPI sum (a no-op for one process).
AllreduceSummary benchmark_allreduce(AllreduceBenchmark& benchmark, const AllreduceInfo& info,
                                     const std::function<void(std::string_view)>& print);

// The backend's own allreduce benchmark (NCCL on its device), or MPI over host memory for the
// cpu backend. Throws BackendError for any other backend that has none.
std::unique_ptr<AllreduceBenchmark> make_allreduce_benchmark(const Backend& backend,
                                                             const ProcessGroup& group);

// The whole --benchmark allreduce program after start-up: output to stdout on rank 0. Throws
// TrainerError after printing everything when an element came back wrong.
AllreduceSummary run_allreduce_benchmark(const TrainOptions& options);

}  // namespace scalebench::trainer
