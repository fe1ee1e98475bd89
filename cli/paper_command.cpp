#include "cli/paper_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <ostream>
#include <set>

#include "cli/numeric_flags.hpp"
#include "cli/paper_sections.hpp"
#include "db/database.hpp"
#include "report/data/load_runs.hpp"
#include "report/export/column_format.hpp"
#include "report/export/paper.hpp"
#include "util/text.hpp"

namespace scalebench::cli {

namespace fs = std::filesystem;

void declare_paper_options(CLI::App& app, PaperCommand& options) {
  add_database_option(app, options.database);
  app.add_option("--experiment,-e", options.experiments,
                 "An experiment's name (repeatable: one section each; default: the latest)");
  app.add_option("--by", options.by,
                 "A factor of the experiment files: also the side-by-side table (Table 2) and "
                 "the figure by level");
  add_unit_option(app, options.unit);
  app.add_option("--base", options.base, "Base condition label for Tukey and speed-up");
  add_skip_epochs_option(app, options.skip_epochs);
  app.add_option(
         "--pairwise", options.pairwise,
         "The tables' p-values and letters: auto, tukey or games-howell (report --pairwise)")
      ->check(CLI::IsMember(report::pairwise_choices()))
      ->capture_default_str();
  add_label_option(app, options.labels);
  app.add_flag("--model", options.model,
               "The scaling model's tables and figure too (scalebench model; one series per "
               "experiment)");
  app.add_option("--fit-max-np", options.fit_max_np,
                 "With --model: fit on np <= N, show larger measured np as held out")
      ->transform(integer_in(1, 1 << 20));
  app.add_option("--max-np", options.max_np,
                 "With --model: the largest np of the predicted table and figure (default: 4 x "
                 "the largest measured np, as a power of two)")
      ->transform(integer_in(1, 1 << 20));
  add_subset_options(app, options.only, options.condition);
  app.add_flag("--network-per-np", options.network_per_np,
               "With --model: latency and bandwidth at each measured np (scalebench model)");
  app.add_option("--allreduce-window", options.allreduce_window,
                 "With --model: the allreduce sizes within this factor of a step's message")
      ->transform(real_in({0, 1e9}));
  app.add_option("--digits", options.digits,
                 "Significant figures of each table column's smallest value, which sets the "
                 "column's decimals (default: per column; report --digits)")
      ->transform(integer_in(1, 15));
  app.add_option("--decimals", options.decimals,
                 "COLUMN=N (repeatable): exactly N decimals in that column of the tables "
                 "(report --decimals)");
  app.add_option("--columns", options.columns,
                 "main.tex's layout: 1 (an article, 6.5 in of text) or 2 (two columns of 3.4 in)")
      ->check(CLI::IsMember({1, 2}))
      ->capture_default_str();
  app.add_option("--figure-width", options.figure_width,
                 "The figures' width, drawn and included at it: column (3.4 in), page (the text "
                 "width) or inches (default: page in one column, column in two)");
  app.add_option("--size", options.size,
                 "The figures' size WIDTHxHEIGHT in inches instead (included at that size)");
  app.add_option("--font-size", options.font_size,
                 "The figures' text size in points (default: 9; 8 at a column's width)")
      ->check(CLI::Range(plotting::kMinFontPt, plotting::kMaxFontPt));
  app.add_flag("--log-y", options.log_y, "The figures' epoch time and throughput on log axes");
  app.add_option("--title", options.title, "The document's title");
  app.add_option("--output,-o", options.output,
                 "The directory to write (default: paper-<experiment> next to the database)");
}

namespace {

// The command line that makes this bundle again, every argument quoted for a POSIX shell.
std::string command_line(const PaperCommand& o, const std::vector<std::string>& experiments) {
  std::vector<std::string> words = {"scalebench", "paper", "--db", o.database};
  const auto add = [&](std::string option, const std::string& value) {
    words.push_back(std::move(option));
    words.push_back(value);
  };
  for (const auto& e : experiments) add("--experiment", e);
  if (o.by) add("--by", *o.by);
  add("--unit", o.unit);
  if (o.base) add("--base", *o.base);
  if (o.skip_epochs) add("--skip-epochs", std::to_string(*o.skip_epochs));
  if (o.pairwise != "auto") add("--pairwise", o.pairwise);
  for (const auto& label : o.labels) add("--label", label);
  if (o.model) words.push_back("--model");
  if (o.fit_max_np) add("--fit-max-np", std::to_string(*o.fit_max_np));
  if (o.max_np) add("--max-np", std::to_string(*o.max_np));
  if (o.condition) add("--condition", *o.condition);
  for (const auto& only : o.only) add("--only", only);
  if (o.network_per_np) words.push_back("--network-per-np");
  if (o.allreduce_window > 0) add("--allreduce-window", fmt::format("{:g}", o.allreduce_window));
  if (o.digits) add("--digits", std::to_string(*o.digits));
  for (const auto& decimals : o.decimals) add("--decimals", decimals);
  if (o.columns != 1) add("--columns", std::to_string(o.columns));
  if (o.figure_width) add("--figure-width", *o.figure_width);
  if (o.size) add("--size", *o.size);
  if (o.font_size) add("--font-size", fmt::format("{:g}", *o.font_size));
  if (o.log_y) words.push_back("--log-y");
  if (o.title) add("--title", *o.title);
  return util::shell_join(words);
}

}  // namespace

int paper_command(const PaperCommand& options, std::ostream& out, std::ostream&) {
  if (options.title)
    if (const auto bad = util::first_invalid_utf8(*options.title))
      throw report::ReportError(
          fmt::format("--title: not valid UTF-8 at byte {} (0x{:02x}); the title is UTF-8 text",
                      *bad, static_cast<unsigned char>((*options.title)[*bad])));
  if (options.output && options.output->empty())
    throw report::ReportError("-o '': an empty directory name (give the directory to write)");
  report::check_unit(options.unit);
  paper_figure_style(options);  // a malformed --size or --figure-width fails before any work
  report::RunFilter::parse(options.only, options.condition);
  if (!options.model && (options.fit_max_np || options.max_np || options.network_per_np ||
                         options.allreduce_window > 0))
    throw report::ReportError(
        "--fit-max-np, --max-np, --network-per-np and --allreduce-window set up the scaling "
        "model: add --model");
  parse_labels(options.labels);              // --label is checked before the database is read
  report::parse_decimals(options.decimals);  // and --decimals
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  std::vector<std::string> experiments = options.experiments;
  if (experiments.empty()) experiments.push_back(report::select_instances(database, {}).experiment);
  std::set<std::string> stems;
  for (const auto& experiment : experiments)
    if (!stems.insert(report::paper_file_stem(experiment)).second)
      throw report::ReportError(fmt::format(
          "--experiment '{}': given twice, or its file name ({}) is another experiment's",
          experiment, report::paper_file_stem(experiment)));
  const fs::path dir = options.output
                           ? fs::path(*options.output)
                           : fs::path(options.database).parent_path() /
                                 ("paper-" + report::paper_file_stem(experiments.front()));
  report::PaperDocument document;
  document.columns = options.columns;
  document.made_by = {fmt::format("scalebench {} paper", SCALEBENCH_VERSION),
                      command_line(options, experiments)};
  std::vector<report::PaperFigureJob> figures;
  for (const auto& experiment : experiments)
    document.sections.push_back(
        paper_section(database, options, experiment, document, figures, out));
  // The title names the experiments as the sections do (their labels).
  std::vector<std::string> headings;
  for (const auto& section : document.sections) headings.push_back(section.heading);
  document.title = options.title.value_or(fmt::format("Scaling of {}", fmt::join(headings, ", ")));
  // Every part is computed: now the files, each checked before any is written.
  report::write_paper_bundle(dir, document, figures, options.database);
  fmt::print(out, "paper: {}\n  main.tex (lualatex main.tex), index.html, tables/, figures/\n",
             dir.string());
  return 0;
}

}  // namespace scalebench::cli
