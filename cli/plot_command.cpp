#include "cli/plot_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "db/database.hpp"
#include "plotting/figure.hpp"
#include "report/data/load_runs.hpp"
#include "report/export/output_file.hpp"
#include "scaling/plan_load.hpp"
#include "scaling/plan_output.hpp"

namespace scalebench::cli {

void declare_plot_options(CLI::App& app, PlotCommand& options) {
  add_report_source_options(app, options);
  app.add_option("--output,-o", options.output_prefix,
                 "Path prefix for .svg/.png/.pdf/.dat/.gp (default: next to the database)");
  app.add_option("--by", options.by,
                 "A factor of the experiment file: efficiency, epoch time and images/s "
                 "against np, one curve per level (HorovodRunner's Figure 2)");
  app.add_flag("--model", options.model,
               "The scaling model's figure: measured points, predicted curve and its band "
               "(scalebench model --plot; more settings there)");
  app.add_option("--fit-max-np", options.fit_max_np,
                 "With --model: fit on np <= N, show larger measured np as held out")
      ->transform(integer_in(1, 1 << 20));
  app.add_option("--max-np", options.max_np, "With --model: the largest np drawn")
      ->transform(integer_in(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--figure-width", options.figure_width,
                 "The figure's width: column (3.4 in, a two-column paper's column), page (7 in) "
                 "or inches; its height follows from the panels and the legend");
  app.add_flag("--log-y", options.log_y, "Epoch time and throughput on log axes");
  app.add_option("--size", options.size,
                 "The figure's size WIDTHxHEIGHT in inches: 3.5x2.6 for a column, 7x2.8 for a "
                 "page (default: 7 wide, 2.8 high plus the legend's extra rows; PNG at 150 dpi, "
                 "SVG at 96)");
  app.add_option("--font-size", options.font_size, "The text size in points (in the PDF)")
      ->check(CLI::Range(plotting::kMinFontPt, plotting::kMaxFontPt))
      ->capture_default_str();
  app.add_flag("--no-title", options.no_title,
               "No figure title and no panel titles (for a paper, whose caption says it)");
}

plotting::FigureStyle figure_style_of(const PlotCommand& options) {
  if (options.size && options.figure_width)
    throw report::ReportError("--size and --figure-width both set the width: give one");
  auto style = plotting::figure_style(options.size, options.font_size, !options.no_title);
  if (options.figure_width)
    style.width_in = plotting::parse_figure_width(*options.figure_width, plotting::kPageInches);
  style.log_y = options.log_y;
  return style;
}

int plot_command(const PlotCommand& options, std::ostream& out, std::ostream&) {
  const auto style = figure_style_of(options);  // a malformed --size fails before any work
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  const report::InstanceQuery query{options.experiment, options.instances, options.pool,
                                    options.skip_epochs};
  if (options.model) {
    scaling::ScalingPlanOptions plan;
    plan.training = query;
    plan.fit_max_np = options.fit_max_np;
    plan.max_np = options.max_np;
    plan.condition = options.condition;
    plan.only = parse_only_filters(options.only);
    const auto experiment = report::select_instances(database, query).experiment;
    const auto prefix =
        plotting::figure_prefix(options.database, experiment + "-model", options.output_prefix);
    const auto planned = plotting::figure_files(prefix);
    for (const auto& file : {planned.svg, planned.png, planned.pdf, planned.data, planned.script})
      report::refuse_database_output(file, options.database);
    const auto files =
        plotting::plot_scaling_plan(scaling::build_scaling_plan(database, plan), prefix, style);
    fmt::print(out, "figure: {}\nfigure: {}\nfigure: {}\n", files.png.string(), files.svg.string(),
               files.pdf.string());
    return 0;
  }
  // Only what the chosen figure needs is loaded: --by fails early on an unknown factor.
  std::optional<report::ReportTable> table;
  std::optional<report::FactorReport> by_factor;
  const auto subset = report::RunFilter::parse(options.only, options.condition);
  if (options.by)
    by_factor = load_factor_report(database, query, options.base, *options.by, options.unit,
                                   options.labels, "auto", subset);
  else
    table =
        load_report(database, query, options.base, options.unit, options.labels, "auto", subset);
  const auto& experiment = by_factor ? by_factor->experiment : table->experiment;
  const auto prefix = plotting::figure_prefix(
      options.database, by_factor ? experiment + "-by-" + *options.by : experiment,
      options.output_prefix);
  const auto planned = plotting::figure_files(prefix);
  for (const auto& file : {planned.svg, planned.png, planned.pdf, planned.data, planned.script})
    report::refuse_database_output(file, options.database);
  const auto files = by_factor ? plotting::plot_factor_scaling(*by_factor, prefix, style)
                               : plotting::plot_scaling(*table, prefix, style);
  fmt::print(out, "figure: {}\nfigure: {}\nfigure: {}\n", files.png.string(), files.svg.string(),
             files.pdf.string());
  return 0;
}

}  // namespace scalebench::cli
