#include "plotting/gnuplot_script.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <tuple>

#include "report/error.hpp"
#include "report/export/format.hpp"

namespace scalebench::plotting {

using report::ReportError;

std::pair<double, double> parse_figure_size(std::string_view text) {
  const auto fail = [&] {
    return ReportError(fmt::format(
        "--size '{}': expected WIDTHxHEIGHT in inches, each from {:g} to {:g} (e.g. 3.5x2.6 for a "
        "column, 7x2.8 for a page)",
        text, kMinFigureInches, kMaxFigureInches));
  };
  const auto x = text.find_first_of("xX");
  if (x == std::string_view::npos) throw fail();
  const auto number = [&](std::string_view part) {
    const std::string s(part);
    if (s.empty() || s.find_first_not_of("0123456789.") != std::string::npos) throw fail();
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(s, &used);
    } catch (const std::exception&) {
      throw fail();
    }
    if (used != s.size() || !(value >= kMinFigureInches && value <= kMaxFigureInches)) throw fail();
    return value;
  };
  return {number(text.substr(0, x)), number(text.substr(x + 1))};
}

double parse_figure_width(std::string_view text, double page_in) {
  if (text == "column") return kColumnInches;
  if (text == "page") return page_in;
  const std::string s(text);
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || s.find_first_not_of("0123456789.") != std::string::npos ||
      !(value >= kMinFigureInches && value <= kMaxFigureInches))
    throw ReportError(fmt::format(
        "--figure-width '{}': expected column ({:g} in), page ({:g} in) or a width in inches from "
        "{:g} to {:g}",
        text, kColumnInches, page_in, kMinFigureInches, kMaxFigureInches));
  return value;
}

FigureStyle figure_style(const std::optional<std::string>& size, double font_pt, bool title) {
  FigureStyle style;
  if (size) std::tie(style.width_in, style.height_in) = parse_figure_size(*size);
  style.font_pt = font_pt;
  style.title = title;
  return style;
}

namespace detail {

std::string value_or_missing(const std::optional<double>& value) {
  return value ? report::format_exact(*value) : "NaN";
}

namespace {

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

// Characters as a reader counts them: UTF-8 continuation bytes are not characters.
std::size_t text_width(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// One legend column's width in text lines (em): the sample, the gaps and the text at about 0.55 em
// a character (DejaVu Sans, gnuplot's "sans"; a little more than it takes).
double legend_column_em(const std::vector<LegendEntry>& legend) {
  std::size_t widest = 0;
  for (const auto& entry : legend) widest = std::max(widest, text_width(entry.text));
  return 0.55 * static_cast<double>(widest) + 4.5;
}

int legend_columns(const std::vector<LegendEntry>& legend, double width_in, double em) {
  if (legend.empty()) return 1;
  const int fit = static_cast<int>(std::floor(0.96 * width_in / (legend_column_em(legend) * em)));
  return std::clamp(fit, 1, static_cast<int>(legend.size()));
}

// The vertical layout in text lines (em).
constexpr double kTitleLines = 2.1;       // the figure's title, from the top
constexpr double kTopPadLines = 0.8;      // above the panels without a title
constexpr double kPanelTitleLines = 2.1;  // a panel's title, above its frame
constexpr double kXAxisLines = 3.7;       // the x tic labels and the x label, under the frame
constexpr double kLegendRowLines = 1.3;   // one legend row
constexpr double kLegendPadLines = 0.5;   // under the legend

}  // namespace

std::string gnuplot_string(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'')
      out += "'.\"'\".'";  // the quote as a double-quoted string of its own, concatenated
    else
      out += is_control(c) ? ' ' : c;
  }
  return out + "'";
}

std::string one_line(std::string_view text) {
  std::string out(text);
  std::replace_if(out.begin(), out.end(), is_control, ' ');
  if (!out.empty() && out.back() == '\\') out += ' ';
  return out;
}

Canvas canvas_of(const FigureStyle& style, int legend_rows) {
  Canvas canvas;
  canvas.font_pt = style.font_pt;
  canvas.title = style.title;
  if (!(style.font_pt >= kMinFontPt && style.font_pt <= kMaxFontPt))
    throw ReportError(fmt::format("--font-size {:g}: expected {:g} to {:g} points", style.font_pt,
                                  kMinFontPt, kMaxFontPt));
  for (const auto& side : {style.width_in, style.height_in})
    if (side && !(*side >= kMinFigureInches && *side <= kMaxFigureInches))
      throw ReportError(fmt::format("--size: {:g} in is outside {:g} to {:g} in", *side,
                                    kMinFigureInches, kMaxFigureInches));
  canvas.width_in = style.width_in.value_or(7.0);
  canvas.height_in =
      style.height_in.value_or(2.8 + std::max(0, legend_rows - 2) * kLegendRowLines * canvas.em());
  return canvas;
}

PanelGrid panel_grid(double width_in, std::size_t panels) {
  const int count = static_cast<int>(std::max<std::size_t>(panels, 1));
  const int fit = static_cast<int>(std::floor(width_in / kMinPanelInches));
  PanelGrid grid;
  grid.columns = std::clamp(fit, 1, count);
  grid.rows = (count + grid.columns - 1) / grid.columns;
  return grid;
}

Canvas grid_canvas(const FigureStyle& style, int legend_rows, const PanelGrid& grid) {
  Canvas canvas = canvas_of(style, legend_rows);
  if (style.height_in) return canvas;
  const double em = canvas.em();
  const double plot_in = std::clamp(0.45 * canvas.width_in / grid.columns, 1.2, 1.8);
  const double above_panel = (canvas.title ? kPanelTitleLines : kTopPadLines) * em;
  const double legend =
      legend_rows > 0 ? (legend_rows * kLegendRowLines + kLegendPadLines) * em : 0;
  canvas.height_in = (canvas.title ? kTitleLines * em : 0) + legend +
                     grid.rows * (above_panel + plot_in + kXAxisLines * em);
  return canvas;
}

Marker series_marker(std::size_t index) {
  constexpr Marker kMarkers[] = {{7, 6},   {5, 4}, {9, 8}, {11, 10},
                                 {15, 14}, {1, 1}, {2, 2}, {3, 3}};
  return kMarkers[index % std::size(kMarkers)];
}

std::string terminals(const Canvas& c) {
  // gnuplot's cairo terminals print a font size as 4/3 of its points (96 dpi against 72):
  // pdfcairo's fontscale 0.75 makes "sans,9" 9 pt on the page, pngcairo's dpi/96 makes it 9 pt at
  // kPngDpi. Lines and points are scaled to match (a PDF line of width 1 is 0.5 pt, a PDF point of
  // size 1 about 4 pt across), so that the PNG is the PDF at kPngDpi and the SVG the PDF at kSvgDpi
  // (its points a little smaller: the svg terminal has no point scale).
  std::string out;
  out += "do for [format in 'svg png pdf'] {\n";
  out += "  if (format eq 'svg') {\n";
  out += fmt::format(
      "    set terminal svg size {},{} dynamic enhanced font 'sans,{:.4g}' linewidth {:.4g} "
      "background rgb 'white'\n",
      std::lround(c.width_in * kSvgDpi), std::lround(c.height_in * kSvgDpi),
      c.font_pt * kSvgDpi / 72.0, kSvgDpi / 144.0);
  // The svg terminal sets a key's lines further apart than the cairo ones (the same rows need less
  // spacing) and its x label lower (the key starts half a line lower).
  out += "    key_spacing = 0.85\n    key_drop = 0.5\n";
  out += "  } else { if (format eq 'png') {\n";
  out += "    key_spacing = 1.1\n    key_drop = 0\n";
  out += fmt::format(
      "    set terminal pngcairo size {},{} enhanced font 'sans,{:.4g}' fontscale {:.4g} "
      "linewidth {:.4g} pointscale {:.4g} background rgb 'white'\n",
      std::lround(c.width_in * kPngDpi), std::lround(c.height_in * kPngDpi), c.font_pt,
      kPngDpi / 96.0, kPngDpi / 144.0, kPngDpi / 72.0);
  out += "  } else {\n";
  out += "    key_spacing = 1.1\n    key_drop = 0\n";
  out += fmt::format(
      "    set terminal pdfcairo size {:.3g}in,{:.3g}in enhanced font 'sans,{:.4g}' fontscale 0.75 "
      "linewidth 1 pointscale 1 background rgb 'white'\n",
      c.width_in, c.height_in, c.font_pt);
  out += "  } }\n";
  return out;
}

std::string script_preamble(const FigureFiles& files) {
  std::string out;
  out += fmt::format("# Re-render after editing: cd <this directory> && gnuplot {}\n",
                     files.script.filename().string());
  out += "set encoding utf8\n";
  out += fmt::format("data = {}\n", gnuplot_string(files.data.filename().string()));
  // Okabe and Ito's palette (Color Universal Design, 2008), told apart with every common colour
  // vision deficiency; its yellow, too pale on white, is left out. Each series has a marker of its
  // own as well (series_marker), so that no series is told by colour alone.
  constexpr std::string_view kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                           "#E69F00", "#56B4E9", "#000000"};
  for (std::size_t i = 0; i < std::size(kColours); ++i)
    out += fmt::format("set linetype {} lc rgb '{}' lw 1.6 pt 7 ps 0.7\n", i + 1, kColours[i]);
  out += fmt::format("set linetype cycle {}\n", std::size(kColours));
  // A bar only where both ends are known: gnuplot would draw a NaN end at the panel's edge.
  out += "bar(y, low, high) = (low == low && high == high) ? y : NaN\n";
  // A bar's lower end no lower than the axis' start (0, or a log axis' floor): an interval of a
  // quantity that cannot be negative is cut there, never at the far side of the panel.
  out += "floor_at(low, start) = (low == low && low < start) ? start : low\n";
  return out;
}

double NpAxis::shifted(double np, double steps) const {
  return log ? np * std::exp2(steps * step) : np + steps * step;
}

NpAxis np_axis(const std::set<int>& nps, std::string_view xlabel) {
  const int min_np = *nps.begin();
  const int max_np = *nps.rbegin();
  NpAxis axis;
  axis.log = max_np > 4 * min_np;
  // The smallest gap between np values: the room either side, and the unit of the offsets that
  // keep series, single-process markers and runs apart.
  const auto position = [&](int np) { return axis.log ? std::log2(double(np)) : double(np); };
  double step = 0;
  for (auto it = std::next(nps.begin()); it != nps.end(); ++it) {
    const double gap = position(*it) - position(*std::prev(it));
    step = step == 0 ? gap : std::min(step, gap);
  }
  axis.step = step > 0 ? step : 1;
  std::string& out = axis.commands;
  out += "set style line 100 lc rgb '#e0e0e0' lw 1 dt 1\n";
  out += "set grid ls 100\n";
  out += "set border lw 1\n";
  out += "set encoding utf8\n";
  out += fmt::format("set xlabel {} noenhanced\n", gnuplot_string(xlabel));
  if (axis.log) out += "set logscale x 2\n";
  out += fmt::format("set xrange [{:.6g}:{:.6g}]\n", axis.shifted(min_np, -0.5),
                     axis.shifted(max_np, 0.5));
  std::string tics;
  for (int np : nps) tics += fmt::format("{}{}", tics.empty() ? "" : ", ", np);
  out += fmt::format("set xtics ({}) nomirror\n", tics);
  out += "set ytics nomirror\n";
  out += "set border 3\n";
  out += "set errorbars 0.4\n";
  out += "set offsets 0, 0, graph 0.06, 0\n";
  return axis;
}

int legend_rows(const std::vector<LegendEntry>& legend, const FigureStyle& style) {
  if (legend.empty()) return 0;
  const double width = style.width_in.value_or(7.0);
  const int columns = legend_columns(legend, width, style.font_pt / 72.0);
  return static_cast<int>((legend.size() + columns - 1) / columns);
}

std::string multiplot(const FigureFiles& files, const FigureStyle& style, const std::string& title,
                      const NpAxis& axis, const std::vector<Panel>& panels,
                      const std::vector<LegendEntry>& legend) {
  const PanelGrid grid = panel_grid(style.width_in.value_or(7.0), panels.size());
  // A grid with a slot to spare (three panels on two columns) holds the legend there when it fits
  // the slot's height; otherwise the legend goes under the panels.
  FigureStyle slot_style = style;
  slot_style.width_in = style.width_in.value_or(7.0) / grid.columns;
  const bool spare_slot = !legend.empty() && grid.columns * grid.rows > int(panels.size());
  const int slot_rows = spare_slot ? legend_rows(legend, slot_style) : 0;
  const Canvas slot_canvas = grid_canvas(style, 0, grid);
  const bool in_slot = spare_slot &&
                       legend_column_em(legend) * slot_canvas.em() <= *slot_style.width_in &&
                       (slot_rows * kLegendRowLines + kTopPadLines) * slot_canvas.em() <=
                           slot_canvas.height_in / grid.rows;
  const int rows = in_slot ? 0 : legend_rows(legend, style);
  const Canvas c = in_slot ? slot_canvas : grid_canvas(style, rows, grid);
  const double em = c.em() / c.height_in;  // a text line as a fraction of the height
  const double legend_top = (rows * kLegendRowLines + (rows > 0 ? kLegendPadLines : 0)) * em;
  const double panels_top = 1 - (c.title ? kTitleLines : 0) * em;
  const double row_height = (panels_top - legend_top) / grid.rows;
  const double above_panel = (c.title ? kPanelTitleLines : kTopPadLines) * em;
  const double plot_height = row_height - above_panel - kXAxisLines * em;
  if (plot_height * c.height_in < 0.6)
    throw ReportError(fmt::format(
        "the figure is too small: at {:g}x{:g} in with {:g} pt text, its {} legend row(s), titles "
        "and axes leave the panels {:.2g} in; give a larger --size, a smaller --font-size or "
        "--no-title",
        c.width_in, c.height_in, c.font_pt, rows, std::max(0.0, plot_height * c.height_in)));

  std::string out = terminals(c);
  out += fmt::format("  set output {}.'.'.format\n", gnuplot_string(files.script.stem().string()));
  out += "  set multiplot\n";
  const double width = 1.0 / static_cast<double>(grid.columns);
  for (std::size_t k = 0; k < panels.size(); ++k) {
    const int column = static_cast<int>(k) % grid.columns;
    const int row = static_cast<int>(k) / grid.columns;  // 0: the top row
    const double top = panels_top - row * row_height - above_panel;
    const double bottom = top - plot_height;
    const Panel& panel = panels[k];
    out += fmt::format("  # Panel {}: {}\n", k + 1, one_line(panel.title));
    out += "  reset\n";
    // Each panel starts afresh (the legend below unsets what panels set, and the loop comes back).
    std::istringstream commands(axis.commands);
    for (std::string line; std::getline(commands, line);) out += "  " + line + "\n";
    out += fmt::format("  set origin {:.4g}, 0\n  set size {:.4g}, 1\n", column * width, width);
    out += fmt::format("  set bmargin at screen {:.4g}\n  set tmargin at screen {:.4g}\n", bottom,
                       top);
    out += "  unset key\n";
    if (k == 0 && c.title && !title.empty())
      out += fmt::format("  set label 1 {} at screen 0.5, screen {:.4g} center noenhanced\n",
                         gnuplot_string(title), 1 - 1.0 * em);
    if (c.title)
      out += fmt::format("  set title {} offset 0,-0.4 noenhanced\n", gnuplot_string(panel.title));
    out += fmt::format("  set ylabel {} noenhanced\n", gnuplot_string(panel.ylabel));
    out += panel.setup;
    out += "  plot " + fmt::format("{}", fmt::join(panel.plots, ", \\\n       ")) + "\n";
  }
  if (!legend.empty()) {
    // One legend for every panel, under them: each colour is the same series in all of them.
    out += "  # The legend, shared by the panels\n";
    out += "  reset\n";
    out += "  unset border\n  unset tics\n  unset xlabel\n  unset ylabel\n";
    out += "  set origin 0, 0\n  set size 1, 1\n";
    // The plot area spans the canvas (it draws nothing): gnuplot fits a key's rows into it, and the
    // svg terminal's taller estimate of a line would otherwise add a column.
    out += "  set lmargin at screen 0\n  set rmargin at screen 1\n  set bmargin at screen 0\n";
    out += "  set tmargin at screen 1\n";
    out += "  set xrange [0:1]\n  set yrange [0:1]\n";
    // Filled column by column (the series first, then what the marks mean), `rows` high: gnuplot
    // adds the columns. It takes a text for wider than sans prints it: width -4 closes the gaps.
    // In a spare slot: the last row's, from its top, one column of the slot's width.
    const double key_x = in_slot ? (grid.columns - 0.5) * width : 0.5;
    const double key_top =
        in_slot ? panels_top - (grid.rows - 1) * row_height - kTopPadLines * em : legend_top;
    out += fmt::format(
        "  set key at screen {:.4g}, screen {:.4g} - key_drop * {:.4g} center top vertical Left "
        "reverse "
        "maxrows {} samplen 2 spacing key_spacing width -4 noenhanced\n",
        key_x, key_top, em, in_slot ? slot_rows : rows);
    std::vector<std::string> entries = {"-1 notitle"};  // keyentry alone draws nothing to key
    for (const auto& entry : legend)
      entries.push_back(
          fmt::format("keyentry {} title {}", entry.sample, gnuplot_string(entry.text)));
    out += "  plot " + fmt::format("{}", fmt::join(entries, ", \\\n       ")) + "\n";
  }
  out += "  unset multiplot\n";
  out += "  unset output\n";
  out += "}\n";
  return out;
}

}  // namespace detail
}  // namespace scalebench::plotting
