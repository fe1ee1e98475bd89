#include "cli/cli.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <functional>
#include <ostream>

#include "cli/cluster_command.hpp"
#include "cli/commands.hpp"
#include "cli/compare_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/model_command.hpp"
#include "cli/numeric_flags.hpp"
#include "cli/stats_command.hpp"
#include "db/database.hpp"
#include "plotting/report.hpp"
#include "util/text.hpp"

namespace scalebench::cli {
namespace {

using Action = std::function<int()>;
// Declares a subcommand's options on `app` and returns what to run once they are parsed.
using Configure = std::function<Action(CLI::App& app, std::ostream& out, std::ostream& err)>;

struct Entry {
  Subcommand command;
  Configure configure;
};

void add_database_option(CLI::App& app, std::string& database) {
  app.add_option("--db", database, "Results database (SQLite)")->capture_default_str();
}

// Which stored instances a report, figure or statistic uses (plotting/instances.hpp).
void add_instance_options(CLI::App& app, std::optional<std::string>& experiment,
                          std::vector<std::int64_t>& instances, bool& pool) {
  app.add_option("--experiment", experiment,
                 "Experiment name (default: the latest instance's); its latest instance is used");
  app.add_option("--instance", instances,
                 "An instance id (experiments.id); repeat to pool instances with identical specs");
  app.add_flag("--pool", pool,
               "Pool every instance of the experiment (refused unless their specs are identical)");
}

// What report, plot and stats share: what one sample is (docs/statistics.md, "Unit of analysis").
void add_unit_option(CLI::App& app, std::string& unit) {
  app.add_option("--unit", unit,
                 "What one sample is: run (its mean epoch time), nested (epochs within runs, a "
                 "mixed model) or epoch (as the reference papers; p-values too small)")
      ->check(CLI::IsMember(plotting::unit_names()))
      ->capture_default_str();
}

// What report, plot, stats, compare and model share: the warm-up left out (docs/metrics.md).
void add_skip_epochs_option(CLI::App& app, std::optional<int>& skip_epochs) {
  app.add_option("--skip-epochs", skip_epochs,
                 "Leave out each run's first N epochs (warm-up) [the experiment file's "
                 "\"warmup_epochs\", else 0]")
      ->transform(integer_in(0, 100000));
}

// What report and plot share: the database, the instances, the base group.
template <typename Command>
void add_report_source_options(CLI::App& app, Command& options) {
  add_database_option(app, options.database);
  add_instance_options(app, options.experiment, options.instances, options.pool);
  app.add_option("--base", options.base, "Base condition label for Tukey and speed-up");
  add_unit_option(app, options.unit);
  add_skip_epochs_option(app, options.skip_epochs);
}

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {{"run", "run every cell of an experiment matrix and store the measurements"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<RunCommand>();
         app.add_option("experiment", options->experiment_path, "Experiment file (JSON)")
             ->required();
         add_database_option(app, options->database);
         app.add_flag("--dry-run", options->dry_run, "Print the runs without starting them");
         app.add_flag("--quiet", options->quiet,
                      "No progress on stderr (the current epoch, the matrix's time left)");
         app.add_flag(
             "--resume", options->resume,
             "Continue the latest instance of the same spec: run only its cells not yet ok "
             "(refused while another run of it is going on)");
         app.add_option("--retries", options->retries,
                        "Re-run a cell whose run is not ok up to N times (every attempt is stored)")
             ->transform(integer_in(0, 1000))
             ->capture_default_str();
         app.add_option("--max-runs", options->max_runs,
                        "Refuse a matrix of more runs than this (a guard against typos)")
             ->transform(integer_in(1, 1'000'000'000))
             ->capture_default_str();
         return [options, &out, &err] { return run_command(*options, out, err); };
       }},
      {{"report",
        "print the paper-style table: epoch times, Tukey p, images/s, ANOVA (--by: per factor)"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<ReportCommand>();
         add_report_source_options(app, *options);
         app.add_option("--format", options->format, "Output format")
             ->check(CLI::IsMember(plotting::exporter_names()))
             ->capture_default_str();
         app.add_option("--output,-o", options->output, "Write to this file instead of stdout");
         app.add_option("--by", options->by,
                        "A factor of the experiment file: one column block per level, rows by np, "
                        "and the two-way ANOVA factor x np (HorovodRunner's Table 2)");
         return [options, &out, &err] { return report_command(*options, out, err); };
       }},
      {{"plot",
        "render the scaling figure (epoch time and images/s against np) as SVG, PNG and PDF"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<PlotCommand>();
         add_report_source_options(app, *options);
         app.add_option("--output,-o", options->output_prefix,
                        "Path prefix for .svg/.png/.pdf/.dat/.gp (default: next to the database)");
         app.add_option("--by", options->by,
                        "A factor of the experiment file: efficiency, epoch time and images/s "
                        "against np, one curve per level (HorovodRunner's Figure 2)");
         app.add_flag("--model", options->model,
                      "The scaling model's figure: measured points, predicted curve and its band "
                      "(scalebench model --plot; more settings there)");
         app.add_option("--fit-max-np", options->fit_max_np,
                        "With --model: fit on np <= N, show larger measured np as held out")
             ->transform(integer_in(1, 1 << 20));
         app.add_option("--max-np", options->max_np, "With --model: the largest np drawn")
             ->transform(integer_in(1, 1 << 20))
             ->capture_default_str();
         return [options, &out, &err] { return plot_command(*options, out, err); };
       }},
      {{"query", "run one read-only SQL statement on the results database"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<QueryCommand>();
         auto limits = std::make_shared<db::QueryLimits>();
         app.add_option("sql", options->sql, "One SELECT (or other read-only) statement")
             ->required();
         add_database_option(app, options->database);
         app.add_flag("--csv", options->csv,
                      "CSV instead of an aligned table (control characters escaped as \\x1b "
                      "when stdout is a terminal, kept as they are otherwise)");
         app.add_option("--timeout", limits->timeout_seconds, "Stop the query after SECONDS")
             ->transform(real_in({0, 1e9, true, false}))
             ->capture_default_str();
         app.add_option("--max-rows", limits->max_rows, "Refuse a result of more than N rows")
             ->transform(integer_in(1, 1'000'000'000'000'000))
             ->capture_default_str();
         app.add_option("--max-memory", limits->max_memory_bytes,
                        "Memory for SQLite and the result, e.g. 512MiB, 2GiB (default 1GiB)")
             ->transform(size_in(1, std::uint64_t{1} << 50));
         return
             [options, limits, &out, &err] { return query_command(*options, *limits, out, err); };
       }},
      {{"cluster", "many nodes on one machine: network namespaces on shaped links (root)"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<ClusterCommand>();
         app.add_option("action", options->action, "up, status or down")
             ->required()
             ->check(CLI::IsMember({"up", "status", "down"}));
         app.add_option("--name", options->name, "The cluster's name: 1-6 of a-z, 0-9")
             ->capture_default_str();
         app.add_option("--nodes", options->nodes, "Nodes (network namespaces), 1-64")
             ->transform(integer_in(1, 64))
             ->capture_default_str();
         app.add_option("--slots", options->slots, "Ranks per node in the hostfile")
             ->transform(integer_in(1, 1024))
             ->capture_default_str();
         app.add_option("--rate", options->rate_mbit, "Each link's rate in Mbit/s (netem)")
             ->transform(real_in({0, 1e6, true, false}));
         app.add_option("--delay", options->delay_ms, "One-way node-to-node delay in ms")
             ->transform(real_in({0, 1e4, false, false}));
         app.add_option("--link", options->link,
                        "A network preset (10gbe, edr-ib, ...: `scalebench model --network`), "
                        "its bandwidth / --link-scale and latency x --link-scale")
             ->excludes("--rate", "--delay");
         app.add_option("--link-scale", options->link_scale,
                        "How much slower than the preset the links run (2 cores cannot drive "
                        "10 Gbit/s through tc)")
             ->transform(real_in({1, 1e6, false, false}))
             ->capture_default_str();
         app.add_option("--dir", options->directory,
                        "Where its state, hostfile, env and rsh-agent go (default "
                        "/run/scalebench/cluster-NAME)");
         app.add_option("--subnet", options->subnet, "The nodes are 10.SUBNET.0.K/24")
             ->transform(integer_in(0, 255))
             ->capture_default_str();
         app.add_flag("--slurm", options->slurm,
                      "Also a Slurm: munged and slurmctld here, slurmd -N nodeK on each node, "
                      "--slots CPUs each; SLURM_CONF in the env file");
         return [options, &out, &err] { return cluster_command(*options, out, err); };
       }},
      {{"merge", "the runs of side files (or other databases) into a results database"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<MergeCommand>();
         app.add_option("sources", options->sources,
                        "Side files (<db>.unsaved/*.db) or other scalebench databases")
             ->required();
         app.add_option("--into", options->into, "The results database that takes their runs")
             ->required();
         app.add_flag("--skip-duplicates", options->skip_duplicates,
                      "Skip runs the database already holds instead of refusing the file");
         return [options, &out, &err] { return merge_command(*options, out, err); };
       }},
      {{"compare",
        "two experiments, instances or databases cell by cell: ratio, CI, Welch test, verdict"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<CompareCommand>();
         app.add_option("--db", options->database, "The baseline's results database")
             ->capture_default_str();
         app.add_option("--experiment", options->experiment,
                        "The baseline experiment (default: the latest instance's)");
         app.add_option("--instance", options->instances,
                        "The baseline's instance ids (repeat to pool identical specs)");
         app.add_option("--to-db", options->to_database,
                        "The candidate's database (default: --db)");
         app.add_option("--to-experiment", options->to_experiment,
                        "The candidate experiment (default: --experiment)");
         app.add_option("--to-instance", options->to_instances, "The candidate's instance ids");
         add_skip_epochs_option(app, options->skip_epochs);
         app.add_option("--threshold", options->threshold_percent,
                        "Slower or faster only beyond PCT percent; 'no difference' is marked 'CI "
                        "within +-PCT' when the whole interval is inside")
             ->transform(real_in({0, 100, false, true}))
             ->capture_default_str();
         app.add_option("--confidence", options->confidence, "Of the intervals and the tests")
             ->transform(real_in({0, 1, true, true}))
             ->capture_default_str();
         app.add_option("--fail-if-slower", options->fail_if_slower_percent,
                        "Exit 3 when a cell is significantly slower by PCT percent or more (a CI "
                        "gate); exit 4 when a compared cell has too few runs to test")
             ->transform(real_in({0, 1e6}));
         app.add_flag("--allow-too-few", options->allow_too_few,
                      "With --fail-if-slower: let cells with too few runs to test pass (exit 0 "
                      "instead of 4)");
         app.add_flag("--json", options->json, "JSON output");
         return [options, &out, &err] { return compare_command(*options, out, err); };
       }},
      {{"model",
        "fit the scaling model to training and allreduce runs (or presets) and predict to np 1024"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<ModelCommand>();
         auto& plan = options->plan;
         add_database_option(app, options->database);
         add_instance_options(app, options->experiment, options->instances, options->pool);
         app.add_option("--allreduce-experiment", options->allreduce_experiment,
                        "Allreduce benchmark runs from this experiment (default: --experiment's)");
         app.add_option("--condition", plan.condition, "Training runs of this condition only");
         app.add_option("--only", options->only, "Training runs with FACTOR=LEVEL (repeatable)");
         app.add_option("--transport", plan.transport,
                        "Allreduce rows of this transport (mpi, nccl)");
         app.add_option("--network", plan.network,
                        "Network preset (--list-networks): between nodes with measured allreduce "
                        "runs, else the link the model uses");
         app.add_option("--intra-network", plan.intra_network,
                        "Preset inside a node (default: --network), without allreduce runs");
         app.add_option("--ranks-per-node", plan.ranks_per_node,
                        "Ranks per node of the planned machine (default: the largest measured np)")
             ->transform(integer_in(1, 1 << 20));
         app.add_option("--parameters", plan.parameters,
                        "Model parameters (default: the trainer header's)")
             ->transform(real_in({0, 1e15, true, false}));
         app.add_option("--batch-size", plan.batch_size,
                        "Per-rank batch (default: the trainer header's)")
             ->transform(integer_in(1, 1 << 30));
         app.add_option("--fusion-mb", plan.fusion_mb,
                        "Fusion bucket in MiB (default: header's, 64)")
             ->transform(real_in({0, 1e9, true, false}));
         app.add_option("--overlap", plan.overlap,
                        "Share of the allreduce hidden behind backward, when not fitted [0]")
             ->transform(real_in({0, 1}));
         app.add_option("--overhead-ms", plan.overhead_ms, "Per-step overhead, presets only [0]")
             ->transform(real_in({0, 1e9}));
         app.add_option("--images-per-second", plan.images_per_second,
                        "One rank's training throughput: set the model up from presets, no runs")
             ->transform(real_in({0, 1e12, true, false}));
         app.add_option("--train-images", plan.train_images,
                        "Images per epoch, all ranks (default: the runs'); gives epoch times")
             ->transform(integer_in(1, 1'000'000'000'000'000));
         app.add_flag("--weak-scaling", plan.weak_scaling,
                      "Presets only: --train-images is per rank");
         app.add_option("--fit-max-np", plan.fit_max_np,
                        "Fit on training runs with np <= N; larger measured np are held out")
             ->transform(integer_in(1, 1 << 20));
         app.add_option("--allreduce-max-np", plan.allreduce_max_np,
                        "Fit the network on allreduce runs with np <= N (a strict hold-out)")
             ->transform(integer_in(2, 1 << 20));
         app.add_option("--allreduce-window", plan.allreduce_window,
                        "Fit the network on sizes within this factor of the message a step sends "
                        "(0: all)")
             ->transform(real_in({0, 1e9}));
         app.add_flag("--network-per-np", plan.network_per_np,
                      "Fit latency and bandwidth at each measured np (ranks sharing cores)");
         app.add_option("--max-np", plan.max_np, "Largest np of the table")
             ->transform(integer_in(1, 1 << 20))
             ->capture_default_str();
         app.add_option("--bootstrap", plan.bootstrap, "Bootstrap refits for the intervals")
             ->transform(integer_in(0, 100000))
             ->capture_default_str();
         app.add_option("--seed", plan.seed, "Of the bootstrap")
             ->transform(unsigned_in(0, UINT64_MAX))
             ->capture_default_str();
         app.add_option("--level", plan.level, "Of the intervals")
             ->transform(real_in({0, 1, true, true}))
             ->capture_default_str();
         app.add_option("--skip-epochs", plan.skip_epochs,
                        "Warm-up epochs left out of each run (when it has more) [the experiment "
                        "file's \"warmup_epochs\", else 1]")
             ->transform(integer_in(0, 100000));
         app.add_option("--format", options->format, "markdown, csv, json, latex or html")
             ->capture_default_str();
         app.add_option("-o,--output", options->output, "Write the table to FILE");
         app.add_option("--plot", options->plot_prefix,
                        "Draw predicted curves with their band and the measured points to "
                        "PREFIX.svg/.png/.pdf");
         app.add_flag("--published", options->published,
                      "Print the validation against published curves (Horovod, ResNet-50)");
         app.add_flag("--list-networks", options->list_networks,
                      "Print the network presets with their sources");
         return [options, &out, &err] { return model_command(*options, out, err); };
       }},
      {{"stats", "ANOVA, Tukey and more on a CSV file, the results database or summary statistics"},
       [](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
         auto options = std::make_shared<StatsCommand>();
         app.add_option("--csv", options->csv, "Raw observations, one per line (with a header)");
         app.add_option("--summary", options->summary,
                        "Summary statistics: columns group,n,mean,sd");
         app.add_option("--db", options->database, "Results database (epoch times of ok runs)");
         add_instance_options(app, options->experiment, options->instances, options->pool);
         add_skip_epochs_option(app, options->skip_epochs);
         app.add_option("--response", options->response,
                        "With --csv: the response column; with --db: epoch_seconds (default) or "
                        "log_images_per_second (per run: speed-ups become differences)");
         app.add_option("--factor", options->factors,
                        "Factor column, once or twice (with --db: group, condition, launcher, np)");
         app.add_option("--ss-type", options->ss_type, "Sums of squares for two factors: 1, 2 or 3")
             ->transform(integer_in(1, 3))
             ->capture_default_str();
         app.add_option(
             "--only", options->only,
             "With --db: keep the runs whose FACTOR has LEVEL (FACTOR=LEVEL, repeatable; "
             "e.g. condition=mpirun for the part of a design crossed with np)");
         app.add_flag("--no-interaction", options->no_interaction,
                      "Two factors: fit the additive model A + B (for a design with an empty cell, "
                      "e.g. the single condition at np=2)");
         add_unit_option(app, options->unit);
         app.add_option("--confidence", options->confidence, "Family-wise confidence level")
             ->transform(real_in({0, 1, true, true}))
             ->capture_default_str();
         app.add_option("--base", options->base, "Only the post-hoc pairs against this level");
         app.add_flag("--json", options->json,
                      "JSON output (a stable contract, docs/statistics.md)");
         app.add_flag("--contrast", options->contrast,
                      "Two factors of two levels: the interaction contrast with its confidence "
                      "interval (on log_images_per_second: the ratio of the two speed-ups)");
         return [options, &out, &err] { return stats_command(*options, out, err); };
       }},
      {{"version", "print the version"},
       [](CLI::App&, std::ostream& out, std::ostream&) -> Action {
         return [&out] {
           fmt::print(out, "scalebench {} (database schema {})\n", SCALEBENCH_VERSION,
                      db::kSchemaVersion);
           return 0;
         };
       }},
  };
  return entries;
}

void print_usage(std::ostream& out) {
  fmt::print(out, "usage: scalebench COMMAND [OPTIONS]\n\ncommands:\n");
  for (const auto& entry : table())
    fmt::print(out, "  {:<9} {}\n", entry.command.name, entry.command.summary);
  fmt::print(out, "  {:<9} {}\n\n`scalebench COMMAND --help` lists a command's options.\n", "help",
             "print this list");
}

}  // namespace

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> list = [] {
    std::vector<Subcommand> out;
    for (const auto& entry : table()) out.push_back(entry.command);
    return out;
  }();
  return list;
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    print_usage(args.empty() ? err : out);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") return run_cli({"version"}, out, err);

  const auto& entries = table();
  const auto entry = std::find_if(entries.begin(), entries.end(),
                                  [&](const Entry& e) { return e.command.name == args[0]; });
  if (entry == entries.end()) {
    std::vector<std::string> names;
    for (const auto& e : entries) names.emplace_back(e.command.name);
    names.emplace_back("help");
    const auto suggestion = util::closest_match(args[0], names);
    fmt::print(err, "scalebench: unknown command '{}'{}; `scalebench help` lists them\n", args[0],
               suggestion ? fmt::format(", did you mean '{}'?", *suggestion) : "");
    return 2;
  }

  CLI::App app(std::string(entry->command.summary), "scalebench " + args[0]);
  const Action action = entry->configure(app, out, err);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 wants them reversed
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& error) {
    fmt::print(err, "scalebench {}: {}\n", args[0], error.what());
    return 2;
  }

  int status = 0;
  try {
    status = action();
  } catch (const std::exception& error) {
    // Every typed error derives from scalebench::Error (util/error.hpp); the standard library's
    // own (a filesystem error, say) read the same: one line, exit 1, never std::terminate.
    fmt::print(err, "scalebench: error: {}\n", error.what());
    status = 1;
  }
  // A table that never reached its reader is a failure (`report > /dev/full`): the stream
  // stays failed after the first lost write, and the final flush reports what was buffered.
  errno = 0;
  out.flush();
  if (out.fail()) {
    const int lost = errno;
    fmt::print(err, "scalebench {}: error: cannot write to standard output{}\n", args[0],
               lost != 0 ? fmt::format(": {}", std::strerror(lost)) : std::string());
    return status != 0 ? status : 1;
  }
  return status;
}

}  // namespace scalebench::cli
