// The fast studentized range path (trapezoidal rules on precomputed nodes) against the slow
// log-space reference and against the exact k = 2 identity, point by point.
#include <doctest/doctest.h>

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

#include "stats/studentized_range_detail.hpp"
#include "stats/tukey.hpp"

using scalebench::stats::studentized_range_survival;
using scalebench::stats::studentized_range_upper_quantile;
using scalebench::stats::detail::studentized_range_log_survival_reference;
using scalebench::stats::detail::studentized_range_survival_lattice;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double relative_error(double got, double want) { return std::abs(got - want) / std::abs(want); }

}  // namespace

// Worst relative difference found on this grid (q from 0.05 to where P(Q > q) = 1e-100, 8 points
// per (k, df)): 1.8e-14 (GCC 12, x86-64). A denser scan (k in {2.5, 3, 5, 10, 64, 100}, df in
// {5, 10, 30, 100, 1e3, 1e4, 639936, 1e8, inf}, 25 q each) found 7.5e-13 at worst.
TEST_CASE("studentized range: the fast path equals the log-space reference down to 1e-100") {
  double worst = 0;
  for (double k : {3.0, 5.5, 64.0, 200.0}) {
    for (double df : {5.0, 7.5, 100.0, 639936.0, kInf}) {
      const double q_max = studentized_range_upper_quantile(1e-100, k, df);
      for (int i = 0; i < 8; ++i) {
        const double q = 0.05 * std::pow(q_max / 0.05, i / 7.0);
        CAPTURE(k);
        CAPTURE(df);
        CAPTURE(q);
        const double fast = studentized_range_survival_lattice(q, k, df);
        REQUIRE(!std::isnan(fast));
        const double e =
            relative_error(fast, std::exp(studentized_range_log_survival_reference(q, k, df)));
        CHECK(e < 2e-12);
        worst = std::max(worst, e);
      }
    }
  }
  MESSAGE("fast path vs reference, worst relative difference: " << worst);
}

TEST_CASE("studentized range: the fast quadrature at k = 2 equals the Student t identity") {
  // The public functions use the identity itself at k = 2; here the quadrature is checked on it.
  double worst = 0;
  for (double df : {5.0, 10.0, 1000.0, 639936.0, kInf}) {
    const double q_max = studentized_range_upper_quantile(1e-100, 2, df);
    for (int i = 0; i < 20; ++i) {
      const double q = 0.1 * std::pow(q_max / 0.1, i / 19.0);
      const double exact =
          std::isinf(df)
              ? std::erfc(q / 2)
              : 2 * boost::math::cdf(boost::math::complement(
                        boost::math::students_t_distribution<double>(df), q / std::sqrt(2.0)));
      CAPTURE(df);
      CAPTURE(q);
      const double e = relative_error(studentized_range_survival_lattice(q, 2, df), exact);
      CHECK(e < 1e-12);
      worst = std::max(worst, e);
    }
  }
  MESSAGE("fast quadrature at k = 2 vs Student t, worst relative error: " << worst);
}

TEST_CASE("studentized range: outside the fast path's checked range the reference answers") {
  CHECK(std::isnan(studentized_range_survival_lattice(3, 5, 3)));      // df < 5
  CHECK(std::isnan(studentized_range_survival_lattice(3, 2000, 10)));  // k > 200
  CHECK(std::isnan(studentized_range_survival_lattice(60, 3, kInf)));  // below 1e-280
  const double p = studentized_range_survival(3, 5, 1);
  CHECK(relative_error(p, std::exp(studentized_range_log_survival_reference(3, 5, 1))) < 1e-12);
  CHECK(studentized_range_survival(40, 3, kInf) > 0);  // ~1e-300: from the log-space reference
}
