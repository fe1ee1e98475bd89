// The precision rule's simulation table (docs/statistics.md, "Precision-driven repetitions"):
//   precision_rule_sim [CELLS [MIN MAX PRECISION [SEED]]]
// One Markdown row per noise (normal, log-normal) x CV (0.5 %, 2 %, 8 %, 25 %).
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "stats/sequential_simulation.hpp"

int main(int argc, char** argv) {
  using namespace scalebench::stats;
  SimulationSetting setting;
  setting.cells = argc > 1 ? std::atoi(argv[1]) : 100'000;
  if (argc > 4) {
    setting.rule.min_runs = std::atoi(argv[2]);
    setting.rule.max_runs = std::atoi(argv[3]);
    setting.rule.precision = std::atof(argv[4]);
  }
  const std::uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 20250138;
  try {
    check_rule(setting.rule);
  } catch (const StatsError& error) {
    fmt::print(stderr, "precision_rule_sim: {}\n", error.what());
    return 2;
  }
  fmt::print(
      "Rule: min {}, max {}, precision {:g} ({:g} % confidence); {} cells per setting, "
      "seed {}\n\n",
      setting.rule.min_runs, setting.rule.max_runs, setting.rule.precision,
      setting.rule.confidence * 100, setting.cells, seed);
  fmt::print("| noise | CV | coverage | ± (2 SE) | mean runs | p95 runs | stopped by max |\n");
  fmt::print("| --- | --- | --- | --- | --- | --- | --- |\n");
  int index = 0;
  for (const Noise noise : {Noise::Normal, Noise::LogNormal}) {
    for (const double cv : {0.005, 0.02, 0.08, 0.25}) {
      setting.noise = noise;
      setting.cv = cv;
      setting.seed = seed + static_cast<std::uint64_t>(index++);
      const auto r = simulate_precision_rule(setting);
      fmt::print("| {} | {:g} % | {:.2f} % | {:.2f} % | {:.2f} | {} | {:.1f} % |\n",
                 noise_name(noise), cv * 100, r.coverage * 100, 2 * r.coverage_error * 100,
                 r.mean_runs, r.p95_runs, r.stopped_by_max * 100);
    }
  }
}
