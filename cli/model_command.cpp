#include "cli/model_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "db/database.hpp"
#include "plotting/figure.hpp"
#include "report/analysis/report.hpp"
#include "report/export/output_file.hpp"
#include "scaling/plan_load.hpp"
#include "scaling/plan_output.hpp"

namespace scalebench::cli {

namespace fs = std::filesystem;

namespace {

void emit(const ModelCommand& options, const std::string& text, std::ostream& out) {
  if (!options.output) {
    out << text;
    return;
  }
  const fs::path path = *options.output;
  report::refuse_database_output(path, options.database);
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  report::write_file_replacing(path, text);
  fmt::print(out, "table: {}\n", path.string());
}

}  // namespace

void declare_model_options(CLI::App& app, ModelCommand& options) {
  auto& plan = options.plan;
  add_database_option(app, options.database);
  add_instance_options(app, options.experiment, options.instances, options.pool);
  app.add_option("--allreduce-experiment", options.allreduce_experiment,
                 "Allreduce benchmark runs from this experiment (default: --experiment's)");
  app.add_option("--condition", plan.condition, "Training runs of this condition only");
  app.add_option("--only", options.only, "Training runs with FACTOR=LEVEL (repeatable)");
  app.add_option("--transport", plan.transport, "Allreduce rows of this transport (mpi, nccl)");
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
  app.add_option("--batch-size", plan.batch_size, "Per-rank batch (default: the trainer header's)")
      ->transform(integer_in(1, 1 << 30));
  app.add_option("--fusion-mb", plan.fusion_mb, "Fusion bucket in MiB (default: header's, 64)")
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
  app.add_flag("--weak-scaling", plan.weak_scaling, "Presets only: --train-images is per rank");
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
                 "file's \"warmup_epochs\", else 0]")
      ->transform(integer_in(0, 100000));
  app.add_option("--format", options.format, "markdown, csv, json, latex or html")
      ->capture_default_str();
  app.add_option("-o,--output", options.output, "Write the table to FILE");
  app.add_option("--plot", options.plot_prefix,
                 "Draw predicted curves with their band and the measured points to "
                 "PREFIX.svg/.png/.pdf");
  app.add_flag("--published", options.published,
               "Print the validation against published curves (Horovod, ResNet-50)");
  app.add_flag("--list-networks", options.list_networks,
               "Print the network presets with their sources");
}

int model_command(const ModelCommand& options, std::ostream& out, std::ostream&) {
  if (options.list_networks) {
    out << scaling::network_presets_table();
    return 0;
  }
  if (options.published) {
    out << scaling::published_validation_table();
    return 0;
  }
  scaling::ScalingPlanOptions plan = options.plan;
  plan.only = parse_only_filters(options.only);
  scaling::require_scaling_plan_format(options.format);  // before any work
  // --images-per-second sets the model up from presets alone; otherwise it is fitted to runs.
  const bool measured = !options.plan.images_per_second;
  if (!measured && (options.experiment || !options.instances.empty() || options.pool))
    throw report::ReportError(
        "--images-per-second sets the model up from presets: drop it to fit --experiment's runs");
  std::optional<db::Database> database;
  if (measured) {
    database.emplace(db::Database::open(options.database, db::OpenMode::ReadOnly));
    plan.training = report::InstanceQuery{options.experiment, options.instances, options.pool};
    if (options.allreduce_experiment)
      plan.allreduce = report::InstanceQuery{options.allreduce_experiment, {}, false};
  }
  const auto result = database ? scaling::build_scaling_plan(*database, plan)
                               : scaling::build_scaling_plan(nullptr, plan);
  std::optional<std::string> svg;
  if (options.plot_prefix) {
    const auto planned = plotting::figure_files(*options.plot_prefix);
    for (const auto& file : {planned.svg, planned.png, planned.pdf, planned.data, planned.script})
      report::refuse_database_output(file, options.database);
    const auto files = plotting::plot_scaling_plan(result, *options.plot_prefix);
    fmt::print(out, "figure: {}\n", files.svg.string());
    if (options.format == "html") {
      std::ifstream in(files.svg, std::ios::binary);
      svg.emplace(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  emit(options, scaling::format_scaling_plan(result, options.format, svg), out);
  return 0;
}

}  // namespace scalebench::cli
