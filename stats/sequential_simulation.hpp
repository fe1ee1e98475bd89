// Monte Carlo check of the precision rule (stats/sequential.hpp): how often its final interval
// covers the true mean, and how many runs it takes (scripts/stats/simulate-precision-rule.sh).
#pragma once

#include <cstdint>
#include <string>

#include "stats/sequential.hpp"

namespace scalebench::stats {

enum class Noise { Normal, LogNormal };

struct SimulationSetting {
  Noise noise = Noise::Normal;
  double cv = 0.02;  // run-to-run coefficient of variation of the run's mean epoch time
  PrecisionRule rule;
  int cells = 10'000;
  std::uint64_t seed = 1;
};

struct SimulationResult {
  double coverage = 0;        // share of cells whose final interval holds the true mean
  double coverage_error = 0;  // its Monte Carlo standard error, sqrt(c (1 - c) / cells)
  double mean_runs = 0;
  int p95_runs = 0;           // 95th percentile (nearest rank) of the runs per cell
  double stopped_by_max = 0;  // share of cells stopped by max
};

// Cells whose runs have true mean 1 and the given CV (log-normal: exp(N(-v/2, v)), v =
// log(1 + cv^2)), each run until precision_stop says stop; the final interval is mean +/- the
// decision's half_width. Deterministic for a seed (mt19937_64 and Box-Muller, no
// implementation-defined distribution).
SimulationResult simulate_precision_rule(const SimulationSetting& setting);

std::string noise_name(Noise noise);

}  // namespace scalebench::stats
