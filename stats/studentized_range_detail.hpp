// Internal: the two evaluations of the studentized range survival function behind the public API,
// exposed so tests can compare them point by point.
#pragma once

namespace scalebench::stats::detail {

// P(Q > q) for k >= 2 (k == 2 included: no closed form here), df > 0, q > 0 finite, by fixed-step
// trapezoidal quadrature on precomputed nodes (fast: tens of microseconds). Returns NaN where it
// does not promise full accuracy (the result would be below ~1e-280, or the integrand is not
// shaped as expected); the public functions then use the reference below.
double studentized_range_survival_lattice(double q, double k, double df);

// log P(Q > q) by nested adaptive double-exponential quadrature in log space (slow: milliseconds),
// accurate to ~1e-13 relative far below the smallest double.
double studentized_range_log_survival_reference(double q, double k, double df);

}  // namespace scalebench::stats::detail
