#include "stats/sequential_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

namespace scalebench::stats {
namespace {

// Standard normal deviates by Box-Muller on mt19937_64's 53-bit uniforms: the same stream on
// every standard library.
class NormalStream {
 public:
  explicit NormalStream(std::uint64_t seed) : engine_(seed) {}
  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = uniform_open();
    const double u2 = uniform_open();
    const double radius = std::sqrt(-2 * std::log(u1));
    spare_ = radius * std::sin(2 * std::numbers::pi * u2);
    has_spare_ = true;
    return radius * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  double uniform_open() {  // (0, 1)
    return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
  }
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace

std::string noise_name(Noise noise) { return noise == Noise::Normal ? "normal" : "log-normal"; }

SimulationResult simulate_precision_rule(const SimulationSetting& setting) {
  check_rule(setting.rule);
  if (setting.cells < 1) throw StatsError("simulate_precision_rule: expected at least one cell");
  NormalStream normal(setting.seed);
  const double log_sd = std::sqrt(std::log1p(setting.cv * setting.cv));
  const auto draw = [&] {
    const double z = normal.next();
    return setting.noise == Noise::Normal ? 1 + setting.cv * z
                                          : std::exp(log_sd * z - log_sd * log_sd / 2);
  };
  std::vector<int> runs;
  runs.reserve(static_cast<std::size_t>(setting.cells));
  long long covered = 0, by_max = 0, total_runs = 0;
  std::vector<double> means;
  for (int cell = 0; cell < setting.cells; ++cell) {
    means.clear();
    StopDecision decision;
    do {
      means.push_back(draw());
      decision = precision_stop(means, setting.rule);
    } while (!decision.stop);
    if (std::abs(decision.mean - 1) <= decision.half_width) ++covered;
    if (decision.reason == StopReason::Max) ++by_max;
    total_runs += decision.runs;
    runs.push_back(decision.runs);
  }
  std::sort(runs.begin(), runs.end());
  const double cells = setting.cells;
  SimulationResult result;
  result.coverage = static_cast<double>(covered) / cells;
  result.coverage_error = std::sqrt(result.coverage * (1 - result.coverage) / cells);
  result.mean_runs = static_cast<double>(total_runs) / cells;
  const auto rank = static_cast<std::size_t>(std::ceil(0.95 * cells));
  result.p95_runs = runs[std::max<std::size_t>(rank, 1) - 1];
  result.stopped_by_max = static_cast<double>(by_max) / cells;
  return result;
}

}  // namespace scalebench::stats
