// The one error type of the stats module.
#pragma once

#include <stdexcept>

namespace scalebench::stats {

// Input that no statistic can be computed from (fewer than two groups, an empty group, ...).
class StatsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace scalebench::stats
