#include "cli/report_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>

#include "db/database.hpp"
#include "plotting/figure.hpp"
#include "report/export/column_format.hpp"
#include "report/export/exporters.hpp"
#include "report/export/output_file.hpp"

namespace scalebench::cli {

namespace fs = std::filesystem;

void declare_report_options(CLI::App& app, ReportCommand& options) {
  add_report_source_options(app, options);
  app.add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember(report::exporter_names()))
      ->capture_default_str();
  app.add_option("--output,-o", options.output, "Write to this file instead of stdout");
  app.add_option("--by", options.by,
                 "A factor of the experiment file: one column block per level, rows by np, "
                 "and the two-way ANOVA factor x np (HorovodRunner's Table 2)");
  app.add_option("--digits", options.digits,
                 "Markdown, LaTeX, HTML: significant figures of each column's smallest value, "
                 "which sets the column's decimals (default: 3 for times and images/s, 2 decimals "
                 "for speed-ups, 1 for percentages)")
      ->check(CLI::Range(1, 15));
  app.add_option("--decimals", options.decimals,
                 "COLUMN=N (repeatable): exactly N decimals in that column (epoch_time, sd, "
                 "images_per_second, speedup, efficiency, test_accuracy), before --digits");
  app.add_option("--pairwise", options.pairwise,
                 "The test of the p-values and letters: auto (Tukey, or Games-Howell where the "
                 "groups' variances differ more than 4-fold), tukey (pooled, as the reference "
                 "papers) or games-howell")
      ->check(CLI::IsMember(report::pairwise_choices()))
      ->capture_default_str();
}

int report_command(const ReportCommand& options, std::ostream& out, std::ostream&) {
  if ((options.digits || !options.decimals.empty()) &&
      (options.format == "csv" || options.format == "json"))
    throw report::ReportError(fmt::format(
        "--digits and --decimals apply to markdown, latex and html, not to {} (its numbers are "
        "exact)",
        options.format));
  // Fails fast on a bad format or --decimals.
  const auto exporter = report::make_exporter(
      options.format, {options.digits, report::parse_decimals(options.decimals)});
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  if (options.output) {  // before any work
    report::refuse_database_output(*options.output, options.database);
    report::check_output_target(*options.output);
  }
  const report::InstanceQuery query{options.experiment, options.instances, options.pool,
                                    options.skip_epochs};
  // The HTML page embeds the figure: rendered into a private directory, read back as SVG. Without
  // gnuplot the page says why it has none.
  const auto with_figure = [&](auto report, auto plot) {
    if (options.format != "html") return report;
    try {
      const report::PrivateTempDir dir(fs::temp_directory_path());
      const auto files = plot(report, dir.path() / "figure");
      std::ifstream in(files.svg, std::ios::binary);
      report.figure_svg.assign(std::istreambuf_iterator<char>(in), {});
    } catch (const std::exception& error) {
      report.notes.push_back(fmt::format("No figure: {}", error.what()));
    }
    return report;
  };
  const auto text =
      options.by
          ? exporter->render(with_figure(
                load_factor_report(database, query, options.base, *options.by, options.unit,
                                   options.labels, options.pairwise,
                                   report::RunFilter::parse(options.only, options.condition)),
                [](const auto& r, const auto& p) { return plotting::plot_factor_scaling(r, p); }))
          : exporter->render(with_figure(
                load_report(database, query, options.base, options.unit, options.labels,
                            options.pairwise,
                            report::RunFilter::parse(options.only, options.condition)),
                [](const auto& r, const auto& p) { return plotting::plot_scaling(r, p); }));
  if (!options.output) {
    out << text;
    return 0;
  }
  const fs::path path = *options.output;
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  report::write_file_replacing(path, text);  // never through a symlink planted at `path`
  fmt::print(out, "table: {}\n", path.string());
  return 0;
}

}  // namespace scalebench::cli
