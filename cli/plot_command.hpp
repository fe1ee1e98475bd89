// `scalebench plot`: the scaling figure of an experiment's stored runs (plotting/figure.hpp), or
// with --model the scaling model's.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "plotting/figure.hpp"

namespace scalebench::cli {

struct PlotCommand : ReportSourceOptions {
  std::optional<std::string> output_prefix;  // default: results/<experiment>-scaling
  std::optional<std::string> by;             // a factor: one curve per level (Figure 2)
  // The scaling model's figure instead (scalebench model --plot with these settings).
  bool model = false;
  std::optional<int> fit_max_np;
  int max_np = 1024;
  // For print: --size WxH (inches) or --figure-width, --font-size PT, --no-title, --log-y.
  std::optional<std::string> size;
  std::optional<std::string> figure_width;  // column, page or inches (the height follows)
  bool log_y = false;
  double font_size = plotting::FigureStyle{}.font_pt;
  bool no_title = false;
};
// The figure style the options ask for (plotting::FigureStyle). Throws report::ReportError on a
// malformed --size.
plotting::FigureStyle figure_style_of(const PlotCommand& options);
void declare_plot_options(CLI::App& app, PlotCommand& options);
int plot_command(const PlotCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
