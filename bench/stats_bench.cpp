// Times one-way ANOVA + all-pairs Tukey HSD on one CSV (columns g,y; written by --write or by R).
// Usage: stats_bench --write data.csv [--groups 64 --n 10000]   deterministic data, mt19937_64 seed
// 42
//        stats_bench data.csv [--reps 3]                         time and print the result
// Output: '#' metadata lines, then one line per Tukey pair "a b diff p_adj" for the agreement
// check.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_support.hpp"
#include "stats/anova.hpp"
#include "stats/tukey.hpp"

namespace {

void write_csv(const std::string& path, std::size_t groups, std::size_t n) {
  std::mt19937_64 rng(42);
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) throw std::runtime_error("cannot write " + path);
  std::fprintf(out, "g,y\n");
  for (std::size_t g = 0; g < groups; ++g) {
    // Means differ slightly (0.01 steps in 8 levels): a mix of large and tiny p-values.
    std::normal_distribution<double> normal(0.01 * static_cast<double>(g % 8), 1.0);
    for (std::size_t i = 0; i < n; ++i) std::fprintf(out, "%zu,%.17g\n", g, normal(rng));
  }
  std::fclose(out);
}

std::vector<std::vector<double>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + " (write it with --write)");
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<double>> groups;
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    const std::size_t g = std::stoul(line.substr(0, comma));
    if (g >= groups.size()) groups.resize(g + 1);
    groups[g].push_back(std::stod(line.substr(comma + 1)));
  }
  return groups;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto option = [&](const std::string& name, const std::string& fallback) {
    return scalebench::bench::option(args, name, fallback);
  };
  if (args.size() >= 2 && args[0] == "--write") {
    write_csv(args[1], std::stoul(option("--groups", "64")), std::stoul(option("--n", "10000")));
    return 0;
  }
  if (args.empty()) {
    std::fprintf(stderr,
                 "usage: stats_bench --write data.csv [--groups G --n N] | stats_bench data.csv "
                 "[--reps R]\n");
    return 2;
  }
  const auto groups = read_csv(args[0]);  // not timed
  const int reps = std::stoi(option("--reps", "3"));
  double best = 1e300;
  scalebench::stats::OneWayAnova anova;
  std::vector<scalebench::stats::TukeyPair> pairs;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    anova = scalebench::stats::one_way_anova(groups);
    pairs = scalebench::stats::tukey_hsd(groups);
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  std::printf("# groups=%zu n=%zu reps=%d (min over reps, single thread)\n", groups.size(),
              groups[0].size(), reps);
  std::printf("# seconds %.6f\n", best);
  std::printf("# F %.17g p %.17g\n", anova.f, anova.p);
  for (const auto& p : pairs) std::printf("%zu %zu %.17g %.17g\n", p.a, p.b, p.diff, p.p_adjusted);
  return 0;
}
