// Internal to plotting/: the pieces every figure's gnuplot script is made of (quoting, terminals,
// the np axis, the panels and the shared legend). Not a public header.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "plotting/figure.hpp"

namespace scalebench::plotting::detail {

// A value for a data file: the exact number, or NaN (gnuplot skips it).
std::string value_or_missing(const std::optional<double>& value);

// A gnuplot string expression that reads back as `text` whatever it holds: single-quoted
// strings, in which gnuplot 5.4 interprets nothing (no backslash escapes, no `backquote` command,
// no @macro), joined by "'" where `text` has a quote: it'll -> 'it'."'".'ll' (gnuplot's own ''
// escape is misread at a string's start, so `'x` and `a''b` broke the script). A line break
// would end the command and a NUL the line, so control characters become spaces.
std::string gnuplot_string(std::string_view text);

// Text for a `#` comment line: a line break would end the comment and a trailing backslash would
// continue it onto the next line (gnuplot joins such lines before it reads the comment).
std::string one_line(std::string_view text);

// The style with its defaults filled in and checked (ReportError outside the limits).
struct Canvas {
  double width_in = 7;
  double height_in = 2.8;
  double font_pt = 9;
  bool title = true;
  double em() const { return font_pt / 72.0; }  // one text line's height, in inches
};
// `legend_rows` lengthens the default height (a line per row past two).
Canvas canvas_of(const FigureStyle& style, int legend_rows = 0);

// The layout of a figure's panels: as many side by side as are at least kMinPanelInches wide,
// the rest in rows below (a column-wide figure of three panels: two rows).
inline constexpr double kMinPanelInches = 1.6;
struct PanelGrid {
  int columns = 1;
  int rows = 1;
};
PanelGrid panel_grid(double width_in, std::size_t panels);
// The canvas of a figure of panels on `grid` with a legend of `legend_rows` rows: the style's
// height, or by default one that gives each panel's plot area a height near half its width
// (1.2 to 1.8 in) and the legend, titles and axes their own room.
Canvas grid_canvas(const FigureStyle& style, int legend_rows, const PanelGrid& grid);

// A series' marker: filled at its means, open (the same shape) at its runs. Launched series take
// circle, square, triangle, inverted triangle, pentagon, then +, x and *; the diamond is the
// single-process series'.
struct Marker {
  int filled = 7;
  int open = 6;
};
Marker series_marker(std::size_t index);
inline constexpr Marker kSingleMarker{13, 12};

// The loop header that renders the same plot as SVG, PNG and PDF at the canvas's size: the PDF in
// inches with text in points, the PNG at kPngDpi, the SVG at kSvgDpi. Closed by "}\n".
std::string terminals(const Canvas& canvas);

// The script's opening after its title line: how to re-render, the data file, the colours.
std::string script_preamble(const FigureFiles& files);

// The np axis: log2 beyond a 4x span, ticks at the np values run, half a step of room either side
// (a step: the smallest gap between np values, in log2 units on a log axis).
struct NpAxis {
  bool log = false;
  double step = 1;  // in np (linear) or log2(np) units
  std::string commands;
  // The x position `steps` of a step right (negative: left) of np.
  double shifted(double np, double steps) const;
};
NpAxis np_axis(const std::set<int>& nps, std::string_view xlabel);

// One panel of a figure: its title (dropped without titles), y label, set-up and plot elements.
struct Panel {
  std::string title;
  std::string ylabel;
  std::string setup;               // further `set` commands, one per line, indented
  std::vector<std::string> plots;  // plot elements
};

// One entry of the legend shared by all panels: how its sample is drawn (a keyentry's style,
// e.g. "with linespoints lt 1 pt 7") and its text.
struct LegendEntry {
  std::string sample;
  std::string text;
};

// How many rows the legend takes at the canvas's width (entries fill rows left to right).
int legend_rows(const std::vector<LegendEntry>& legend, const FigureStyle& style);

// The whole multiplot after the preamble and axis commands: the terminals loop, the figure's title
// (when titled), the panels side by side over the same height (each with the axis' commands), and
// one legend under them all.
// Panels are laid out by panel_grid at the style's width.
// Throws ReportError when the canvas is too small for the legend and the axes.
std::string multiplot(const FigureFiles& files, const FigureStyle& style, const std::string& title,
                      const NpAxis& axis, const std::vector<Panel>& panels,
                      const std::vector<LegendEntry>& legend);

// Writes the data and the script, runs gnuplot in a private directory beside the targets and
// renames the results over them (the guarantees of plot_scaling, figure.hpp). The style is
// checked (canvas_of) before anything is written.
FigureFiles render(const std::string& data,
                   const std::function<std::string(const FigureFiles&)>& script,
                   const std::filesystem::path& output_prefix);

}  // namespace scalebench::plotting::detail
