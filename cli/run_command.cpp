#include "cli/run_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "cli/progress.hpp"
#include "cli/run_outcome.hpp"
#include "db/database.hpp"
#include "orchestrator/executor.hpp"
#include "orchestrator/experiment.hpp"
#include "orchestrator/instance_lock.hpp"
#include "orchestrator/instance_setup.hpp"
#include "orchestrator/provenance.hpp"
#include "orchestrator/runner.hpp"
#include "report/export/plain_table.hpp"
#include "util/text.hpp"

namespace scalebench::cli {
namespace {

using orchestrator::ExpandOptions;

// --dry-run: the matrix as a table, one column per factor, then each run's command line.
void print_matrix(std::ostream& out, const orchestrator::Experiment& experiment,
                  const std::vector<orchestrator::RunPlan>& plans,
                  std::optional<std::uint64_t> seed) {
  std::vector<std::string> header = {"run", "repetition", "condition"};
  for (const auto& factor : experiment.factors) header.push_back(factor.name);
  header.push_back("np");
  report::AlignedTable table(header);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    std::vector<std::string> row = {std::to_string(i + 1), std::to_string(plans[i].repetition),
                                    plans[i].condition};
    for (const auto& [factor, level] : plans[i].levels) row.push_back(level);
    row.push_back(std::to_string(plans[i].np));
    table.add(row);
  }
  fmt::print(out, "experiment \"{}\": {} runs, order {}{}\n", experiment.name, plans.size(),
             orchestrator::run_order_name(experiment.order),
             seed ? fmt::format(" (seed {}{})", *seed,
                                experiment.seed ? "" : "; drawn now, add \"seed\" to keep it")
                  : "");
  table.write(out, report::AlignedTable::Layout::Plain);
  fmt::print(out, "\n");
  // Each run as it would start: its environment (the variables the condition or level set, and
  // scalebench's own) in front of the command, as a shell would take them.
  for (std::size_t i = 0; i < plans.size(); ++i) {
    std::string env;
    for (const auto& [name, value] : plans[i].launch.env)
      env += name + "=" + orchestrator::shell_join({value}) + " ";
    fmt::print(out, "[{}/{}] {}: {}{}\n", i + 1, plans.size(), plans[i].condition, env,
               orchestrator::shell_join(plans[i].launch.argv));
  }
}

}  // namespace

void declare_run_options(CLI::App& app, RunCommand& options) {
  app.add_option("experiment", options.experiment_path, "Experiment file (JSON)")->required();
  add_database_option(app, options.database);
  app.add_flag("--dry-run", options.dry_run, "Print the runs without starting them");
  app.add_flag("--quiet", options.quiet,
               "No progress on stderr (the current epoch, the matrix's time left)");
  app.add_flag("--resume", options.resume,
               "Continue the latest instance of the same spec: run only its cells not yet ok "
               "(refused while another run of it is going on)");
  app.add_option("--retries", options.retries,
                 "Re-run a cell whose run is not ok up to N times (every attempt is stored)")
      ->transform(integer_in(0, 1000))
      ->capture_default_str();
  app.add_option("--precision", options.precision,
                 "Run each cell until the 95 % interval of its mean epoch time is within this "
                 "share of the mean (0.02: +/-2 %); the file's \"repetitions\" gives min and max")
      ->check(CLI::Range(0.0, 1.0).description("in (0, 1)"));
  app.add_option("--max-runs", options.max_runs,
                 "Refuse a matrix of more runs than this (a guard against typos)")
      ->transform(integer_in(1, 1'000'000'000))
      ->capture_default_str();
}

int run_command(const RunCommand& options, std::ostream& out, std::ostream& err) {
  // Validate everything before the database is touched: a bad file writes nothing.
  auto experiment = orchestrator::load_experiment(options.experiment_path);
  if (options.precision) orchestrator::set_precision(experiment, *options.precision);
  if (options.retries < 0 || options.retries > 100)
    throw Error(fmt::format("--retries {}: expected 0 to 100", options.retries));
  ExpandOptions expand = orchestrator::machine_expand_options(options.max_runs);
  std::optional<db::Database> database;
  // One `run` of an instance at a time, taken before it reads what is left to run (and held to
  // the end): a second `run` or `run --resume` of the same spec into this database refuses.
  std::optional<util::FileLock> instance_lock;
  const auto open_database = [&] {
    database = db::Database::open(options.database);
    instance_lock = orchestrator::lock_instance(
        options.database, db::spec_hash(experiment.spec_json), experiment.name);
  };
  if (options.resume && !options.dry_run) open_database();
  expand.seed = orchestrator::choose_order_seed(experiment, database ? &*database : nullptr);
  const auto seed = orchestrator::order_seed(experiment, expand.seed.value_or(0));
  const auto plans = orchestrator::expand_matrix(experiment, expand);
  if (options.dry_run) {
    print_matrix(out, experiment, plans, seed);
    return 0;
  }

  if (!database) open_database();
  auto context = orchestrator::instance_record(experiment, options.experiment_path, seed);
  orchestrator::ProcessExecutor executor;
  if (!options.resume)
    context.provenance = orchestrator::collect_instance_provenance(experiment, plans, executor);

  auto instance = options.resume ? orchestrator::resume_instance(*database, context, plans)
                                 : orchestrator::start_instance(*database, context, plans);
  fmt::print(out, "scalebench: experiment \"{}\" ({}), instance {}: {} into {}\n", experiment.name,
             options.experiment_path, instance.record.id,
             describe_matrix(instance, experiment.precision.has_value()), options.database);
  // SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE: the current run is stopped and stored, none starts.
  const orchestrator::StopSignalHandlers stop_handlers;
  // Progress on one updating line only when stderr is this process's terminal.
  const auto style = options.quiet                              ? ProgressStyle::Quiet
                     : (&err == &std::cerr && ::isatty(2) == 1) ? ProgressStyle::Terminal
                                                                : ProgressStyle::Lines;
  ProgressPrinter progress(out, err, style);
  orchestrator::RunnerOptions runner;
  runner.retries = options.retries;
  const auto outcome =
      orchestrator::run_instance(experiment, instance, executor, *database, &progress, runner);
  return report_outcome(options, experiment, outcome, progress.saw_allreduce(), out, err);
}

}  // namespace scalebench::cli
