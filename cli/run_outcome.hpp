// `scalebench run`'s words about its matrix and its end: the header line (runs to go, or what a
// resume continues), and the tally, the side files, each precision cell's stop, what to do next
// and the exit status. Split from run_command.cpp so that it stays a thin command.
#pragma once

#include <iosfwd>
#include <string>

#include "cli/run_command.hpp"
#include "orchestrator/experiment.hpp"
#include "orchestrator/runner.hpp"

namespace scalebench::cli {

// "12 runs"; with a precision rule "at most 36 runs as the precision rule decides"; resumed:
// what is stored and what is left.
std::string describe_matrix(const orchestrator::Instance& instance, bool precision);

// The end of a run: the tally, where runs went that the database could not take, what to do
// next, and the exit status (128 + signal when stopped, 1 when a cell has no ok run).
int report_outcome(const RunCommand& options, const orchestrator::Experiment& experiment,
                   const orchestrator::ExperimentOutcome& outcome, bool saw_allreduce,
                   std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
