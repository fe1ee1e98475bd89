// From the stamped lines of one run to its epochs: the epoch rule of the reference study.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "orchestrator/executor.hpp"

namespace scalebench::orchestrator {

struct RunAnalysis {
  std::vector<db::LineRecord> lines;    // every line, tag removed, valid UTF-8
  std::vector<db::EpochRecord> epochs;  // in epoch order; duration absent when the end is unseen
  int total_epochs = 0;                 // z of the first `Epoch y/z`, 0 if none was seen
  bool training_done = false;           // a `Training done:` line arrived
  std::optional<double> startup_seconds;
  std::optional<long long> train_images;
  // A benchmark run (`# scalebench-train benchmark=allreduce ...` header): the epoch rule does
  // not apply; its rows are read instead, and it is complete once `# Avg bus bandwidth` arrives.
  std::optional<std::string> benchmark;
  std::vector<db::AllreduceRecord> allreduce;  // rows after the benchmark header, in order
  bool benchmark_done = false;
  std::vector<std::string> problems;    // why the run is incomplete, for the run's error
};

// Epoch y's duration = t(first `Epoch y+1/z`, any rank) - t(first `Epoch y/z`, any rank); the
// last epoch ends at the first `Training done:` line. Times are arrival times, relative to
// start_monotonic_ns. The trainer's own figures come from its end-of-epoch lines.
// A run whose output starts a benchmark is judged by the benchmark instead: complete with at least
// one row and its `# Avg bus bandwidth` line, and no wrong elements (docs/allreduce-benchmark.md).
RunAnalysis analyze_run(const std::vector<StampedLine>& lines, std::int64_t start_monotonic_ns,
                        const TagOptions& tags = {});

}  // namespace scalebench::orchestrator
