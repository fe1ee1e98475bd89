// Times all-pairs Tukey HSD and Games-Howell for many groups (issue 23, item 8): 300 groups x 2
// runs took over 590 s in `scalebench stats` while each pair's p-value (and, for Games-Howell,
// each pair's critical value) was one exact studentized range integral.
// Usage: pairs_bench [--groups 300] [--runs 2] [--spread 0.001] [--sample 200] [--full-old]
// Prints '#' lines: the new path for the pairs alone (stats::tukey_hsd + stats::games_howell) and
// for the whole analysis (report::analyze_observations, what `scalebench stats` runs after
// reading the database, with one factor: also the letters, Welch, Levene, ...), the old exact
// per-pair path (timed on --sample pairs spread over the family and scaled to all pairs, or on all
// of them with --full-old), the ratio old / new for the pairs, and the worst relative difference
// between the two on the timed pairs. --spread sets the step between group means (sd 0.05): at
// 0.02 many pairs differ, and compact_letters (stats/letters.cpp) then dominates the analysis.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.hpp"
#include "report/analysis/statistics.hpp"
#include "stats/games_howell.hpp"
#include "stats/summary_statistics.hpp"
#include "stats/tukey.hpp"

using scalebench::bench::seconds_since;
namespace stats = scalebench::stats;

namespace {

struct OldTiming {
  double seconds_per_tukey_pair = 0;
  double seconds_per_games_howell_pair = 0;
  double worst_relative = 0;  // worst |new / old - 1| over the timed pairs' p-values
};

double relative(double got, double want) {
  return want == got ? 0 : std::abs(got - want) / std::abs(want);
}

// Today's per-pair path before the families: one exact survival call per Tukey pair, one survival
// and one quantile call per Games-Howell pair (its own d.f.).
OldTiming time_old_path(const std::vector<std::vector<double>>& groups, std::size_t sample) {
  const auto tukey = stats::tukey_hsd(groups);
  const auto games_howell = stats::games_howell(groups);
  const auto anova = stats::one_way_anova(groups);
  const double k = static_cast<double>(groups.size());
  const std::size_t n = tukey.size();
  const std::size_t count = std::min(sample, n);
  OldTiming timing;
  auto t0 = std::chrono::steady_clock::now();
  for (std::size_t s = 0; s < count; ++s) {
    const auto& pair = tukey[s * n / count];
    const double p = stats::studentized_range_survival(pair.q, k, anova.df_within);
    timing.worst_relative = std::max(timing.worst_relative, relative(pair.p_adjusted, p));
  }
  timing.seconds_per_tukey_pair = seconds_since(t0) / static_cast<double>(count);
  t0 = std::chrono::steady_clock::now();
  for (std::size_t s = 0; s < count; ++s) {
    const auto& pair = games_howell[s * n / count];
    const double p = stats::studentized_range_survival(pair.q, k, pair.df);
    const double critical = stats::studentized_range_quantile(0.95, k, pair.df);
    timing.worst_relative = std::max(timing.worst_relative, relative(pair.p_adjusted, p));
    timing.worst_relative =
        std::max(timing.worst_relative, relative(pair.upper, pair.diff + critical * pair.se));
  }
  timing.seconds_per_games_howell_pair = seconds_since(t0) / static_cast<double>(count);
  return timing;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto option = [&](const std::string& name, const std::string& fallback) {
    return scalebench::bench::option(args, name, fallback);
  };
  const std::size_t n_groups = std::stoul(option("--groups", "300"));
  const std::size_t runs = std::stoul(option("--runs", "2"));
  const double spread = std::stod(option("--spread", "0.001"));
  const bool full_old = std::find(args.begin(), args.end(), "--full-old") != args.end();
  const std::size_t pairs = n_groups * (n_groups - 1) / 2;
  const std::size_t sample = full_old ? pairs : std::stoul(option("--sample", "200"));

  // Run times N(1 + spread (g mod 16), 0.05) per group; mt19937_64 seed 42.
  std::mt19937_64 rng(42);
  scalebench::report::Observations data;
  data.source = "pairs_bench";
  data.response = "epoch_seconds";
  data.factor_names = {"condition"};
  data.levels.emplace_back();
  std::vector<std::vector<double>> groups(n_groups);
  for (std::size_t g = 0; g < n_groups; ++g) {
    std::normal_distribution<double> normal(1 + spread * static_cast<double>(g % 16), 0.05);
    for (std::size_t r = 0; r < runs; ++r) {
      groups[g].push_back(normal(rng));
      data.values.push_back(groups[g].back());
      data.levels[0].push_back("c" + std::to_string(g));
    }
  }

  auto t0 = std::chrono::steady_clock::now();
  const auto tukey = stats::tukey_hsd(groups);
  const auto games_howell = stats::games_howell(groups);
  const double new_seconds = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto report = scalebench::report::analyze_observations(data, 2, 0.95);
  const double analysis_seconds = seconds_since(t0);
  const OldTiming old = time_old_path(groups, sample);
  const double old_seconds =
      static_cast<double>(pairs) * (old.seconds_per_tukey_pair + old.seconds_per_games_howell_pair);

  std::printf("# groups=%zu runs/group=%zu spread=%g pairs=%zu hardware threads=%u\n", n_groups,
              runs, spread, pairs, std::thread::hardware_concurrency());
  std::printf("# new: tukey_hsd + games_howell (%zu + %zu pairs) seconds %.3f\n", tukey.size(),
              games_howell.size(), new_seconds);
  std::printf("# new: analyze_observations (Tukey %zu + Games-Howell %zu rows) seconds %.3f\n",
              report.tukey.size(), report.games_howell.size(), analysis_seconds);
  std::printf(
      "# old: exact per pair, Tukey %.6f s + Games-Howell %.6f s per pair (%s %zu pairs), x %zu "
      "pairs = seconds %.1f (one thread; the rest of the command not counted)\n",
      old.seconds_per_tukey_pair, old.seconds_per_games_howell_pair, full_old ? "all" : "mean of",
      std::min(sample, pairs), pairs, old_seconds);
  std::printf("# ratio old/new %.1f\n", old_seconds / new_seconds);
  std::printf("# worst relative difference new vs old on the timed pairs (p and upper) %.3g\n",
              old.worst_relative);
  return 0;
}
