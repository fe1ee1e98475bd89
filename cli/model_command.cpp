#include "cli/model_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>

#include "db/database.hpp"
#include "plotting/figure.hpp"
#include "plotting/output_file.hpp"
#include "plotting/report.hpp"
#include "plotting/scaling_plan_output.hpp"
#include "stats/network_presets.hpp"
#include "stats/scaling_validation.hpp"

namespace scalebench::cli {

namespace fs = std::filesystem;

namespace {

std::string networks_table() {
  std::string out =
      "| preset | what | latency (us) | bandwidth (GB/s) | source |\n|---|---|---:|---:|---|\n";
  for (const auto& p : stats::network_presets())
    out += fmt::format("| {} | {} | {:g} | {:g} | {} |\n", p.name, p.description,
                       p.link.alpha * 1e6, p.link.bandwidth * 1e-9, p.source);
  return out;
}

std::string published_table() {
  std::string out =
      "| study | model | GPUs | network | published | predicted | error | calibrated | error | "
      "calibration (other cases) |\n|---|---|---:|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& row : stats::validate_published()) {
    const auto& c = *row.published;
    const std::string calibration =
        row.calibration.overhead > 0
            ? fmt::format("overhead {:.1f} ms", row.calibration.overhead * 1e3)
            : fmt::format("overlap {:.2f}", row.calibration.overlap);
    out += fmt::format(
        "| {} | {} | {} | {} x {} ({}) | {:.1f}% | {:.1f}% | {:+.1f} | {:.1f}% | {:+.1f} | {} |\n",
        c.study, c.model, c.gpus, c.gpus / c.gpus_per_node, c.gpus_per_node, c.inter_network,
        100 * c.published_efficiency, 100 * row.predicted,
        100 * (row.predicted - c.published_efficiency), 100 * row.calibrated,
        100 * (row.calibrated - c.published_efficiency), calibration);
  }
  out +=
      "\nPredicted: the network alone (no overlap, no overhead). Calibrated: one parameter from "
      "the study's other cases (leave one out). Inputs and sources: docs/scaling-model.md.\n";
  return out;
}

void emit(const ModelCommand& options, const std::string& text, std::ostream& out) {
  if (!options.output) {
    out << text;
    return;
  }
  const fs::path path = *options.output;
  plotting::refuse_database_output(path, options.database);
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  plotting::write_file_replacing(path, text);
  fmt::print(out, "table: {}\n", path.string());
}

}  // namespace

int model_command(const ModelCommand& options, std::ostream& out, std::ostream&) {
  if (options.list_networks) {
    out << networks_table();
    return 0;
  }
  if (options.published) {
    out << published_table();
    return 0;
  }
  plotting::ScalingPlanOptions plan = options.plan;
  for (const auto& filter : options.only) {
    const auto eq = filter.find('=');
    if (eq == std::string::npos || eq == 0)
      throw plotting::ReportError(fmt::format("--only '{}' is not FACTOR=LEVEL", filter));
    plan.only.emplace_back(filter.substr(0, eq), filter.substr(eq + 1));
  }
  plotting::require_scaling_plan_format(options.format);  // before any work
  // --images-per-second sets the model up from presets alone; otherwise it is fitted to runs.
  const bool measured = !options.plan.images_per_second;
  if (!measured && (options.experiment || !options.instances.empty() || options.pool))
    throw plotting::ReportError(
        "--images-per-second sets the model up from presets: drop it to fit --experiment's runs");
  std::optional<db::Database> database;
  if (measured) {
    database.emplace(db::Database::open(options.database, db::OpenMode::ReadOnly));
    plan.training = plotting::InstanceQuery{options.experiment, options.instances, options.pool};
    if (options.allreduce_experiment)
      plan.allreduce = plotting::InstanceQuery{options.allreduce_experiment, {}, false};
  }
  const auto result = plotting::build_scaling_plan(database ? &*database : nullptr, plan);
  std::optional<std::string> svg;
  if (options.plot_prefix) {
    const auto planned = plotting::figure_files(*options.plot_prefix);
    for (const auto& file : {planned.svg, planned.png, planned.pdf, planned.data, planned.script})
      plotting::refuse_database_output(file, options.database);
    const auto files = plotting::plot_scaling_plan(result, *options.plot_prefix);
    fmt::print(out, "figure: {}\n", files.svg.string());
    if (options.format == "html") {
      std::ifstream in(files.svg, std::ios::binary);
      svg.emplace(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  emit(options, plotting::format_scaling_plan(result, options.format, svg), out);
  return 0;
}

}  // namespace scalebench::cli
