#include "orchestrator/runner.hpp"

#include <fmt/format.h>

#include <ctime>
#include <numeric>

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

db::RunBundle make_run_bundle(const Experiment& experiment, const RunPlan& plan,
                              const ProcessOutcome& outcome, RunAnalysis analysis) {
  db::RunBundle bundle;
  auto& run = bundle.run;
  run.experiment = experiment.name;
  run.condition = plan.condition;
  run.launcher = std::string(launcher_name(plan.launcher));
  run.np = plan.np;
  run.repetition = plan.repetition;
  run.command_line = shell_join(plan.launch.argv);
  run.exit_code = outcome.exit_code;
  run.signal = outcome.signal;
  run.started_at = iso8601_utc(outcome.start_wall_ns);
  run.ended_at = iso8601_utc(outcome.end_wall_ns);
  run.wall_seconds = static_cast<double>(outcome.end_monotonic_ns - outcome.start_monotonic_ns) * 1e-9;
  run.startup_seconds = analysis.startup_seconds;
  run.train_images = analysis.train_images;

  // The first reason wins: a run that timed out also has missing epochs, but "timeout" says why.
  if (!outcome.launch_error.empty()) {
    run.status = "failed";
    run.error = outcome.launch_error;
  } else if (outcome.interrupted) {
    run.status = "interrupted";
    run.error = "interrupted by the user";
  } else if (outcome.timed_out) {
    run.status = "timeout";
    run.error = fmt::format("no exit within {:.0f} s; the process group was terminated",
                            experiment.timeout_seconds.value_or(0));
  } else if (outcome.signal) {
    run.status = "failed";
    run.error = fmt::format("killed by signal {}", *outcome.signal);
  } else if (outcome.exit_code.value_or(-1) != 0) {
    run.status = "failed";
    run.error = fmt::format("exit code {}", outcome.exit_code.value_or(-1));
  } else if (!analysis.problems.empty()) {
    run.status = "incomplete";
    run.error = fmt::format("{}", fmt::join(analysis.problems, "; "));
  } else {
    run.status = "ok";
  }
  if (run.status != "ok" && !analysis.lines.empty()) {
    // The last stderr line usually says what went wrong: keep it next to the status.
    for (auto line = analysis.lines.rbegin(); line != analysis.lines.rend(); ++line) {
      if (line->stream == "stderr" && !line->text.empty()) {
        run.error += fmt::format(" (last stderr line: {})", line->text.substr(0, 300));
        break;
      }
    }
  }

  double measured = 0;
  long long epochs_measured = 0;
  for (const auto& epoch : analysis.epochs)
    if (epoch.duration_seconds) measured += *epoch.duration_seconds, ++epochs_measured;
  if (run.train_images && epochs_measured > 0 && measured > 0)
    run.images_per_second = static_cast<double>(*run.train_images * epochs_measured) / measured;

  bundle.epochs = std::move(analysis.epochs);
  bundle.lines = std::move(analysis.lines);
  bundle.allreduce = std::move(analysis.allreduce);
  return bundle;
}

ExperimentOutcome run_experiment(const Experiment& experiment, const std::vector<RunPlan>& plans,
                                 Executor& executor, db::Database& database,
                                 const db::ExperimentRecord& context, RunObserver* observer) {
  ExperimentOutcome result;
  result.experiment_id = database.insert_experiment(context);
  for (std::size_t index = 0; index < plans.size(); ++index) {
    const auto& plan = plans[index];
    if (observer) observer->on_run_start(plan, index, plans.size());
    std::vector<StampedLine> lines;
    const auto outcome =
        executor.execute(plan.launch, [&](StampedLine&& line) { lines.push_back(std::move(line)); });
    auto bundle = make_run_bundle(experiment, plan, outcome,
                                  analyze_run(lines, outcome.start_monotonic_ns, plan.tags));
    bundle.run.experiment_id = result.experiment_id;
    bundle.run.id = database.insert_run(bundle);
    ++result.runs;
    if (bundle.run.status == "ok") ++result.ok;
    if (observer) observer->on_run_end(bundle, index, plans.size());
    if (outcome.interrupted) {
      result.interrupted = true;
      break;
    }
  }
  return result;
}

}  // namespace scalebench::orchestrator
