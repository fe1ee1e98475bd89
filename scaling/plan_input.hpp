// The scaling model's input from loaded runs (report/data/run_set.hpp; scaling/plan_load.hpp
// loads them): the training runs' step times and the model's size from their headers, and the
// allreduce benchmark's rows, of one series (condition and --only levels), with a ReportError
// naming what is missing or mixed. The fitting and the table are in scaling/plan.cpp.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/data/run_set.hpp"
#include "scaling/model.hpp"
#include "scaling/plan.hpp"

namespace scalebench::scaling {

inline constexpr double kMiB = 1024.0 * 1024.0;

// What the training runs say about the step: per run its mean step time, and the model's size.
struct TrainingData {
  std::vector<TrainingRun> runs;
  std::map<int, std::vector<double>> steps_by_np;
  std::map<int, long long> images_by_np;  // images per epoch, all ranks
  double parameters = 0;
  double fusion_bytes = 64 * kMiB;
  int batch = 0;
  bool overlap_on = false;
  std::string series;
  std::vector<std::string> notes;
  int skip_epochs = 0;      // the warm-up epochs left out of each run (report's rule)
  std::string skip_origin;  // where that number came from, for the notes
};

// The training runs of `set` (filtered by o.condition and o.only when loaded: one series, one
// batch size), without the allreduce benchmark runs.
TrainingData load_training(const report::RunSet& set, const ScalingPlanOptions& o);

// The allreduce benchmark's runs and rows of one transport, np <= max_np where given, and sizes
// within o.allreduce_window of `message_bytes` (0: every size).
struct AllreduceData {
  std::vector<AllreduceRun> runs;
  std::string transport;
};

AllreduceData load_allreduce(const report::RunSet& set, const ScalingPlanOptions& o,
                             std::optional<int> max_np, double message_bytes);

}  // namespace scalebench::scaling
