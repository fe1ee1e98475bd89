// The data-parallel training loop and the lines it prints (docs/trainer-output.md).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/dataset.hpp"
#include "trainer/options.hpp"

namespace scalebench::trainer {

struct RunInfo {  // what the header line reports
  std::string model;
  std::size_t parameters = 0;
  std::string dataset;
  std::size_t train_images = 0;  // images trained per epoch, all ranks together
  std::size_t test_images = 0;
  int np = 1;
  int batch_size = 0;  // per rank
  double lr = 0.0;     // already × np
  std::uint32_t seed = 0;
  int threads = 1;
  std::string backend;
  std::string precision = "fp32";
  double fusion_mb = 64.0;         // gradient allreduce bucket size, MiB
  bool overlap = false;            // buckets reduced during backward
  bool cuda_graph = false;         // printed only when on
  bool deterministic = false;      // printed only when on
  bool channels_last = false;      // printed only when on (memory_format=channels_last)
  bool conv_engine_graph = false;  // printed only when on (conv_engine=graph)
  bool bf16_activations = false;   // printed only when on (activation_type=bf16)
  std::string hosts = {};          // "node1:4,node2:4" (dist::hosts_summary); printed when known
  std::string rank_hosts = {};     // "node1*4,node2*4" (dist::rank_hosts_runs); printed when known
  double emulated_compute_ms = 0;  // printed only when set (--emulated-compute-ms)
};

struct EpochResult {
  int epoch = 0;  // 1-based
  std::size_t steps = 0;
  double loss = 0.0;      // training loss, mean over the epoch and the ranks
  double accuracy = 0.0;  // training accuracy, likewise
  std::optional<double> test_accuracy;
  double images_per_second = 0.0;
  double seconds = 0.0;
};

struct TrainingSummary {
  RunInfo info;
  std::vector<EpochResult> epochs;
  double seconds = 0.0;  // Σ epoch seconds
  double images_per_second = 0.0;
};

std::string format_header(const RunInfo& info);
std::string format_epoch_start(int epoch, int epochs);  // "Epoch y/z"
std::string format_epoch_end(const EpochResult& result);
std::string format_done(const TrainingSummary& summary);

// Reads or generates the data named by --dataset (and applies --train-limit).
DataSplit load_data(const TrainOptions& options);

// Trains on `data` with every rank of dist:: (using --threads threads) and returns the results.
// `print` receives each output line on rank 0 only (the caller flushes). Epochs shuffle with seed +
// epoch; every rank runs floor(train / (np × batch)) steps, so the remainder of each shuffled epoch
// is dropped.
TrainingSummary train(const TrainOptions& options, const DataSplit& data,
                      const std::function<void(std::string_view)>& print);

// The whole program after start-up: data, training, output to stdout on rank 0.
void run(const TrainOptions& options);

}  // namespace scalebench::trainer
