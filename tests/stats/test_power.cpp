// stats/power.hpp against R (tests/data/stats/plan_reference.txt, made by
// scripts/reference/plan_reference.R): power.t.test's power and n to 1e-6 (they agree to ~1e-9),
// the Tukey family's exact power within 4 standard errors of R's simulation (20 000 replicates:
// an SE of at most 0.35 percentage points), and the edge cases.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "reference_file.hpp"
#include "stats/descriptive.hpp"
#include "stats/power.hpp"

using namespace scalebench;

namespace {

using Lines = std::vector<std::vector<std::string>>;

const Lines& reference() {
  static const Lines lines =
      test::read_reference_lines("plan_reference.txt", "scripts/reference/plan_reference.R");
  return lines;
}

Lines records(const std::string& kind) {
  Lines out;
  for (const auto& words : reference())
    if (words.size() > 1 && words[1] == kind) out.push_back(words);
  return out;
}

double number(const std::vector<std::string>& words, std::size_t i) { return std::stod(words[i]); }

// The pooled SD of these cells (sqrt of the one-way ANOVA's MS_within).
double pooled_sd(const std::vector<std::vector<double>>& cells) {
  double ss = 0, df = 0;
  for (const auto& x : cells) {
    const double m = stats::mean(x);
    for (double v : x) ss += (v - m) * (v - m);
    df += static_cast<double>(x.size()) - 1;
  }
  return std::sqrt(ss / df);
}

std::vector<std::vector<double>> quickstart_cells() {
  std::vector<std::vector<double>> cells;
  for (const auto& words : records("data"))
    cells.push_back(test::to_numbers(words.begin() + 3, words.end()));
  return cells;
}

}  // namespace

TEST_CASE("power: two-sample t power equals R's power.t.test over a grid of n and delta") {
  const auto lines = records("ttest_power");
  REQUIRE(lines.size() == 30);
  for (const auto& w : lines) {
    INFO(w[2], " ", w[3], " strict ", w[6]);
    const double power = stats::two_sample_t_power(number(w, 2), number(w, 3), number(w, 4),
                                                   number(w, 5), w[6] == "1");
    CHECK(std::abs(power - number(w, 7)) < 1e-9);
  }
}

TEST_CASE("power: the n and runs of power.t.test equal R's to 1e-6") {
  auto lines = records("ttest");
  REQUIRE(lines.size() == 8 + 12);
  for (const auto& w : lines) {
    if (w[0] != "generic") continue;
    INFO("delta ", w[6], " power ", w[5]);
    const double delta = number(w, 6), sd = number(w, 7), power = number(w, 5);
    const auto n = stats::two_sample_t_n(delta, sd, power);
    REQUIRE(n);
    CHECK(std::abs(*n - number(w, 8)) < 1e-6);
    CHECK(stats::two_sample_t_runs(delta, sd, power) == std::stoll(w[9]));
  }
}

TEST_CASE("power: the quickstart fixture's precision figures equal R's") {
  const auto cells = quickstart_cells();
  REQUIRE(cells.size() == 3);
  const auto lines = records("precision");
  REQUIRE(lines.size() == 9);
  for (const auto& w : lines) {
    const auto& x = cells[std::stoul(w[2])];
    const double mean = stats::mean(x), sd = *stats::sample_sd(x);
    INFO(w[2], " at ", w[3]);
    CHECK(std::abs(mean - number(w, 4)) < 1e-15);
    CHECK(std::abs(sd - number(w, 5)) < 1e-15);
    CHECK(stats::runs_for_precision(mean, sd, number(w, 3)) == std::stoll(w[6]));
  }
}

TEST_CASE("power: the quickstart fixture's two-group n equal R's power.t.test to 1e-6") {
  const auto cells = quickstart_cells();
  std::size_t compared = 0;
  for (const auto& w : records("ttest")) {
    if (w[0] != "quickstart") continue;
    const auto& base = cells[std::stoul(w[2])];
    const auto& other = cells[std::stoul(w[3])];
    const double delta = number(w, 4) * stats::mean(base);
    const double sd = pooled_sd({base, other});
    INFO(w[3], " vs ", w[2], " detect ", w[4], " power ", w[5]);
    CHECK(std::abs(delta - number(w, 6)) < 1e-15);
    CHECK(std::abs(sd - number(w, 7)) < 1e-15);
    const auto n = stats::two_sample_t_n(delta, sd, number(w, 5));
    REQUIRE(n);
    CHECK(std::abs(*n - number(w, 8)) < 1e-6);
    CHECK(stats::two_sample_t_runs(delta, sd, number(w, 5)) == std::stoll(w[9]));
    ++compared;
  }
  CHECK(compared == 12);
}

TEST_CASE("power: the Tukey family's exact power and n equal R's formula") {
  const auto cells = quickstart_cells();
  const double sd = pooled_sd(cells);
  std::size_t compared = 0;
  for (const auto& w : records("tukey")) {
    const double power = number(w, 5), k = number(w, 6), delta = number(w, 7);
    INFO(w[3], " vs ", w[2], " detect ", w[4], " power ", w[5]);
    CHECK(std::abs(sd - number(w, 8)) < 1e-15);
    const auto n = stats::tukey_pair_n(k, delta, sd, power);
    REQUIRE(n);
    CHECK(std::abs(*n - number(w, 9)) < 1e-6);
    const auto runs = stats::tukey_pair_runs(k, delta, sd, power);
    REQUIRE(runs);
    CHECK(*runs == std::stoll(w[10]));
    CHECK(std::abs(stats::tukey_pair_power(static_cast<double>(*runs), k, delta, sd) -
                   number(w, 11)) < 1e-6);
    ++compared;
  }
  CHECK(compared == 12);
}

TEST_CASE("power: the Tukey family's exact power is within 4 SE of R's simulation") {
  const auto lines = records("tukey_sim");
  REQUIRE(lines.size() >= 12);
  for (const auto& w : lines) {
    const double n = number(w, 5), k = number(w, 6), delta = number(w, 7), sd = number(w, 8);
    const double simulated = number(w, 10), se = number(w, 11);
    INFO("n ", w[5], " delta ", w[7], ": R simulated ", w[10], " +- ", w[11]);
    CHECK(number(w, 9) == 20000);
    CHECK(se <= 0.0036);
    CHECK(std::abs(stats::tukey_pair_power(n, k, delta, sd) - simulated) < 4 * se);
  }
}

TEST_CASE("power: the Tukey family's simulation in C++ agrees with the exact power") {
  // Seeded: deterministic. 20 000 replicates of k = 3 groups of 4, a difference of 1.5 SD.
  const auto sim = stats::simulate_tukey_pair_power(4, 3, 1.5, 1, 0.05, 20000, 38);
  const double exact = stats::tukey_pair_power(4, 3, 1.5, 1);
  INFO("simulated ", sim.power, " +- ", sim.standard_error, ", exact ", exact);
  CHECK(sim.standard_error < 0.0036);
  CHECK(std::abs(sim.power - exact) < 4 * sim.standard_error);
  // No difference: the family's error rate for one pair is below alpha.
  const auto null = stats::simulate_tukey_pair_power(5, 4, 0, 2, 0.05, 20000, 7);
  CHECK(std::abs(null.power - stats::tukey_pair_power(5, 4, 0, 2)) < 4 * null.standard_error);
  CHECK(stats::tukey_pair_power(5, 4, 0, 2) < 0.05);
}

TEST_CASE("power: a family of two is the two-sided (strict) t-test") {
  for (double n : {2.0, 3.0, 7.5, 30.0})
    for (double delta : {0.3, 1.0, 2.0}) {
      INFO("n ", n, " delta ", delta);
      CHECK(std::abs(stats::tukey_pair_power(n, 2, delta, 1) -
                     stats::two_sample_t_power(n, delta, 1, 0.05, true)) < 1e-9);
    }
}

TEST_CASE("power: edge cases give exact values or typed errors") {
  // No variation: any difference is detected with 2 runs; the interval is 0 wide.
  CHECK(stats::two_sample_t_power(2, 0.1, 0) == 1);
  CHECK(stats::tukey_pair_power(2, 3, 0.1, 0) == 1);
  CHECK(stats::two_sample_t_n(0.1, 0, 0.8) == 2.0);
  CHECK(stats::two_sample_t_runs(0.1, 0, 0.8) == 2);
  CHECK(stats::tukey_pair_runs(3, 0.1, 0, 0.8) == 2);
  CHECK(stats::runs_for_precision(1, 0, 0.02) == 2);
  CHECK(std::isnan(stats::two_sample_t_power(2, 0, 0)));
  // No difference: R's power is alpha / 2 (its upper region only), alpha with both regions.
  CHECK(stats::two_sample_t_power(10, 0, 1) == doctest::Approx(0.025).epsilon(1e-12));
  CHECK(stats::two_sample_t_power(10, 0, 1, 0.05, true) == doctest::Approx(0.05).epsilon(1e-12));
  CHECK(!stats::two_sample_t_n(0, 1, 0.8));
  CHECK(!stats::two_sample_t_runs(0, 1, 0.8));
  CHECK(!stats::tukey_pair_runs(3, 0, 1, 0.8));
  // A difference too small for kMaxPlannedRuns runs.
  CHECK(!stats::two_sample_t_runs(1e-6, 1, 0.8));
  // The sign of the difference does not matter.
  CHECK(stats::two_sample_t_power(4, -1, 1) == stats::two_sample_t_power(4, 1, 1));
  // The precision figure: exactly the first n where t * sd / sqrt(n) <= P * mean.
  // mean 1, sd 0.1, P 0.05: n = 18 gives t_{0.975,17} * 0.1 / sqrt(18) = 0.04973 (17: 0.05142).
  CHECK(stats::runs_for_precision(1, 0.1, 0.05) == 18);
  CHECK(stats::relative_half_width(1, 0.1, 18) < 0.05);
  CHECK(stats::relative_half_width(1, 0.1, 17) > 0.05);
  CHECK_THROWS_AS(stats::two_sample_t_power(1, 1, 1), stats::StatsError);
  CHECK_THROWS_AS(stats::tukey_pair_power(3, 1.5, 1, 1), stats::StatsError);
  CHECK_THROWS_AS(stats::two_sample_t_n(1, -1, 0.8), stats::StatsError);
  CHECK_THROWS_AS(stats::two_sample_t_n(1, 1, 1), stats::StatsError);
  CHECK_THROWS_AS(stats::runs_for_precision(0, 1, 0.02), stats::StatsError);
  CHECK_THROWS_AS(stats::runs_for_precision(1, 1, 0), stats::StatsError);
  CHECK_THROWS_AS(stats::relative_half_width(1, 1, 1), stats::StatsError);
  CHECK_THROWS_AS(stats::simulate_tukey_pair_power(1, 3, 1, 1, 0.05, 10, 1), stats::StatsError);
}
