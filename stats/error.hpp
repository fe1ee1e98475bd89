// The one error type of the stats module.
#pragma once

#include <stdexcept>

#include "util/error.hpp"

namespace scalebench::stats {

// Input that no statistic can be computed from (fewer than two groups, an empty group, ...).
class StatsError : public Error {
 public:
  using Error::Error;
};

}  // namespace scalebench::stats
