// Runs a whole experiment matrix: launch, stamp, analyse, store — one run at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "db/database.hpp"
#include "orchestrator/executor.hpp"
#include "orchestrator/experiment.hpp"
#include "orchestrator/run_analysis.hpp"

namespace scalebench::orchestrator {

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_run_start(const RunPlan&, std::size_t /*index*/, std::size_t /*total*/) {}
  virtual void on_run_end(const db::RunBundle&, std::size_t /*index*/, std::size_t /*total*/) {}
};

struct ExperimentOutcome {
  std::int64_t experiment_id = 0;
  std::size_t runs = 0;       // stored
  std::size_t ok = 0;
  bool interrupted = false;   // stopped early by Ctrl-C; the runs before it are stored
};

// Builds the stored record of one finished run: status, epochs, lines, images/s.
db::RunBundle make_run_bundle(const Experiment& experiment, const RunPlan& plan,
                              const ProcessOutcome& outcome, RunAnalysis analysis);

// Every finished run is committed before the next starts, so an interrupted or crashed
// experiment keeps what it measured.
ExperimentOutcome run_experiment(const Experiment& experiment, const std::vector<RunPlan>& plans,
                                 Executor& executor, db::Database& database,
                                 const db::ExperimentRecord& context,
                                 RunObserver* observer = nullptr);

// ISO 8601 UTC with microseconds, from nanoseconds since the Unix epoch.
std::string iso8601_utc(std::int64_t wall_ns);

}  // namespace scalebench::orchestrator
