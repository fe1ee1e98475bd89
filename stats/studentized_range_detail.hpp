// Internal: the evaluations of the studentized range survival function behind the public API,
// exposed so tests can compare them point by point and the many-pairs families
// (studentized_range_family.hpp) can reuse the outer integral with a tabulated inner one.
#pragma once

#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

namespace scalebench::stats::detail {

// P(Q > q) for k >= 2 (k == 2 included: no closed form here), df > 0, q > 0 finite, by fixed-step
// trapezoidal quadrature on precomputed nodes (fast: tens of microseconds). Returns NaN where it
// does not promise full accuracy (the result would be below ~1e-280, or the integrand is not
// shaped as expected); the public functions then use the reference below.
double studentized_range_survival_lattice(double q, double k, double df);

// log P(Q > q) by nested adaptive double-exponential quadrature in log space (slow: milliseconds),
// accurate to ~1e-13 relative far below the smallest double.
double studentized_range_log_survival_reference(double q, double k, double df);

// True where the public functions take the lattice (or Student t) path, tens of microseconds a
// call; elsewhere (k > 200 or df < 5) each call is the log-space reference, milliseconds.
bool studentized_range_has_fast_path(double k, double df);

// Beyond this range x the inner log P(R > x) is its asymptote (range_log_survival_far).
inline constexpr double kRangeFar = 100;

// log P(R > x), R the range of k standard normals, 0 < x < kRangeFar, by the reference's inner
// quadrature at its tight (1e-13) tolerance.
double range_log_survival_reference(double x, double k);
// log P(R > x) for x >= kRangeFar: k(k-1)/2 P(|Z1 - Z2| > x), as the reference uses there.
double range_log_survival_far(double x, double k);

// log P(Q > q): the public functions' log-space outer integral over the chi weight (the same
// brackets, quadrature and tolerance), with log P(R > x) taken from `inner`.
double studentized_range_log_survival_with(double q, double k, double df,
                                           const std::function<double(double)>& inner);

// Solves f(log q) = 0 for f decreasing in q: brackets outward from q = start in steps of log q
// that double from `step`, then TOMS 748 to 48 bits (Alefeld, Potra and Shi 1995); NaN when no
// sign change is found in 200 steps. Shared by the quantile and the families' quantile.
template <class F>
double solve_for_q(F f, double start = 3.0, double step = 1) {
  double lo = std::log(start);
  double f_lo = f(lo);
  if (f_lo == 0) return std::exp(lo);
  double hi = lo;
  double f_hi = f_lo;
  // Walk towards the root, doubling the step, until the sign changes.
  for (int i = 0; i < 200 && (f_lo > 0) == (f_hi > 0); ++i) {
    if (f_hi > 0) {
      lo = hi;
      f_lo = f_hi;
      hi += step;
      f_hi = f(hi);
    } else {
      hi = lo;
      f_hi = f_lo;
      lo -= step;
      f_lo = f(lo);
    }
    step *= 2;
  }
  if ((f_lo > 0) == (f_hi > 0)) return std::numeric_limits<double>::quiet_NaN();
  std::uintmax_t iterations = 100;
  const auto root = boost::math::tools::toms748_solve(
      f, lo, hi, f_lo, f_hi, boost::math::tools::eps_tolerance<double>(48), iterations);
  return std::exp(0.5 * (root.first + root.second));
}

}  // namespace scalebench::stats::detail
