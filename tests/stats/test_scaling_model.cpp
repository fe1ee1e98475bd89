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
