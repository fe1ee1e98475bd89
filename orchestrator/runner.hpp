// Runs a whole experiment matrix: launch, stamp, analyse, store — one run at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <tuple>

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
  // A run started epoch `epoch` of `total` (0: not known yet), `elapsed_seconds` after its first
  // line (on the lines' clock); called once per new epoch, as its `Epoch y/z` line arrives.
  virtual void on_epoch(const RunPlan&, std::size_t /*index*/, std::size_t /*total_runs*/,
                        int /*epoch*/, int /*total_epochs*/, double /*elapsed_seconds*/) {}
  // The results database refused the run; it was written to this side file instead.
  virtual void on_side_file(const std::filesystem::path&, const std::string& /*why*/) {}
  // Neither the database nor a side file could take the run (why); the matrix goes on.
  virtual void on_run_lost(const std::string& /*why*/) {}
  // With a precision rule: a cell's decision after each of its runs (its ok runs' means), and
  // the runs the rule still expects in the whole matrix (for the ETA).
  virtual void on_cell_decision(const RunPlan&, const stats::StopDecision&,
                                const stats::PrecisionRule&) {}
  virtual void on_expected_runs(std::size_t /*remaining*/) {}
};

// One cell of the matrix.
struct CellKey {
  std::string condition;
  FactorLevels levels;
  int np = 1;
  int repetition = 1;
  auto operator<=>(const CellKey&) const = default;
};
CellKey cell_of(const RunPlan& plan);
// The cell without its repetition (repetition 0): what a precision rule decides for.
CellKey base_cell_of(const RunPlan& plan);

// An experiment instance ready to run: a new one, or one resumed (`scalebench run --resume`).
struct Instance {
  db::ExperimentRecord record;  // as stored (id set)
  bool resumed = false;
  std::vector<RunPlan> pending;     // the cells still to run, in matrix order
  std::map<CellKey, int> attempts;  // attempts already stored, per cell
  std::size_t cells = 0;            // matrix size
  std::size_t cells_ok = 0;         // cells already ok before this invocation
  // With a precision rule: the mean epoch time of each stored ok run, per base cell (warm-up
  // left out), from which the rule's decisions are recomputed on --resume.
  std::map<CellKey, std::vector<double>> run_means;
};

// A run's mean epoch time with the first `warmup` epochs left out (all of them when the run has
// no more than that), over the epochs whose duration was measured; absent when none was: the
// report's rule (report/data/run_set.cpp), for the precision rule's decisions.
std::optional<double> run_mean_epoch_seconds(const std::vector<db::EpochRecord>& epochs,
                                             int warmup);

// The mean epoch times of the instance's stored ok runs per base cell (warm-up left out).
std::map<CellKey, std::vector<double>> stored_run_means(const db::Database& database,
                                                        std::int64_t instance_id, int warmup);

// Inserts a new instance (context: name, spec, host, ...; its cells and hash are filled in).
Instance start_instance(db::Database& database, db::ExperimentRecord context,
                        const std::vector<RunPlan>& plans);
// The latest instance with the same spec; only cells without an ok run are pending. Throws
// ExperimentError when the database has no instance of this spec.
Instance resume_instance(db::Database& database, const db::ExperimentRecord& context,
                         const std::vector<RunPlan>& plans);

struct RunnerOptions {
  int retries = 0;         // re-runs of a cell whose run is not ok, each attempt stored
  int store_attempts = 3;  // writes tried (each waiting the busy timeout) before a side file
  std::chrono::milliseconds store_retry_delay{1000};
  // Where a run goes when the database cannot take it: default "<database>.unsaved/".
  std::filesystem::path side_directory;
  // Where it goes when side_directory cannot take it either (a regular file of that name, a
  // read-only folder): default a private "scalebench-unsaved-<uid>" in the temporary directory.
  std::filesystem::path fallback_side_directory;
};

struct ExperimentOutcome {
  std::int64_t experiment_id = 0;
  std::size_t runs = 0;      // stored (in the database or a side file)
  std::size_t ok = 0;        // runs stored with status ok
  std::size_t cells_ok = 0;  // cells of the instance with an ok run, this invocation included
  std::size_t cells = 0;
  // With a precision rule: the matrix's repetitions the rule left out (their cells had stopped),
  // not counted in `cells`; and each base cell's decision at the end (precision, max, or still
  // running when interrupted).
  std::size_t not_needed = 0;
  std::map<CellKey, stats::StopDecision> decisions;
  bool interrupted = false;  // stopped early (signal); the runs before it are stored
  std::vector<std::filesystem::path> side_files;
  // Runs neither the database nor any side file could take: why, per run (the matrix went on).
  std::vector<std::string> lost_runs;
};

// Builds the stored record of one finished run: status, epochs, images/s (lines are staged).
db::RunBundle make_run_bundle(const Experiment& experiment, const RunPlan& plan,
                              const ProcessOutcome& outcome, RunAnalysis analysis);

// Runs the instance's pending cells. Every finished run is committed before the next starts
// (or written to a side file when the database stays busy), so an interrupted or crashed
// experiment keeps what it measured. No run starts once a stop was requested.
ExperimentOutcome run_instance(const Experiment& experiment, Instance& instance, Executor& executor,
                               db::Database& database, RunObserver* observer = nullptr,
                               const RunnerOptions& options = {});

// A new instance with every cell: start_instance, then run_instance.
ExperimentOutcome run_experiment(const Experiment& experiment, const std::vector<RunPlan>& plans,
                                 Executor& executor, db::Database& database,
                                 const db::ExperimentRecord& context,
                                 RunObserver* observer = nullptr,
                                 const RunnerOptions& options = {});

// ISO 8601 UTC with microseconds, from nanoseconds since the Unix epoch.
std::string iso8601_utc(std::int64_t wall_ns);
std::string now_iso8601_utc();

}  // namespace scalebench::orchestrator
