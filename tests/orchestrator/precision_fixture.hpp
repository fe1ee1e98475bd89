// What the precision-rule tests share (issue 38): the three-cell experiment (CV 0.5 %, 6 % and 25 %
// under min 3, max 12, precision 0.05) and its trainer through the fake executor, fixed deviates
// per cell, so every run of the matrix is the same on every machine.
#pragma once

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <string>

#include "orchestrator/executor.hpp"

namespace scalebench::test {

inline const char* kExperiment = R"({
  "name": "precise",
  "repetitions": {"min": 3, "max": 12, "precision": 0.05},
  "warmup_epochs": 1,
  "order": "randomized",
  "seed": 38,
  "trainer": {"epochs": 3},
  "conditions": [
    {"name": "steady", "launcher": "single", "env": {"CV": "0.005"}},
    {"name": "noisy", "launcher": "single", "env": {"CV": "0.06"}},
    {"name": "wild", "launcher": "single", "env": {"CV": "0.25"}}
  ]
})";

// Fixed standard-normal-like deviates: run k of a cell takes 1 + CV * z[k] s per epoch.
inline constexpr double kZ[] = {0.5, -1.1, 0.8, -0.3, 1.4, -0.9, 0.2, -1.6, 1.0, 0.1, -0.6, 1.2};

// A trainer whose epochs 2 and 3 take 1 + CV z s, its first (warm-up) 5 s; the k-th run of a
// condition uses z[k]. `crash_at`: the launch (1-based, over all cells) that throws instead, as
// a scalebench killed by kill -9 mid-run would store nothing of it.
struct NoisyTrainer {
  std::map<std::string, int> runs;  // per CV: runs that returned
  int launches = 0;
  int crash_at = 0;
  orchestrator::FakeProcess operator()(const orchestrator::LaunchSpec& spec) {
    if (++launches == crash_at) throw std::runtime_error("killed");
    const std::string cv_text = spec.env.at("CV");
    const double epoch = 1 + std::stod(cv_text) * kZ[runs[cv_text]++ % 12];
    orchestrator::FakeProcess process;
    double t = 0.2;
    process.lines.push_back(
        {0.1, orchestrator::Stream::Stdout, "scalebench-train model=mlp train_images=600 np=1"});
    for (int y = 1; y <= 3; ++y) {
      process.lines.push_back({t, orchestrator::Stream::Stdout, fmt::format("Epoch {}/3", y)});
      t += y == 1 ? 5.0 : epoch;
    }
    process.lines.push_back({t, orchestrator::Stream::Stdout, "Training done: epochs=3"});
    process.duration_seconds = t + 0.01;
    return process;
  }
};

}  // namespace scalebench::test
