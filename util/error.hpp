// The root of every error scalebench's libraries throw on purpose: a caller (the CLI, a test, a
// program linking the libraries) catches this one type to report any of them.
#pragma once

#include <stdexcept>

namespace scalebench {

// Module errors derive from it: db::DatabaseError, orchestrator::ExperimentError,
// stats::StatsError, plotting::ReportError, plotting::InputError, trainer::TrainerError.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace scalebench
