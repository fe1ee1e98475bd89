#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "stats/descriptive.hpp"

using scalebench::stats::mean;
using scalebench::stats::median;
using scalebench::stats::sample_sd;
using scalebench::stats::StatsError;

TEST_CASE("mean") {
  CHECK(mean({2.0}) == 2.0);
  CHECK(mean({1, 2, 3, 4}) == 2.5);
  CHECK_THROWS_AS(mean({}), StatsError);
  CHECK(mean({1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}) == 1e9 + 10);
  // 0.1 summed 1000 times drifts by ~1e-14 relative; the second pass takes the drift back out.
  CHECK(std::abs(mean(std::vector<double>(1000, 0.1)) - 0.1) <= 2e-17);
  CHECK(std::isnan(mean({1, std::nan("")})));
}

TEST_CASE("sample standard deviation") {
  CHECK_FALSE(sample_sd({}).has_value());
  CHECK_FALSE(sample_sd({42}).has_value());
  CHECK(*sample_sd({2, 4, 4, 4, 5, 5, 7, 9}) ==
        doctest::Approx(std::sqrt(32.0 / 7)).epsilon(1e-15));
  // Offset by 1e9 the variance (30) survives; the one-pass textbook formula returns garbage here.
  CHECK(*sample_sd({1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16}) ==
        doctest::Approx(std::sqrt(30.0)).epsilon(1e-14));
  CHECK(*sample_sd({3, 3, 3}) == 0);
}

TEST_CASE("median") {
  CHECK(median({5}) == 5);
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({1e308, 1e308}) == 1e308);  // no overflow averaging the middle pair
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(median({inf, inf}) == inf);
  CHECK_THROWS_AS(median({}), StatsError);
  CHECK_THROWS_AS(median({1, std::nan(""), 2}), StatsError);
}

TEST_CASE("mean and sample sd of values whose sum or squares overflow are still right") {
  // 1e308 + 1.2e308 overflows a double; so do the squared deviations of 1e307-sized spreads.
  CHECK(mean({1e308, 1.2e308}) == doctest::Approx(1.1e308));
  const std::vector<double> near_max = {1e308, 1.2e308, 1.1e308};
  CHECK(mean(near_max) == doctest::Approx(1.1e308));
  REQUIRE(sample_sd(near_max));
  CHECK(*sample_sd(near_max) == doctest::Approx(1e307));
  CHECK(*sample_sd({-0.8e308, 0.8e308}) == doctest::Approx(0.8e308 * std::sqrt(2.0)));
}
