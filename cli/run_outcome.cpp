#include "cli/run_outcome.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>

#include "orchestrator/instance_setup.hpp"
#include "orchestrator/runner.hpp"
#include "report/data/load_runs.hpp"
#include "stats/sequential.hpp"
#include "util/text.hpp"

namespace scalebench::cli {

std::string describe_matrix(const orchestrator::Instance& instance, bool precision) {
  const auto pending = static_cast<long long>(instance.pending.size());
  // With a precision rule the matrix holds every repetition up to max: the rule, not the
  // matrix, says how many run, so the pending count is only a bound.
  if (precision) {
    std::size_t stored = 0;
    for (const auto& [cell, means] : instance.run_means) stored += means.size();
    return instance.resumed ? fmt::format(
                                  "resuming instance {}: {} stored, at most {} more as the "
                                  "precision rule decides",
                                  instance.record.id,
                                  util::count_of(static_cast<long long>(stored), "ok run"), pending)
                            : fmt::format("at most {} as the precision rule decides",
                                          util::count_of(pending, "run"));
  }
  if (!instance.resumed) return util::count_of(pending, "run");
  return fmt::format("resuming instance {}: {} of {} already ok, {} to run", instance.record.id,
                     instance.cells_ok,
                     util::count_of(static_cast<long long>(instance.cells), "cell"), pending);
}

int report_outcome(const RunCommand& options, const orchestrator::Experiment& experiment,
                   const orchestrator::ExperimentOutcome& outcome, bool saw_allreduce,
                   std::ostream& out, std::ostream& err) {
  fmt::print(out, "scalebench: {} of {} ok ({} this time, {} ok); results in {}\n",
             outcome.cells_ok, util::count_of(static_cast<long long>(outcome.cells), "cell"),
             util::count_of(static_cast<long long>(outcome.runs), "run"), outcome.ok,
             options.database);
  if (!outcome.side_files.empty()) {
    fmt::print(err,
               "scalebench: {} runs could not be written to {} and are in side files (each a "
               "scalebench database; docs/database.md, \"Side files\"):\n",
               outcome.side_files.size(), options.database);
    for (const auto& file : outcome.side_files) fmt::print(err, "  {}\n", file.string());
    fmt::print(err, "  merge them with: scalebench merge FILE... --into {}\n", options.database);
  }
  if (!outcome.lost_runs.empty()) {
    fmt::print(
        err, "scalebench: error: {} could not be stored, neither in {} nor in a side file:\n",
        util::count_of(static_cast<long long>(outcome.lost_runs.size()), "run"), options.database);
    for (const auto& why : outcome.lost_runs) fmt::print(err, "  {}\n", why);
  }
  if (!outcome.decisions.empty()) {
    // Each cell's runs and why it stopped (a cell stopped by max is marked).
    const auto& rule = *experiment.precision;
    for (const auto& [cell, decision] : outcome.decisions) {
      std::string levels;
      for (const auto& [factor, level] : cell.levels)
        levels += fmt::format(" {}={}", factor, level);
      fmt::print(out, "  {}{} np={}: {}{}\n", util::escape_controls(cell.condition),
                 util::escape_controls(levels), cell.np, stats::stop_reason_text(decision, rule),
                 decision.reason == stats::StopReason::Max ? " †" : "");
    }
  }
  if (saw_allreduce) {
    fmt::print(out, "next: scalebench query --db {} \"{}\"\n", options.database,
               report::allreduce_query(experiment.name));
  } else {
    fmt::print(out, "next: scalebench report --db {} --experiment {}\n", options.database,
               orchestrator::shell_join({experiment.name}));
  }
  if (outcome.interrupted) {
    const int signal = orchestrator::stop_signal();
    fmt::print(err,
               "scalebench: stopped{} after {} runs; they are stored; `scalebench run --resume "
               "{}` runs the rest\n",
               signal ? fmt::format(" by signal {}", signal) : "", outcome.runs,
               orchestrator::shell_join({options.experiment_path}));
    return 128 + (signal ? signal : SIGINT);
  }
  if (outcome.cells_ok != outcome.cells) {
    fmt::print(
        err,
        "scalebench: {} no ok run: scalebench query --db {} \"SELECT id, "
        "condition, np, repetition, attempt, status, error FROM runs WHERE "
        "experiment_id = {} AND status != 'ok'\"\n",
        outcome.cells - outcome.cells_ok == 1
            ? std::string("1 cell has")
            : util::count_of(static_cast<long long>(outcome.cells - outcome.cells_ok), "cell") +
                  " have",
        options.database, outcome.experiment_id);
    return 1;
  }
  return 0;
}

}  // namespace scalebench::cli
