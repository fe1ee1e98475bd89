// The scaling model against published curves (docs/scaling-model.md, "Validation"): each case is
// a published efficiency with the inputs the model needs (per-GPU throughput, model size, the
// network), every figure cited. `scalebench model --published` prints the table; the tests keep
// its errors within the tolerances stated there.
#pragma once

#include <string>
#include <vector>

#include "scaling/model.hpp"

namespace scalebench::scaling {

struct PublishedCase {
  std::string study;  // cases of one study calibrate each other
  std::string model;
  int gpus = 1;
  int gpus_per_node = 1;
  std::string intra_network;  // network_presets() names
  std::string inter_network;
  double parameters = 0;
  double images_per_second_per_gpu = 0;  // one GPU alone
  int batch_per_gpu = 1;
  double fusion_bytes = 64.0 * 1024 * 1024;
  double published_efficiency = 0;
  std::string source;  // where the efficiency and the inputs come from
};

const std::vector<PublishedCase>& published_cases();

// The step model of a case, before calibration: compute = batch / images_per_second, the network
// from the presets, no overhead, no overlap.
StepModel published_step_model(const PublishedCase& c);

// One free parameter from other cases (their models, their published efficiencies): the
// exposed share of the allreduce each needs, x = (compute / e − compute) / t_allreduce, averaged;
// when the mean is at most 1 the result has overlap 1 − mean (clipped to [0, 1]) and no overhead;
// above 1 the allreduce alone cannot explain the time, and the result has no overlap and the
// mean extra time per step as overhead. Throws StatsError for no cases.
struct Calibration {
  double overlap = 0;
  double overhead = 0;  // s
};
Calibration calibrate(const std::vector<const PublishedCase*>& others);

struct ValidationRow {
  const PublishedCase* published = nullptr;
  double predicted = 0;     // uncalibrated
  double calibrated = 0;    // with the calibration from the study's other cases
  Calibration calibration;  // what the other cases gave
};
// Every case, uncalibrated and leave-one-out calibrated on the other cases of its study.
std::vector<ValidationRow> validate_published();

}  // namespace scalebench::scaling
