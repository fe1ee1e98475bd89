// The errors of the stats module.
#pragma once

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

}  // namespace scalebench::stats
