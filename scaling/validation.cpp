#include "scaling/validation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "scaling/network_presets.hpp"

namespace scalebench::scaling {

using namespace stats;  // the least squares, errors and distributions it fits with

namespace {

// Sources (docs/scaling-model.md, "Validation", has the quotes):
// [H18] horovod/horovod docs/benchmarks.rst and README (commit 8318a898, May 2018): "128 servers
//       with 4 Pascal GPUs each connected by RoCE-capable 25 Gbit/s network", 90% for Inception
//       V3 and ResNet-101, 68% for VGG-16; tf_cnn_benchmarks --batch_size 64.
// [H17] horovod/horovod README (commit f7eb2177, 2017): one Pascal GPU, batch 64: Inception V3
//       134.4, ResNet-101 119.4, VGG-16 130.9 images/s.
// [K]   Keras Applications: parameters 23,851,784 / 44,707,176 / 138,357,544 / 25,636,712.
// [T]   tensorflow-vs-horovod-cloud (reference study): ResNet-50, 8 V100 SXM2 and 4 EDR adapters
//       per node, batch 128, 89% over InfiniBand and 65% over 10 GbE at 64 GPUs.
// [N]   NVIDIA DeepLearningExamples, ResNet-50 v1.5 TensorFlow FP32 on one V100: 364.9 images/s.
const char* const kHorovod = "efficiency [H18], images/s [H17], parameters [K]";
const char* const kTaiwan = "efficiency [T], images/s [N], parameters [K]";

}  // namespace

const std::vector<PublishedCase>& published_cases() {
  static const std::vector<PublishedCase> cases = {
      {"horovod-512", "inception_v3", 512, 4, "pcie3", "25gbe-roce", 23851784, 134.4, 64,
       64.0 * 1024 * 1024, 0.90, kHorovod},
      {"horovod-512", "resnet101", 512, 4, "pcie3", "25gbe-roce", 44707176, 119.4, 64,
       64.0 * 1024 * 1024, 0.90, kHorovod},
      {"horovod-512", "vgg16", 512, 4, "pcie3", "25gbe-roce", 138357544, 130.9, 64,
       64.0 * 1024 * 1024, 0.68, kHorovod},
      {"resnet50-64", "resnet50 (InfiniBand)", 64, 8, "nvlink-v100", "edr-ib-x4", 25636712, 364.9,
       128, 64.0 * 1024 * 1024, 0.89, kTaiwan},
      {"resnet50-64", "resnet50 (10 GbE)", 64, 8, "nvlink-v100", "10gbe", 25636712, 364.9, 128,
       64.0 * 1024 * 1024, 0.65, kTaiwan},
  };
  return cases;
}

StepModel published_step_model(const PublishedCase& c) {
  StepModel m;
  m.compute = c.batch_per_gpu / c.images_per_second_per_gpu;
  m.network.intra = network_preset(c.intra_network).link;
  m.network.inter = network_preset(c.inter_network).link;
  m.network.ranks_per_node = c.gpus_per_node;
  m.gradient_bytes = c.parameters * 4;
  m.bucket_bytes = c.fusion_bytes;
  return m;
}

Calibration calibrate(const std::vector<const PublishedCase*>& others) {
  if (others.empty()) throw StatsError("calibrating needs at least one other published case");
  double exposed = 0, extra = 0;
  for (const auto* c : others) {
    const StepModel m = published_step_model(*c);
    const double comm = allreduce_seconds(m.network, m.gradient_bytes, m.bucket_bytes, c->gpus);
    const double beyond = m.compute / c->published_efficiency - m.compute;  // time past compute
    exposed += beyond / comm;
    extra += beyond - comm;
  }
  const auto n = static_cast<double>(others.size());
  Calibration out;
  if (exposed / n <= 1) {
    out.overlap = 1 - std::clamp(exposed / n, 0.0, 1.0);
  } else {
    out.overhead = extra / n;
  }
  return out;
}

std::vector<ValidationRow> validate_published() {
  std::vector<ValidationRow> rows;
  const auto& cases = published_cases();
  for (const auto& c : cases) {
    ValidationRow row;
    row.published = &c;
    StepModel m = published_step_model(c);
    row.predicted = scaling_efficiency(m, c.gpus);
    std::vector<const PublishedCase*> others;
    for (const auto& o : cases)
      if (&o != &c && o.study == c.study) others.push_back(&o);
    row.calibration = calibrate(others);
    m.overlap = row.calibration.overlap;
    m.overhead = row.calibration.overhead;
    row.calibrated = scaling_efficiency(m, c.gpus);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace scalebench::scaling
