#include "orchestrator/runner.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "orchestrator/provenance.hpp"

namespace scalebench::orchestrator {

std::string iso8601_utc(std::int64_t wall_ns) {
  const std::time_t seconds = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  const long micros = static_cast<long>((wall_ns % 1'000'000'000) / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:06d}Z", buffer, micros);
}

std::string now_iso8601_utc() {
  return iso8601_utc(std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
}

CellKey cell_of(const RunPlan& plan) {
  return CellKey{plan.condition, plan.levels, plan.np, plan.repetition};
}

std::optional<double> run_mean_epoch_seconds(const std::vector<db::EpochRecord>& epochs,
                                             int warmup) {
  const auto measured = std::count_if(epochs.begin(), epochs.end(),
                                      [](const auto& epoch) { return epoch.duration_seconds; });
  const bool drop = warmup > 0 && measured > warmup;
  double sum = 0;
  int count = 0;
  for (const auto& epoch : epochs) {
    if (!epoch.duration_seconds || (drop && epoch.epoch <= warmup)) continue;
    sum += *epoch.duration_seconds;
    ++count;
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

CellKey base_cell_of(const RunPlan& plan) {
  return CellKey{plan.condition, plan.levels, plan.np, 0};
}

std::map<CellKey, std::vector<double>> stored_run_means(const db::Database& database,
                                                        std::int64_t instance_id, int warmup) {
  std::vector<std::pair<int, db::RunRecord>> ok;  // by repetition, then as stored
  for (auto& run : database.runs_of_instances({instance_id}))
    if (run.status == db::RunStatus::Ok) ok.emplace_back(run.repetition, std::move(run));
  std::stable_sort(ok.begin(), ok.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<CellKey, std::vector<double>> means;
  for (const auto& [repetition, run] : ok) {
    auto& cell = means[CellKey{run.condition, run.factors, run.np, 0}];
    if (const auto mean = run_mean_epoch_seconds(database.epochs(run.id), warmup))
      cell.push_back(*mean);
  }
  return means;
}

db::RunBundle make_run_bundle(const Experiment& experiment, const RunPlan& plan,
                              const ProcessOutcome& outcome, RunAnalysis analysis) {
  db::RunBundle bundle;
  auto& run = bundle.run;
  run.experiment = experiment.name;
  run.condition = plan.condition;
  run.factors = plan.levels;
  run.launcher = std::string(launcher_name(plan.launcher));
  run.np = plan.np;
  run.repetition = plan.repetition;
  run.command_line = shell_join(plan.launch.argv);
  run.env_json = nlohmann::json(plan.launch.env).dump();
  run.exit_code = outcome.exit_code;
  run.signal = outcome.signal;
  run.started_at = iso8601_utc(outcome.start_wall_ns);
  run.ended_at = iso8601_utc(outcome.end_wall_ns);
  run.wall_seconds = std::max(
      0.0, static_cast<double>(outcome.end_monotonic_ns - outcome.start_monotonic_ns) * 1e-9);
  run.startup_seconds = analysis.startup_seconds;
  run.train_images = analysis.train_images;

  // The first reason wins: a run that timed out also has missing epochs, but "timeout" says why.
  if (!outcome.launch_error.empty()) {
    run.status = db::RunStatus::Failed;
    run.error = outcome.launch_error;
  } else if (outcome.interrupted) {
    run.status = db::RunStatus::Interrupted;
    run.error = "interrupted: scalebench was asked to stop";
  } else if (outcome.timed_out) {
    run.status = db::RunStatus::Timeout;
    run.error = fmt::format("no exit within {:g} s; the process group was terminated",
                            experiment.timeout_seconds.value_or(0));
  } else if (outcome.signal) {
    run.status = db::RunStatus::Failed;
    run.error = fmt::format("killed by signal {}", *outcome.signal);
  } else if (outcome.exit_code.value_or(-1) != 0) {
    run.status = db::RunStatus::Failed;
    run.error = fmt::format("exit code {}", outcome.exit_code.value_or(-1));
  } else if (!analysis.problems.empty()) {
    run.status = db::RunStatus::Incomplete;
    run.error = fmt::format("{}", fmt::join(analysis.problems, "; "));
  } else {
    run.status = db::RunStatus::Ok;
  }
  if (run.status != db::RunStatus::Ok && !analysis.failure_reason.empty()) {
    // What stderr said went wrong (the trainer's last words, or mpirun's own message).
    run.error += fmt::format(" (stderr: {})", printable_excerpt(analysis.failure_reason));
  }

  double measured = 0;
  long long epochs_measured = 0;
  for (const auto& epoch : analysis.epochs)
    if (epoch.duration_seconds) measured += *epoch.duration_seconds, ++epochs_measured;
  if (run.train_images && epochs_measured > 0 && measured > 0)
    run.images_per_second = static_cast<double>(*run.train_images * epochs_measured) / measured;

  for (const auto& epoch : analysis.epochs)
    if (epoch.test_accuracy) run.test_accuracy = epoch.test_accuracy;  // the last one's
  static const std::string local_host = local_host_name();
  run.provenance = run_provenance(plan, analysis, local_host);

  bundle.epochs = std::move(analysis.epochs);
  bundle.lines = std::move(analysis.lines);
  bundle.allreduce = std::move(analysis.allreduce);
  return bundle;
}

Instance start_instance(db::Database& database, db::ExperimentRecord context,
                        const std::vector<RunPlan>& plans) {
  context.spec_hash = db::spec_hash(context.spec_json);
  context.cells = static_cast<long long>(plans.size());
  context.ended_at.reset();
  context.end_reason.reset();
  Instance instance;
  context.id = database.insert_experiment(context);
  instance.record = std::move(context);
  instance.pending = plans;
  instance.cells = plans.size();
  return instance;
}

Instance resume_instance(db::Database& database, const db::ExperimentRecord& context,
                         const std::vector<RunPlan>& plans) {
  const auto hash = db::spec_hash(context.spec_json);
  auto record = database.latest_instance_of_spec(hash);
  if (!record) {
    std::string others;
    if (const auto latest = database.latest_instance(context.name))
      others = fmt::format(" (instance {} of \"{}\" has another spec: the file changed since)",
                           latest->id, context.name);
    throw ExperimentError(fmt::format(
        "{}: --resume: {} holds no instance of this experiment spec{}; run it without --resume",
        context.source_path, database.path(), others));
  }
  Instance instance;
  instance.resumed = true;
  instance.cells = plans.size();
  std::map<CellKey, bool> ok;
  for (const auto& run : database.runs_of_instances({record->id})) {
    const CellKey key{run.condition, run.factors, run.np, run.repetition};
    instance.attempts[key] = std::max(instance.attempts[key], run.attempt);
    if (run.status == db::RunStatus::Ok) ok[key] = true;
  }
  for (const auto& plan : plans) {
    if (ok.contains(cell_of(plan)))
      ++instance.cells_ok;
    else
      instance.pending.push_back(plan);
  }
  instance.record = std::move(*record);
  return instance;
}

namespace {

// What a precision rule has decided for each cell of the matrix: its decision from its ok runs,
// and how many of its repetitions are left to run; the expected remaining runs for the ETA.
class PrecisionTracker {
 public:
  PrecisionTracker(const stats::PrecisionRule& rule, const std::vector<RunPlan>& pending,
                   std::map<CellKey, std::vector<double>> means)
      : rule_(rule), means_(std::move(means)) {
    for (const auto& plan : pending) ++left_[base_cell_of(plan)];
    for (const auto& [cell, unused] : left_) means_[cell];
  }
  // Whether this plan's repetition is needed: the first `min` always, later ones while the
  // cell has not stopped.
  bool needed(const RunPlan& plan) const {
    return plan.repetition <= rule_.min_runs || !decision(base_cell_of(plan)).stop;
  }
  void ran(const RunPlan& plan, std::optional<double> ok_mean) {
    const auto cell = base_cell_of(plan);
    if (ok_mean) means_[cell].push_back(*ok_mean);
  }
  void skipped(const RunPlan& plan) { --left_[base_cell_of(plan)]; }
  void done(const RunPlan& plan) { --left_[base_cell_of(plan)]; }
  stats::StopDecision decision(const CellKey& cell) const {
    const auto found = means_.find(cell);
    static const std::vector<double> none;
    const auto& means = found == means_.end() ? none : found->second;
    const auto left = left_.find(cell);
    const bool exhausted = left == left_.end() || left->second <= 0;
    return exhausted ? stats::final_decision(means, rule_) : stats::precision_stop(means, rule_);
  }
  // The runs the rule expects still: per cell not stopped, its expected further runs, at most
  // its repetitions left.
  std::size_t expected_runs() const {
    std::size_t total = 0;
    for (const auto& [cell, left] : left_) {
      if (left <= 0) continue;
      const auto d = decision(cell);
      if (!d.stop) total += static_cast<std::size_t>(std::min(d.expected_more, left));
    }
    return total;
  }
  std::map<CellKey, stats::StopDecision> decisions() const {
    std::map<CellKey, stats::StopDecision> out;
    for (const auto& [cell, unused] : means_) out[cell] = decision(cell);
    return out;
  }

 private:
  stats::PrecisionRule rule_;
  std::map<CellKey, std::vector<double>> means_;
  std::map<CellKey, int> left_;  // pending repetitions not yet run or skipped
};

}  // namespace

namespace {

// A directory only this user can have made: "scalebench-unsaved-<uid>" in the temporary
// directory, or nothing when someone else's (or a link) is already there.
std::filesystem::path private_fallback_directory() {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path directory =
      fs::temp_directory_path(error) / fmt::format("scalebench-unsaved-{}", ::getuid());
  if (error) return {};
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) return {};
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
    return {};
  return directory;
}

// Stores the run with its staged lines; a database that stays busy is retried, and a run it
// still cannot take goes to a side file (a scalebench database of its own, docs/database.md):
// beside the database, else in a private fallback directory. False when nothing took it.
bool store_run(db::Database& database, const Instance& instance, db::RunBundle& bundle,
               std::size_t index, const RunnerOptions& options, RunObserver* observer,
               ExperimentOutcome& result) {
  std::string why;
  for (int attempt = 1; attempt <= std::max(1, options.store_attempts); ++attempt) {
    try {
      bundle.run.id = database.insert_run(bundle);
      return true;
    } catch (const db::DatabaseBusy& error) {
      why = error.what();
      if (attempt < options.store_attempts) std::this_thread::sleep_for(options.store_retry_delay);
    } catch (const db::DatabaseError& error) {
      why = error.what();
      break;  // not a lock: waiting will not help
    }
  }
  namespace fs = std::filesystem;
  const fs::path first = options.side_directory.empty() ? fs::path(database.path() + ".unsaved")
                                                        : options.side_directory;
  std::vector<fs::path> directories{first};
  directories.push_back(options.fallback_side_directory.empty() ? private_fallback_directory()
                                                                : options.fallback_side_directory);
  const std::string name = fmt::format("instance{}-run{}-attempt{}-pid{}.db", instance.record.id,
                                       index + 1, bundle.run.attempt, ::getpid());
  std::vector<std::string> refused;  // why each directory could not take it
  for (const fs::path& directory : directories) {
    if (directory.empty()) continue;
    const fs::path side = directory / name;
    try {
      fs::create_directories(directory);
      auto side_db = db::Database::open(side.string());
      db::ExperimentRecord record = instance.record;
      record.id = 0;
      bundle.run.experiment_id = side_db.insert_experiment(record);
      bundle.run.id = side_db.insert_run_from_stage(bundle, database);
    } catch (const std::exception& error) {
      refused.push_back(fmt::format("{}: {}", side.string(), error.what()));
      for (const char* suffix : {"", "-wal", "-shm"}) {  // no side file without its run
        std::error_code ignored;
        fs::remove(side.string() + suffix, ignored);
      }
      continue;
    }
    database.discard_staged_lines();
    result.side_files.push_back(side);
    std::string reason = why;
    for (const auto& r : refused) reason += "; side file refused at " + r;
    if (observer) observer->on_side_file(side, reason);
    return true;
  }
  // Nothing took it: said, and the matrix goes on (the next run may be stored).
  database.discard_staged_lines();
  std::string reason = fmt::format("{} np={} repetition {} attempt {}: {}", bundle.run.condition,
                                   bundle.run.np, bundle.run.repetition, bundle.run.attempt, why);
  for (const auto& r : refused) reason += "; side file refused at " + r;
  result.lost_runs.push_back(reason);
  if (observer) observer->on_run_lost(reason);
  return false;
}

}  // namespace

ExperimentOutcome run_instance(const Experiment& experiment, Instance& instance, Executor& executor,
                               db::Database& database, RunObserver* observer,
                               const RunnerOptions& options) {
  ExperimentOutcome result;
  result.experiment_id = instance.record.id;
  result.cells = instance.cells;
  result.cells_ok = instance.cells_ok;
  if (instance.resumed) database.reopen_experiment(instance.record.id);
  const std::size_t total = instance.pending.size();
  // With a precision rule, runs go in rounds: the matrix's order is by repetition, so the first
  // `min` repetitions of every cell come first, then each later repetition gives every cell not
  // yet stopped one more run, in the same (seeded) order.
  std::optional<PrecisionTracker> rule;
  if (experiment.precision) {
    if (instance.resumed && instance.run_means.empty())
      instance.run_means = stored_run_means(database, instance.record.id, experiment.warmup_epochs);
    rule.emplace(*experiment.precision, instance.pending, instance.run_means);
  }
  for (std::size_t index = 0; index < total && !result.interrupted; ++index) {
    const auto& plan = instance.pending[index];
    if (rule && !rule->needed(plan)) {
      rule->skipped(plan);
      ++result.not_needed;
      continue;
    }
    if (rule && observer) observer->on_expected_runs(rule->expected_runs());
    int& attempts = instance.attempts[cell_of(plan)];
    for (int retry = 0; retry <= options.retries; ++retry) {
      // A stop asked while the previous run was being stored starts nothing new.
      if (interrupt_requested()) {
        result.interrupted = true;
        break;
      }
      if (observer) observer->on_run_start(plan, index, total);
      database.discard_staged_lines();
      // Lines are analysed and staged as they arrive, relative to the first one; the process
      // start is known only when execute returns, and the offsets are shifted to it then.
      std::optional<RunAnalyzer> analyzer;
      std::int64_t base_ns = 0;
      const RunExpectations expected{plan.np, plan.train_images, plan.line_forms};
      int reported_epoch = 0;
      const auto outcome = executor.execute(plan.launch, [&](StampedLine&& line) {
        if (!analyzer) analyzer.emplace(base_ns = line.monotonic_ns, plan.tags, expected);
        database.stage_line(analyzer->add(line));
        if (observer && analyzer->latest_epoch() > reported_epoch) {
          reported_epoch = analyzer->latest_epoch();
          observer->on_epoch(plan, index, total, reported_epoch, analyzer->epochs_expected(),
                             static_cast<double>(line.monotonic_ns - base_ns) * 1e-9);
        }
      });
      // A stop that arrived between the check above and the launch: no process ran, so there
      // is no run to store (it would read as a bogus "interrupted" run of this cell).
      if (!outcome.launched && outcome.interrupted) {
        database.discard_staged_lines();
        result.interrupted = true;
        break;
      }
      if (!analyzer) analyzer.emplace(base_ns = outcome.start_monotonic_ns, plan.tags, expected);
      // The exit, on the lines' clock: the last epoch's end when nothing printed marks it.
      RunAnalysis analysis =
          analyzer->finish(static_cast<double>(outcome.end_monotonic_ns - base_ns) * 1e-9);
      const double shift = static_cast<double>(base_ns - outcome.start_monotonic_ns) * 1e-9;
      shift_offsets(analysis, shift);

      auto bundle = make_run_bundle(experiment, plan, outcome, std::move(analysis));
      bundle.staged_offset_shift_seconds = shift;
      bundle.run.experiment_id = instance.record.id;
      bundle.run.attempt = ++attempts;
      const bool stored = store_run(database, instance, bundle, index, options, observer, result);
      if (stored) ++result.runs;
      const bool ok = stored && bundle.run.status == db::RunStatus::Ok;
      if (ok) ++result.ok, ++result.cells_ok;
      if (observer) observer->on_run_end(bundle, index, total);
      if (outcome.interrupted) result.interrupted = true;
      if (rule && ok)
        rule->ran(plan, run_mean_epoch_seconds(bundle.epochs, experiment.warmup_epochs));
      if (ok || outcome.interrupted) break;
    }
    if (rule && !result.interrupted) {
      rule->done(plan);
      if (observer)
        observer->on_cell_decision(plan, rule->decision(base_cell_of(plan)), *experiment.precision);
    }
  }
  if (rule) {
    result.decisions = rule->decisions();
    result.cells -= std::min(result.cells, result.not_needed);
  }
  // How the instance ended; a database that stays locked now costs only this note.
  try {
    database.end_experiment(instance.record.id, now_iso8601_utc(),
                            result.interrupted ? "interrupted" : "finished");
  } catch (const db::DatabaseError&) {
  }
  return result;
}

ExperimentOutcome run_experiment(const Experiment& experiment, const std::vector<RunPlan>& plans,
                                 Executor& executor, db::Database& database,
                                 const db::ExperimentRecord& context, RunObserver* observer,
                                 const RunnerOptions& options) {
  Instance instance = start_instance(database, context, plans);
  return run_instance(experiment, instance, executor, database, observer, options);
}

}  // namespace scalebench::orchestrator
