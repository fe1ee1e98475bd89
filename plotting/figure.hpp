// The scaling figures: epoch time, throughput and efficiency against np, rendered by gnuplot to
// SVG, PNG and PDF. The data file and the gnuplot script are kept next to the images so users can
// edit and re-run them (`cd <dir> && gnuplot <name>.gp`). What is drawn: docs/report.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "report/analysis/report.hpp"
#include "scaling/plan.hpp"

namespace scalebench::plotting {

struct FigureFiles {
  std::filesystem::path svg;
  std::filesystem::path png;
  std::filesystem::path pdf;
  std::filesystem::path data;    // gnuplot data blocks, one per series
  std::filesystem::path script;  // the gnuplot script that renders both images
};

// How a figure is set for print (plot --size, --font-size, --no-title). Default-constructed: 7 in
// wide (a page's text width), 2.8 in high plus a text line per legend row past two, 9 pt text,
// titled. The PDF is that size in inches with text of that size in points; the PNG is the same
// figure at kPngDpi, the SVG at kSvgDpi (CSS pixels), so all three look alike.
struct FigureStyle {
  std::optional<double> width_in = std::nullopt;
  std::optional<double> height_in = std::nullopt;
  double font_pt = 9;
  bool title = true;   // false: no figure title and no panel titles (the paper's caption says it)
  bool log_y = false;  // epoch time and throughput on log axes (plot --log-y)
};
inline constexpr int kPngDpi = 150;
inline constexpr int kSvgDpi = 96;
// The limits a style is checked against (plot_* throw ReportError outside them).
inline constexpr double kMinFigureInches = 1, kMaxFigureInches = 40;
inline constexpr double kMinFontPt = 4, kMaxFontPt = 36;
// "WxH" in inches ("3.5x2.6"): {width, height}. Throws ReportError naming the text when it is not
// two positive numbers within the limits joined by 'x'.
std::pair<double, double> parse_figure_size(std::string_view text);
// --figure-width: "column" (kColumnInches, a two-column paper's column), "page" (`page_in`, the
// text width) or a width in inches within the figure limits. Throws ReportError naming the text.
inline constexpr double kColumnInches = 3.4, kPageInches = 7.0;
double parse_figure_width(std::string_view text, double page_in);
// The style of --size (parsed as parse_figure_size; absent: the figure's default), --font-size and
// the title flag.
FigureStyle figure_style(const std::optional<std::string>& size, double font_pt, bool title);

// prefix + ".svg", ".png", ".pdf", ".dat", ".gp" (the prefix's own dots are kept: "out/run-1.2").
FigureFiles figure_files(const std::filesystem::path& output_prefix);

// The main figure (plot): mean epoch time and images/s against np, one series per condition,
// launcher and factor levels. Error bars, everywhere: the confidence interval of the mean under the
// table's unit (mean_ci_*, images_ci_*); each run a small circle beside its mean.
// The text of the data file and of the script for `files` (pure; plot_scaling writes them).
std::string scaling_data(const report::ReportTable& table);
std::string scaling_script(const report::ReportTable& table, const FigureFiles& files,
                           const FigureStyle& style = {});
// One sentence for a caption: what is drawn, what the bars and circles are.
std::string scaling_caption(const report::ReportTable& table, const FigureStyle& style = {});

// Writes the data file and script (creating the prefix's directory), runs gnuplot on the script and
// returns the five paths. Everything is made in a private directory beside the targets and renamed
// over them, so a symlink planted at one of the names is replaced, never written through.
// Throws report::ReportError when the table has no rows, when gnuplot is missing, when it fails
// (the message carries gnuplot's stderr), or when the style is out of its limits.
FigureFiles plot_scaling(const report::ReportTable& table,
                         const std::filesystem::path& output_prefix, const FigureStyle& style = {});

// Figure 2 of HorovodRunner's study (plot --by FACTOR): scaling efficiency (when the study has
// more than one np), mean epoch time and images/s against np, one curve per level of the factor
// (and launched condition), the same error bars as plot_scaling (efficiency_ci_* for efficiency;
// none on the reference, 100% by definition), the runs, the linear-scaling lines; single-process
// rows as diamonds. Same files and guarantees as plot_scaling.
std::string factor_scaling_data(const report::FactorReport& report);
std::string factor_scaling_script(const report::FactorReport& report, const FigureFiles& files,
                                  const FigureStyle& style = {});
std::string factor_scaling_caption(const report::FactorReport& report,
                                   const FigureStyle& style = {});
FigureFiles plot_factor_scaling(const report::FactorReport& report,
                                const std::filesystem::path& output_prefix,
                                const FigureStyle& style = {});

// Where `scalebench plot` writes the figure of `experiment`: <database's folder>/<name>-scaling
// by default; `output` names a prefix, or a folder (ending in '/' or existing) to put it in.
std::filesystem::path figure_prefix(const std::string& database_path, const std::string& experiment,
                                    const std::optional<std::string>& output);

// The scaling model's figure (scalebench model --plot, plot --model): efficiency and images/s
// against np (log2): the prediction, its band, each measured run (a small open circle) and the
// measured means with their t interval as bars (those held out marked apart). Files and guarantees
// as plot_scaling; the style sets size, font and titles.
// Its caption in the paper's words: what the band, the markers and the bars are.
std::string scaling_plan_caption(const scaling::ScalingPlan& plan, const std::string& experiment);
std::string scaling_plan_data(const scaling::ScalingPlan& plan);
std::string scaling_plan_script(const scaling::ScalingPlan& plan, const FigureFiles& files,
                                const FigureStyle& style = {});
FigureFiles plot_scaling_plan(const scaling::ScalingPlan& plan, const std::filesystem::path& prefix,
                              const FigureStyle& style = {});

}  // namespace scalebench::plotting
