// The errors of the stats module.
#pragma once

#include <cmath>
#include <stdexcept>

#include "util/error.hpp"

namespace scalebench::stats {

// Input that no statistic can be computed from (fewer than two groups, an empty group, ...).
class StatsError : public Error {
 public:
  using Error::Error;
};

// A two-way design with interaction in which a cell (a pair of levels) has no observation: the
// additive model (no interaction) may still be estimable.
class EmptyCellError : public StatsError {
 public:
  using StatsError::StatsError;
};

// Sums of squares that overflowed a double (values beyond about 1e154 in magnitude): the
// message says so instead of a distribution's complaint about a NaN parameter.
inline void check_sums_of_squares(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b))
    throw StatsError(
        "the sums of squares overflow a double: the values are too large to analyse (each "
        "squared must stay below about 1.8e308; rescale them, e.g. to other units)");
}

}  // namespace scalebench::stats
