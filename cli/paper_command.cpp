#include "cli/paper_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <ostream>
#include <set>

#include "cli/numeric_flags.hpp"
#include "db/database.hpp"
#include "plotting/figure.hpp"
#include "report/data/instances.hpp"
#include "report/export/exporters.hpp"
#include "report/export/output_file.hpp"
#include "report/export/paper.hpp"
#include "scaling/plan.hpp"
#include "scaling/plan_output.hpp"

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
  app.add_option("--label", options.labels,
                 "KEY=TEXT: what readers see for a condition, factor, factor=level, np or column "
                 "(repeatable; over the experiment files' \"labels\")");
  app.add_flag("--model", options.model,
               "The scaling model's tables and figure too (scalebench model; one series per "
               "experiment)");
  app.add_option("--fit-max-np", options.fit_max_np,
                 "With --model: fit on np <= N, show larger measured np as held out")
      ->transform(integer_in(1, 1 << 20));
  app.add_option("--digits", options.digits,
                 "Significant figures of the LaTeX tables' measured numbers (default: per column)")
      ->transform(integer_in(1, 15));
  app.add_option("--size", options.size,
                 "The figures' size WIDTHxHEIGHT in inches (default: 6.5 wide, main.tex's text "
                 "width, so that their text keeps --font-size)");
  app.add_option("--font-size", options.font_size, "The figures' text size in points")
      ->check(CLI::Range(plotting::kMinFontPt, plotting::kMaxFontPt))
      ->capture_default_str();
  app.add_option("--title", options.title, "The document's title");
  app.add_option("--output,-o", options.output,
                 "The directory to write (default: paper-<experiment> next to the database)");
}

namespace {

// A file stem LaTeX's \includegraphics and \input take: letters, digits and '-' (an experiment
// name may hold spaces, dots and '=').
std::string file_stem(std::string_view name) {
  std::string out;
  for (const char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out.empty() ? std::string("experiment") : out;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The figures at main.tex's text width (6.5 in: letter or A4 less geometry's margins) with no
// title: the caption says what the figure is.
plotting::FigureStyle paper_style(const PaperCommand& o) {
  plotting::FigureStyle style;
  style.width_in = 6.5;
  if (o.size) {
    const auto [width, height] = plotting::parse_figure_size(*o.size);
    style.width_in = width;
    style.height_in = height;
  }
  style.font_pt = o.font_size;
  style.title = false;
  return style;
}

// A figure to render once every table is computed: nothing is written before then.
struct PendingFigure {
  std::size_t section = 0;
  std::string name;
  std::string caption;
  std::function<plotting::FigureFiles(const fs::path&)> plot;
};

// The command line that makes this bundle again.
std::string command_line(const PaperCommand& o, const std::vector<std::string>& experiments) {
  std::string out = fmt::format("scalebench paper --db {}", o.database);
  for (const auto& e : experiments) out += fmt::format(" --experiment '{}'", e);
  if (o.by) out += " --by " + *o.by;
  out += " --unit " + o.unit;
  if (o.base) out += fmt::format(" --base '{}'", *o.base);
  if (o.skip_epochs) out += fmt::format(" --skip-epochs {}", *o.skip_epochs);
  for (const auto& label : o.labels) out += fmt::format(" --label '{}'", label);
  if (o.model) out += " --model";
  if (o.fit_max_np) out += fmt::format(" --fit-max-np {}", *o.fit_max_np);
  if (o.digits) out += fmt::format(" --digits {}", *o.digits);
  if (o.size) out += fmt::format(" --size {}", *o.size);
  out += fmt::format(" --font-size {:g}", o.font_size);
  return out;
}

// The parts of one experiment's section; figures are queued. With several experiments, a --by
// factor or a model that one of them lacks is left out of that one's section, said on `out`; with
// one experiment it is an error.
report::PaperSection section_of(const db::Database& database, const PaperCommand& o,
                                const std::string& experiment, report::PaperDocument& document,
                                std::vector<PendingFigure>& figures, std::ostream& out) {
  const report::InstanceQuery query{experiment, {}, false, o.skip_epochs};
  const auto stem = file_stem(experiment);
  const std::size_t index = document.sections.size();
  report::PaperSection section{experiment, "sec:" + stem, {}, {}};
  const report::LatexExporter latex(report::ExporterOptions{o.digits});
  const report::HtmlExporter html;
  const auto style = paper_style(o);
  const auto optional_part = [&](const char* what, const auto& add) {
    try {
      add();
    } catch (const std::exception& error) {
      if (o.experiments.size() < 2) throw;
      fmt::print(out, "paper: {} left out of {}: {}\n", what, experiment, error.what());
    }
  };
  const auto table = std::make_shared<const report::ReportTable>(
      load_report(database, query, o.base, o.unit, o.labels));
  section.tables.push_back({stem, latex.render(*table), html.render(*table)});
  figures.push_back({index, stem, plotting::scaling_caption(*table), [table, style](auto& prefix) {
                       return plotting::plot_scaling(*table, prefix, style);
                     }});
  document.provenance.emplace_back(experiment, table->provenance);
  if (o.by)
    optional_part("--by", [&] {
      const auto by = std::make_shared<const report::FactorReport>(
          load_factor_report(database, query, o.base, *o.by, o.unit, o.labels));
      const auto by_stem = stem + "-by-" + file_stem(*o.by);
      section.tables.push_back({by_stem, latex.render(*by), html.render(*by)});
      figures.push_back(
          {index, by_stem, plotting::factor_scaling_caption(*by), [by, style](auto& prefix) {
             return plotting::plot_factor_scaling(*by, prefix, style);
           }});
    });
  if (o.model)
    optional_part("--model", [&] {
      scaling::ScalingPlanOptions plan_options;
      plan_options.training = query;
      plan_options.fit_max_np = o.fit_max_np;
      const auto plan = std::make_shared<const scaling::ScalingPlan>(
          scaling::build_scaling_plan(&database, plan_options));
      const auto model_stem = stem + "-model";
      section.tables.push_back({model_stem, scaling::format_scaling_plan(*plan, "latex"),
                                scaling::format_scaling_plan(*plan, "html")});
      figures.push_back(
          {index, model_stem,
           fmt::format("The scaling model of {}: the prediction with its band and the measured "
                       "points (held-out ones marked apart).",
                       experiment),
           [plan, style](auto& prefix) {
             return plotting::plot_scaling_plan(*plan, prefix, style);
           }});
    });
  return section;
}

}  // namespace

int paper_command(const PaperCommand& options, std::ostream& out, std::ostream&) {
  report::check_unit(options.unit);
  paper_style(options);  // a malformed --size fails before any work
  {                      // --label is checked before the database is read
    report::Labels labels;
    for (const auto& label : options.labels) report::add_label_argument(labels, label);
  }
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  std::vector<std::string> experiments = options.experiments;
  if (experiments.empty()) experiments.push_back(report::select_instances(database, {}).experiment);
  std::set<std::string> stems;
  for (const auto& experiment : experiments)
    if (!stems.insert(file_stem(experiment)).second)
      throw report::ReportError(fmt::format(
          "--experiment '{}': given twice, or its file name ({}) is another experiment's",
          experiment, file_stem(experiment)));
  const fs::path dir = options.output ? fs::path(*options.output)
                                      : fs::path(options.database).parent_path() /
                                            ("paper-" + file_stem(experiments.front()));
  report::PaperDocument document;
  document.title = options.title.value_or(
      experiments.size() == 1 ? fmt::format("Scaling of {}", experiments.front())
                              : fmt::format("Scaling of {}", fmt::join(experiments, ", ")));
  document.made_by = {fmt::format("scalebench {} paper", SCALEBENCH_VERSION),
                      command_line(options, experiments)};
  std::vector<PendingFigure> figures;
  for (const auto& experiment : experiments)
    document.sections.push_back(section_of(database, options, experiment, document, figures, out));
  // Every part is computed: now the files, each checked before any is written.
  for (const auto& path : report::paper_files(dir, document))
    report::refuse_database_output(path, options.database);
  for (const auto& pending : figures) {
    const auto planned = plotting::figure_files(dir / "figures" / pending.name);
    for (const auto& file : {planned.svg, planned.png, planned.pdf, planned.data, planned.script})
      report::refuse_database_output(file, options.database);
  }
  for (const auto& pending : figures) {
    const auto files = pending.plot(dir / "figures" / pending.name);
    document.sections[pending.section].figures.push_back(
        {pending.name, pending.caption, read_text(files.svg)});
  }
  report::write_paper(dir, document);
  fmt::print(out, "paper: {}\n  main.tex (pdflatex main.tex), index.html, tables/, figures/\n",
             dir.string());
  return 0;
}

}  // namespace scalebench::cli
