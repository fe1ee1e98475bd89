// The scaling model's communication half: the ring allreduce formula, buckets, and the fit of
// latency and bandwidth recovering known parameters from synthetic measurements.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stats/scaling_model.hpp"

using namespace scalebench;

TEST_CASE("ring allreduce: Hockney's cost, zero for one rank, latency per bucket") {
  // 8 ranks, 100 MB at 10 GB/s bus bandwidth, 5 µs: 14·5e-6 + 14/8 · 1e8/1e10.
  CHECK(stats::ring_allreduce_seconds(1e8, 8, 5e-6, 1e10) ==
        doctest::Approx(14 * 5e-6 + 1.75 * 1e-2).epsilon(1e-14));
  CHECK(stats::ring_allreduce_seconds(1e8, 1, 5e-6, 1e10) == 0);
  // 100 MB in 25 MB buckets: four latencies, the same bandwidth term.
  CHECK(stats::bucketed_allreduce_seconds(1e8, 25e6, 8, 5e-6, 1e10) ==
        doctest::Approx(4 * 14 * 5e-6 + 1.75 * 1e-2).epsilon(1e-14));
  CHECK(stats::bucketed_allreduce_seconds(1e8, 1e9, 8, 5e-6, 1e10) ==
        doctest::Approx(stats::ring_allreduce_seconds(1e8, 8, 5e-6, 1e10)));
  CHECK_THROWS_AS(stats::ring_allreduce_seconds(1, 0, 1e-6, 1e9), stats::StatsError);
  CHECK_THROWS_AS(stats::ring_allreduce_seconds(1, 2, 1e-6, 0), stats::StatsError);
  CHECK_THROWS_AS(stats::bucketed_allreduce_seconds(1, 0, 2, 1e-6, 1e9), stats::StatsError);
}

TEST_CASE("fit_allreduce recovers latency and bandwidth: exactly without noise, closely with 3%") {
  const double alpha = 7e-6, bandwidth = 4.5e9;
  std::vector<stats::AllreduceSample> exact, noisy;
  std::mt19937_64 random(20261125);
  std::normal_distribution<double> noise(0.0, 0.03);
  for (int ranks : {2, 4, 8})
    for (double bytes = 8; bytes <= 256e6; bytes *= 4) {
      const double t = stats::ring_allreduce_seconds(bytes, ranks, alpha, bandwidth);
      exact.push_back({bytes, ranks, t});
      for (int repeat = 0; repeat < 5; ++repeat)
        noisy.push_back({bytes, ranks, t * std::exp(noise(random))});
    }
  exact.push_back({1e6, 1, 1e-3});  // one rank: no communication, skipped
  const auto fit = stats::fit_allreduce(exact);
  CHECK(fit.samples == exact.size() - 1);
  CHECK(fit.alpha == doctest::Approx(alpha).epsilon(1e-9));
  CHECK(fit.bandwidth == doctest::Approx(bandwidth).epsilon(1e-9));
  CHECK(fit.rms_relative_residual < 1e-9);
  const auto rough = stats::fit_allreduce(noisy);
  CHECK(rough.alpha == doctest::Approx(alpha).epsilon(0.03));
  CHECK(rough.bandwidth == doctest::Approx(bandwidth).epsilon(0.03));
  CHECK(rough.rms_relative_residual == doctest::Approx(0.03).epsilon(0.2));
}

TEST_CASE("fit_allreduce: data that cannot give both parameters are named errors") {
  // One message size and one rank count: latency and bandwidth are confounded.
  CHECK_THROWS_WITH_AS(stats::fit_allreduce({{1e6, 4, 1e-3}, {1e6, 4, 1.1e-3}}),
                       doctest::Contains("cannot separate latency from bandwidth"),
                       stats::StatsError);
  CHECK_THROWS_WITH_AS(stats::fit_allreduce({{1e6, 4, 1e-3}}), doctest::Contains("two allreduce"),
                       stats::StatsError);
  CHECK_THROWS_AS(stats::fit_allreduce({{1e6, 4, 0}, {1e3, 4, 1e-5}}), stats::StatsError);
  // Times that fall with the size: a negative bandwidth term, not physical.
  CHECK_THROWS_WITH_AS(stats::fit_allreduce({{1e3, 4, 1e-2}, {1e8, 4, 1e-4}}),
                       doctest::Contains("not physical"), stats::StatsError);
}

TEST_CASE("step model: the formula, efficiency, and the fit recovering overhead and overlap") {
  stats::StepModel network;
  network.alpha = 20e-6;
  network.bandwidth = 1.2e9;       // 10 GbE-like bus bandwidth
  network.gradient_bytes = 102e6;  // ResNet-50's 25.6 M fp32 parameters
  network.bucket_bytes = 25e6;
  stats::StepModel truth = network;
  truth.compute = 0.30;
  truth.overhead = 0.004;
  truth.overlap = 0.6;
  const double comm8 = stats::bucketed_allreduce_seconds(102e6, 25e6, 8, 20e-6, 1.2e9);
  CHECK(stats::step_seconds(truth, 8) ==
        doctest::Approx(0.30 + 0.004 + 0.4 * comm8).epsilon(1e-14));
  CHECK(stats::step_seconds(truth, 1) == 0.30);
  CHECK(stats::scaling_efficiency(truth, 1) == 1);
  CHECK(stats::scaling_efficiency(truth, 8) == doctest::Approx(0.30 / (0.304 + 0.4 * comm8)));
  // Efficiency falls with n (the bandwidth term tends to 2S/B, the latency term grows).
  CHECK(stats::scaling_efficiency(truth, 64) < stats::scaling_efficiency(truth, 8));

  std::vector<stats::StepSample> samples;
  std::mt19937_64 random(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  for (int ranks : {1, 2, 4, 8, 16})
    for (int run = 0; run < 4; ++run)
      samples.push_back({ranks, stats::step_seconds(truth, ranks) * std::exp(noise(random))});
  const auto fit = stats::fit_step_model(samples, network);
  CHECK(fit.compute == doctest::Approx(0.30).epsilon(0.01));
  CHECK(fit.overlap == doctest::Approx(0.6).epsilon(0.1));
  CHECK(fit.overhead >= 0);
  // The fitted model predicts a held-out 32 ranks within 2%.
  CHECK(stats::step_seconds(fit, 32) ==
        doctest::Approx(stats::step_seconds(truth, 32)).epsilon(0.02));
}

TEST_CASE("step model fit: clipped at the physical bounds, and named errors") {
  stats::StepModel network;
  network.alpha = 1e-6;
  network.bandwidth = 1e9;
  network.gradient_bytes = 1e8;
  // Multi-rank steps slower than a fully exposed allreduce: overlap clipped to 0.
  std::vector<stats::StepSample> slow = {
      {1, 1.0}, {2, 1.0 + 2 * 0.1 + 0.05}, {4, 1.0 + 2 * 0.15 + 0.05}};
  const auto fit = stats::fit_step_model(slow, network);
  CHECK(fit.overlap >= 0);
  CHECK(fit.overlap <= 1);
  CHECK(fit.overhead >= 0);
  CHECK_THROWS_WITH_AS(stats::fit_step_model({{2, 1.0}, {4, 1.1}}, network),
                       doctest::Contains("single-rank"), stats::StatsError);
  CHECK_THROWS_WITH_AS(stats::fit_step_model({{1, 1.0}, {2, 1.1}, {2, 1.2}}, network),
                       doctest::Contains("two rank counts"), stats::StatsError);
  CHECK_THROWS_AS(stats::fit_step_model({{1, -1.0}}, network), stats::StatsError);
}
