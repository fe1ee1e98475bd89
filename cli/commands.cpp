#include "cli/commands.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

#include "cli/query_output.hpp"
#include "db/database.hpp"
#include "orchestrator/executor.hpp"
#include "orchestrator/experiment.hpp"
#include "orchestrator/runner.hpp"
#include "plotting/figure.hpp"
#include "plotting/report.hpp"

namespace scalebench::cli {
namespace {

namespace fs = std::filesystem;
using orchestrator::ExpandOptions;

// The trainer that ships with this scalebench: next to our own executable, else on PATH.
std::string default_trainer() {
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto sibling = self.parent_path() / "scalebench-train";
    if (fs::exists(sibling)) return sibling.string();
  }
  return "scalebench-train";
}

std::string host_name() {
  char buffer[256] = {};
  ::gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

class ProgressPrinter final : public orchestrator::RunObserver {
 public:
  explicit ProgressPrinter(std::ostream& out) : out_(out) {}
  void on_run_start(const orchestrator::RunPlan& plan, std::size_t index, std::size_t total) override {
    fmt::print(out_, "[{}/{}] {} np={} repetition {}: {}\n", index + 1, total, plan.condition,
               plan.np, plan.repetition, orchestrator::shell_join(plan.launch.argv));
    out_.flush();
  }
  void on_run_end(const db::RunBundle& bundle, std::size_t, std::size_t) override {
    const auto& run = bundle.run;
    double sum = 0;
    int measured = 0;
    for (const auto& epoch : bundle.epochs)
      if (epoch.duration_seconds) sum += *epoch.duration_seconds, ++measured;
    std::string detail = measured ? fmt::format("{} epochs, mean {:.3f} s", measured, sum / measured)
                                  : std::string("no epoch measured");
    if (!bundle.allreduce.empty()) {
      // An allreduce benchmark has no epochs: its rows are the result.
      saw_allreduce_ = true;
      double peak = 0;
      for (const auto& row : bundle.allreduce) peak = std::max(peak, row.busbw_gbs);
      detail = fmt::format("{} allreduce sizes, peak busbw {:.2f} GB/s", bundle.allreduce.size(),
                           peak);
    }
    if (run.images_per_second) detail += fmt::format(", {:.0f} images/s", *run.images_per_second);
    fmt::print(out_, "      {} in {:.2f} s: {}{}\n", run.status, run.wall_seconds, detail,
               run.status == "ok" ? "" : " — " + run.error);
    out_.flush();
  }

  bool saw_allreduce() const { return saw_allreduce_; }

 private:
  std::ostream& out_;
  bool saw_allreduce_ = false;
};

// The query that shows an allreduce benchmark experiment: mean time and bandwidth per size.
// Experiment names hold no quotes (orchestrator/experiment.cpp), so it can go in double quotes.
std::string allreduce_query(const std::string& experiment) {
  return fmt::format(
      "SELECT condition, np, bytes, round(avg(time_us), 3) AS time_us, "
      "round(avg(algbw_gbs), 4) AS algbw_gbs, round(avg(busbw_gbs), 4) AS busbw_gbs, "
      "sum(wrong) AS wrong FROM allreduce_times WHERE experiment = '{}' AND status = 'ok' "
      "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
      experiment);
}

std::string resolve_experiment(const db::Database& database, const std::optional<std::string>& name) {
  if (name) return *name;
  if (auto latest = database.latest_experiment()) return *latest;
  throw plotting::ReportError(
      fmt::format("{}: no experiment stored yet: run `scalebench run EXPERIMENT.json` first",
                  database.path()));
}

plotting::ReportTable load_report(const db::Database& database, const std::string& experiment,
                                  const std::optional<std::string>& base) {
  const auto samples = database.epoch_samples(experiment);
  if (samples.empty()) {
    const auto runs = database.runs(experiment);
    if (runs.empty())
      throw plotting::ReportError(fmt::format("{}: no experiment named \"{}\"", database.path(), experiment));
    for (const auto& run : runs) {
      if (database.allreduce_results(run.id).empty()) continue;
      throw plotting::ReportError(fmt::format(
          "{}: experiment \"{}\" is an allreduce benchmark: it has no epochs to report; its "
          "rows are in the allreduce_times view: scalebench query --db {} \"{}\"",
          database.path(), experiment, database.path(), allreduce_query(experiment)));
    }
    throw plotting::ReportError(fmt::format(
        "{}: experiment \"{}\" has {} runs but no finished epochs: see `scalebench query --db {} "
        "\"SELECT id, condition, np, status, error FROM runs WHERE experiment = '{}'\"`",
        database.path(), experiment, runs.size(), database.path(), experiment));
  }
  return plotting::build_report(experiment, samples, plotting::ReportOptions{base});
}

}  // namespace

int run_command(const RunCommand& options, std::ostream& out, std::ostream& err) {
  // Validate everything before the database is touched: a bad file writes nothing.
  const auto experiment = orchestrator::load_experiment(options.experiment_path);
  const auto plans = orchestrator::expand_matrix(
      experiment, ExpandOptions{default_trainer(), ::geteuid() == 0});
  if (options.dry_run) {
    for (std::size_t i = 0; i < plans.size(); ++i)
      fmt::print(out, "[{}/{}] {} np={} repetition {}: {}\n", i + 1, plans.size(),
                 plans[i].condition, plans[i].np, plans[i].repetition,
                 orchestrator::shell_join(plans[i].launch.argv));
    return 0;
  }

  auto database = db::Database::open(options.database);
  db::ExperimentRecord context;
  context.name = experiment.name;
  context.source_path = options.experiment_path;
  context.spec_json = experiment.spec_json;
  context.started_at = orchestrator::iso8601_utc(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch()).count());
  context.host = host_name();
  context.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  context.scalebench_version = SCALEBENCH_VERSION;

  fmt::print(out, "scalebench: experiment \"{}\" ({}): {} runs into {}\n", experiment.name,
             options.experiment_path, plans.size(), options.database);
  // SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE: the current run is stopped and stored, none starts.
  const orchestrator::StopSignalHandlers stop_handlers;
  orchestrator::ProcessExecutor executor;
  ProgressPrinter progress(out);
  const auto outcome =
      orchestrator::run_experiment(experiment, plans, executor, database, context, &progress);

  fmt::print(out, "scalebench: {} of {} runs ok; results in {}\n", outcome.ok, plans.size(),
             options.database);
  if (progress.saw_allreduce()) {
    fmt::print(out, "next: scalebench query --db {} \"{}\"\n", options.database,
               allreduce_query(experiment.name));
  } else {
    fmt::print(out, "next: scalebench report --db {} --experiment {}\n", options.database,
               orchestrator::shell_join({experiment.name}));
  }
  if (outcome.interrupted) {
    fmt::print(err, "scalebench: interrupted after {} runs; they are stored\n", outcome.runs);
    return 130;
  }
  if (outcome.ok != plans.size()) {
    fmt::print(err, "scalebench: {} runs did not finish ok: scalebench query --db {} \"SELECT id, "
                    "condition, np, repetition, status, error FROM runs WHERE status != 'ok'\"\n",
               plans.size() - outcome.ok, options.database);
    return 1;
  }
  return 0;
}

int report_command(const ReportCommand& options, std::ostream& out, std::ostream&) {
  const auto exporter = plotting::make_exporter(options.format);  // fail fast on a bad format
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  const auto table = load_report(database, resolve_experiment(database, options.experiment), options.base);
  const auto text = exporter->render(table);
  if (!options.output) {
    out << text;
    return 0;
  }
  const fs::path path = *options.output;
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream file(path, std::ios::binary);
  file << text;
  if (!file) throw plotting::ReportError(fmt::format("{}: cannot write the report", path.string()));
  fmt::print(out, "table: {}\n", path.string());
  return 0;
}

int plot_command(const PlotCommand& options, std::ostream& out, std::ostream&) {
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  const auto experiment = resolve_experiment(database, options.experiment);
  const auto table = load_report(database, experiment, options.base);
  const fs::path prefix = options.output_prefix.value_or(
      (fs::path(options.database).parent_path() / (experiment + "-scaling")).string());
  if (prefix.has_parent_path()) fs::create_directories(prefix.parent_path());
  const auto files = plotting::plot_scaling(table, prefix);
  fmt::print(out, "figure: {}\nfigure: {}\n", files.png.string(), files.svg.string());
  return 0;
}

int query_command(const QueryCommand& options, std::ostream& out, std::ostream&) {
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  const auto result = database.query_read_only(options.sql);
  out << (options.csv ? format_csv(result) : format_aligned(result));
  return 0;
}

}  // namespace scalebench::cli
