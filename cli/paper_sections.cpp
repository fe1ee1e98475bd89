#include "cli/paper_sections.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
#include <memory>
#include <ostream>

#include "report/analysis/report_assembly.hpp"
#include "report/data/load_runs.hpp"
#include "report/export/column_format.hpp"
#include "report/export/exporters.hpp"
#include "scaling/plan_load.hpp"
#include "scaling/plan_output.hpp"

namespace scalebench::cli {

namespace fs = std::filesystem;

plotting::FigureStyle paper_figure_style(const PaperCommand& o) {
  if (o.size && o.figure_width)
    throw report::ReportError("--size and --figure-width both set the figures' width: give one");
  const double page = o.columns == 2 ? report::kTwoColumnTextInches : report::kOneColumnTextInches;
  double width = o.columns == 2 ? plotting::kColumnInches : page;
  if (o.figure_width) width = plotting::parse_figure_width(*o.figure_width, page);
  auto style = plotting::figure_style(o.size, 9, false);
  if (!o.size) style.width_in = width;
  // Text in print is 7 to 9 pt: a column's figure at 8, a page's at 9, unless told.
  style.font_pt = o.font_size.value_or(*style.width_in < 4.5 ? 8 : 9);
  style.log_y = o.log_y;
  return style;
}

namespace {

// A figure of the bundle: its files as plotting/ names them, drawn later by `plot`.
template <typename Plot>
report::PaperFigureJob figure_job(std::size_t section, std::string name, std::string caption,
                                  double width_in, Plot plot) {
  std::vector<std::string> files;
  const auto planned = plotting::figure_files(fs::path("figures") / name);
  for (const auto& file : {planned.svg, planned.png, planned.pdf, planned.data, planned.script})
    files.push_back(file.generic_string());
  return {section,
          std::move(name),
          std::move(caption),
          std::move(files),
          [plot](const fs::path& prefix) { return plot(prefix).svg; },
          width_in};
}

}  // namespace

report::PaperSection paper_section(const db::Database& database, const PaperCommand& o,
                                   const std::string& experiment, report::PaperDocument& document,
                                   std::vector<report::PaperFigureJob>& figures,
                                   std::ostream& out) {
  const report::InstanceQuery query{experiment, {}, false, o.skip_epochs};
  const auto stem = report::paper_file_stem(experiment);
  const std::size_t index = document.sections.size();
  report::PaperSection section;
  section.heading = experiment;
  section.label = "sec:" + stem;
  const report::ExporterOptions numbers{o.digits, report::parse_decimals(o.decimals)};
  const report::LatexExporter latex(numbers);
  const report::HtmlExporter html(numbers);
  const auto style = paper_figure_style(o);
  const auto subset = report::RunFilter::parse(o.only, o.condition);
  const auto optional_part = [&](const char* what, const auto& add) {
    try {
      add();
    } catch (const std::exception& error) {
      if (o.experiments.size() < 2) throw;
      fmt::print(out, "paper: {} left out of {}: {}\n", what, experiment, error.what());
    }
  };
  const auto table = std::make_shared<const report::ReportTable>(
      load_report(database, query, o.base, o.unit, o.labels, o.pairwise, subset));
  section.heading = table->labels.experiment(experiment);
  section.setup = table->setup;
  section.tables.push_back({stem, latex.render(*table), html.render(*table)});
  figures.push_back(figure_job(
      index, stem, plotting::scaling_caption(*table, style), *style.width_in,
      [table, style](auto& prefix) { return plotting::plot_scaling(*table, prefix, style); }));
  document.provenance.emplace_back(section.heading, table->provenance);
  if (o.by)
    optional_part("--by", [&] {
      const auto by = std::make_shared<const report::FactorReport>(
          load_factor_report(database, query, report::base_without_factor(o.base, *o.by), *o.by,
                             o.unit, o.labels, o.pairwise, subset));
      const auto by_stem = stem + "-by-" + report::paper_file_stem(*o.by);
      section.tables.push_back({by_stem, latex.render(*by), html.render(*by)});
      figures.push_back(figure_job(
          index, by_stem, plotting::factor_scaling_caption(*by, style), *style.width_in,
          [by, style](auto& prefix) { return plotting::plot_factor_scaling(*by, prefix, style); }));
    });
  if (o.model)
    optional_part("--model", [&] {
      scaling::ScalingPlanOptions plan_options;
      plan_options.training = query;
      plan_options.fit_max_np = o.fit_max_np;
      if (o.max_np)
        plan_options.max_np = *o.max_np;
      else
        plan_options.max_np_from_runs = true;  // 4 x the largest measured np
      plan_options.condition = o.condition;
      plan_options.only = parse_only_filters(o.only);
      plan_options.network_per_np = o.network_per_np;
      plan_options.allreduce_window = o.allreduce_window;
      const auto plan = std::make_shared<const scaling::ScalingPlan>(
          scaling::build_scaling_plan(database, plan_options));
      const auto model_stem = stem + "-model";
      section.tables.push_back({model_stem,
                                scaling::format_scaling_plan(*plan, "latex", std::nullopt, true),
                                scaling::format_scaling_plan(*plan, "html", std::nullopt, true)});
      figures.push_back(figure_job(index, model_stem,
                                   plotting::scaling_plan_caption(*plan, section.heading),
                                   *style.width_in, [plan, style](auto& prefix) {
                                     return plotting::plot_scaling_plan(*plan, prefix, style);
                                   }));
    });
  return section;
}

}  // namespace scalebench::cli
