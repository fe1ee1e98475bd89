// Times report::build_report on a synthetic experiment of G groups (issue 16: 300 groups took
// ~150 s while Tukey p was computed for all G(G-1)/2 pairs), and one studentized range p-value.
// Usage: report_bench [--groups 300] [--epochs 10] [--reps 1]
// Output: '#' lines with the seconds (min over reps, one thread) and a checksum of the p-values.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_support.hpp"
#include "report/analysis/report.hpp"
#include "stats/tukey.hpp"

using scalebench::bench::seconds_since;

namespace {}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto option = [&](const std::string& name, const std::string& fallback) {
    return scalebench::bench::option(args, name, fallback);
  };
  const std::size_t groups = std::stoul(option("--groups", "300"));
  const int epochs = std::stoi(option("--epochs", "10"));
  const int reps = std::stoi(option("--reps", "1"));

  // One run per group (condition c<g>, launcher single, np 1); epoch durations N(1 + 0.001 (g mod
  // 16), 0.05).
  std::mt19937_64 rng(42);
  std::vector<scalebench::report::Run> samples;
  for (std::size_t g = 0; g < groups; ++g) {
    std::normal_distribution<double> normal(1 + 0.001 * static_cast<double>(g % 16), 0.05);
    scalebench::report::Run run;
    run.id = static_cast<std::int64_t>(g + 1);
    run.experiment = "bench";
    run.condition = "c" + std::to_string(g);
    run.launcher = "single";
    for (int e = 1; e <= epochs; ++e) run.epochs.emplace_back(e, normal(rng));
    samples.push_back(run);
  }

  double best = 1e300;
  scalebench::report::ReportTable table;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    table = scalebench::report::build_report("bench", samples);
    best = std::min(best, seconds_since(t0));
  }
  double sum_p = 0;
  for (const auto& row : table.rows) sum_p += row.tukey_p_vs_base.value_or(0);

  // One p-value at this family's k and d.f., at a q in the middle of the distribution.
  const double k = static_cast<double>(groups);
  const double df = table.anova ? table.anova->df_within : 1;
  const int n_p = 20;
  const auto t1 = std::chrono::steady_clock::now();
  double sink = 0;
  for (int i = 0; i < n_p; ++i)
    sink += scalebench::stats::studentized_range_survival(4.0 + 0.1 * i, k, df);
  const double per_p = seconds_since(t1) / n_p;

  std::printf("# groups=%zu epochs/group=%d reps=%d (min over reps, one thread)\n", groups, epochs,
              reps);
  std::printf("# build_report seconds %.6f\n", best);
  std::printf(
      "# one studentized_range_survival(q, k=%g, df=%g) seconds %.6f (mean of %d; sum %.6g)\n", k,
      df, per_p, n_p, sink);
  std::printf("# sum of Tukey p vs base %.17g\n", sum_p);
  return 0;
}
