// The report's figures: plot (scaling_*) and plot --by (factor_scaling_*). Both draw series of
// report rows by np with one definition of the error bars (the confidence interval of the mean
// under the report's unit) and every run beside its mean, from one data layout.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "plotting/figure.hpp"
#include "plotting/gnuplot_script.hpp"
#include "report/export/format.hpp"
#include "util/text.hpp"

namespace scalebench::plotting {

using namespace report;  // the tables, formats and errors it draws
using namespace detail;

namespace {

constexpr std::string_view kSingleLauncher = "single";
// The colour of what the legend explains for every series (runs, bars, reference lines).
constexpr std::string_view kNeutral = "#606060";

// The rows of one series by np: a line (or, for "single", one marker) of one colour.
struct Series {
  std::string key;           // the stored names, for the data file ("hvd model=vgg16", "vgg16")
  std::string title;         // what the legend shows ("hvd, model = vgg16", "VGG-16")
  std::size_t colour = 1;    // gnuplot linetype
  Marker marker = {};        // with the colour, what tells the series apart
  std::string within_level;  // plot --by: what tells it from the other series of its level
  bool single = false;
  std::vector<const ReportRow*> rows;
  double offset = 0;  // where its means sit, in steps of the np axis from np (series apart)

  bool any(std::optional<double> ReportRow::*field) const {
    return std::any_of(rows.begin(), rows.end(), [&](const ReportRow* r) { return r->*field; });
  }
  // Whether its linear-scaling line has two points to join.
  bool has_ideal_line() const {
    return std::count_if(rows.begin(), rows.end(), [](const ReportRow* r) {
             return r->images_per_second && r->scaling_efficiency;
           }) > 1;
  }
};

bool mentions_single(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("single") != std::string::npos;
}

void sort_by_np(Series& s) {
  std::stable_sort(s.rows.begin(), s.rows.end(),
                   [](const ReportRow* a, const ReportRow* b) { return a->np < b->np; });
}

// Launched series spread a little around np, single-process markers sit left of it, so that
// neither hides another's mean or bar.
void place(std::vector<Series>& series) {
  for (const bool single : {false, true}) {
    std::vector<Series*> of_kind;
    for (auto& s : series)
      if (s.single == single) of_kind.push_back(&s);
    const double spacing =
        of_kind.size() > 1 ? std::min(0.04, 0.2 / static_cast<double>(of_kind.size() - 1)) : 0;
    for (std::size_t j = 0; j < of_kind.size(); ++j)
      of_kind[j]->offset =
          (single ? -0.14 : 0) + (static_cast<double>(j) - (of_kind.size() - 1) / 2.0) * spacing;
  }
}

// plot: one series per condition, launcher and combination of factor levels. Rows of different
// levels (vgg16 and inception_v3) are never joined into one line. Launched series first.
std::vector<Series> table_series(const ReportTable& table) {
  const Labels& labels = table.labels;
  std::vector<Series> series;
  std::map<std::tuple<std::string, std::string, report::FactorLevels>, std::size_t> index;
  std::map<std::string, std::set<std::string>> launchers_of;
  for (const auto& row : table.rows) launchers_of[row.condition].insert(row.launcher);
  for (const auto& row : table.rows) {
    auto [it, inserted] =
        index.try_emplace({row.condition, row.launcher, row.levels}, series.size());
    if (inserted) {
      Series s;
      s.single = row.launcher == kSingleLauncher;
      s.key = row.condition;
      s.title = labels.of(row.condition, row.condition);
      for (const auto& [factor, level] : row.levels) {
        s.key += " " + factor + "=" + level;
        s.title += ", " + labels.level_with_factor(factor, level);
      }
      if (launchers_of[row.condition].size() > 1) {
        s.key += fmt::format(" ({})", row.launcher);
        s.title += fmt::format(" ({})", labels.of(row.launcher, row.launcher));
      } else if (s.single && !mentions_single(labels.of(row.condition, row.condition))) {
        s.title += " (single process)";
      }
      series.push_back(std::move(s));
    }
    series[it->second].rows.push_back(&row);
  }
  std::stable_partition(series.begin(), series.end(), [](const Series& s) { return !s.single; });
  for (std::size_t i = 0; i < series.size(); ++i) {
    series[i].colour = i + 1;
    series[i].marker = series[i].single ? kSingleMarker : series_marker(i);
    sort_by_np(series[i]);
  }
  place(series);
  return series;
}

// plot --by: one series per level and condition (and other factors' levels), one colour per
// level in every panel; launched series first.
std::vector<Series> factor_series(const FactorReport& report) {
  const Labels& labels = report.labels;
  std::set<std::string> launched_conditions;
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows)
      if (row.launcher != kSingleLauncher) launched_conditions.insert(row.condition);
  std::vector<Series> launched, single;
  for (std::size_t b = 0; b < report.blocks.size(); ++b) {
    std::map<std::pair<std::string, std::string>, std::size_t> index;
    std::vector<Series> of_block;
    for (const auto& row : report.blocks[b].rows) {
      std::string key_rest, title_rest;
      for (const auto& [factor, level] : row.levels) {
        key_rest += " " + factor + "=" + level;
        title_rest += ", " + labels.level_with_factor(factor, level);
      }
      const auto [it, inserted] =
          index.try_emplace({row.condition + key_rest, row.launcher}, of_block.size());
      if (inserted) {
        Series s;
        s.colour = b + 1;
        s.within_level = row.condition + key_rest + " (" + row.launcher + ")";
        s.single = row.launcher == kSingleLauncher;
        s.key = report.levels[b];
        s.title = labels.level_with_factor(report.factor, report.levels[b]);
        if (s.single || launched_conditions.size() > 1) {
          s.key += ", " + row.condition;
          s.title += ", " + labels.of(row.condition, row.condition);
        }
        s.key += key_rest;
        s.title += title_rest;
        of_block.push_back(std::move(s));
      }
      of_block[it->second].rows.push_back(&row);
    }
    for (auto& s : of_block) {
      sort_by_np(s);
      (s.single ? single : launched).push_back(std::move(s));
    }
  }
  // Colour is the level; the marker is the level too, unless a level holds several launched
  // series (conditions, other factors' levels): then the marker tells those apart.
  std::map<std::string, std::size_t> within_level;
  for (const auto& s : launched) within_level.try_emplace(s.within_level, within_level.size());
  const bool several = within_level.size() > 1;
  for (auto& s : launched)
    s.marker = series_marker(several ? within_level[s.within_level] : s.colour - 1);
  for (auto& s : single) s.marker = kSingleMarker;
  launched.insert(launched.end(), single.begin(), single.end());
  place(launched);
  return launched;
}

std::set<int> nps_of(const std::vector<Series>& series) {
  std::set<int> nps;
  for (const auto& s : series)
    for (const auto* row : s.rows) nps.insert(row->np);
  return nps;
}

std::string xlabel_of(const Labels& labels) {
  return labels.has("np") ? labels.of("np", "np") : "processes (np)";
}

// "95% CI of the mean, unit run": the one error-bar definition, for keys and comments.
std::string bars_text(double confidence, std::string_view unit) {
  return fmt::format("{:g}% CI of the mean, unit {}", confidence * 100, unit);
}

std::string bars_method(std::string_view unit) {
  if (unit == "epoch") return "the t interval on all epochs, which takes epochs as independent";
  if (unit == "nested") return "the mixed model's interval with Satterthwaite d.f.";
  return "the t interval on the runs' means";
}

std::string runs_text(const std::vector<Series>& series) {
  std::size_t low = std::numeric_limits<std::size_t>::max(), high = 0;
  for (const auto& s : series)
    for (const auto* row : s.rows) low = std::min(low, row->runs), high = std::max(high, row->runs);
  return low == high ? util::count_of(static_cast<long long>(low), "run")
                     : fmt::format("{}-{} runs", low, high);
}

// The data file both figures read: a block per series, then a block per series of its runs.
std::string series_data(std::string heading, const std::vector<Series>& series,
                        std::string_view unit, double confidence) {
  const NpAxis axis = np_axis(nps_of(series), "");
  std::string out = std::move(heading);
  out += fmt::format(
      "# Error bars, one definition everywhere: the {} ({}): mean_ci_* for the epoch "
      "time, images_ci_* for images/s, efficiency_ci_* for the efficiency (the delta method; none "
      "on the efficiency's reference, 100% by definition). docs/report.md.\n",
      bars_text(confidence, unit), bars_method(unit));
  out += fmt::format(
      "# Blocks (gnuplot `index`) 0 to {0}: one per series, by np; blocks {1} to {2}: the runs of "
      "series 0 to {0}, one line per run. Blocks are separated by two blank lines; NaN = "
      "unknown.\n",
      series.size() - 1, series.size(), 2 * series.size() - 1);
  out +=
      "# ideal_images_per_s = images_per_s / scaling_efficiency (linear scaling from the "
      "reference group); x = where the point is drawn (np, shifted so that series and runs do not "
      "hide each other)\n"
      "# Series: np mean_epoch_s sd_epoch_s images_per_s ideal_images_per_s mean_ci_lower "
      "mean_ci_upper images_ci_lower images_ci_upper efficiency_pct efficiency_ci_lower_pct "
      "efficiency_ci_upper_pct runs x\n"
      "# Runs: np x epoch_s images_per_s efficiency_pct run\n";
  const auto percent = [](const std::optional<double>& v) {
    return v ? std::optional<double>(*v * 100) : std::nullopt;
  };
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    out += fmt::format("{}# index {}: {}\n", i == 0 ? "" : "\n\n", i, one_line(s.key));
    for (const ReportRow* row : s.rows) {
      std::optional<double> ideal;
      if (row->images_per_second && row->scaling_efficiency && *row->scaling_efficiency > 0)
        ideal = *row->images_per_second / *row->scaling_efficiency;
      out += fmt::format(
          "{} {} {} {} {} {} {} {} {} {} {} {} {} {}\n", row->np,
          format_exact(row->mean_epoch_seconds), value_or_missing(row->sd_epoch_seconds),
          value_or_missing(row->images_per_second), value_or_missing(ideal),
          value_or_missing(row->mean_ci_lower), value_or_missing(row->mean_ci_upper),
          value_or_missing(row->images_ci_lower), value_or_missing(row->images_ci_upper),
          value_or_missing(percent(row->scaling_efficiency)),
          value_or_missing(percent(row->efficiency_ci_lower)),
          value_or_missing(percent(row->efficiency_ci_upper)), row->runs,
          fmt::format("{:.6g}", axis.shifted(row->np, s.offset)));
    }
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    out += fmt::format("\n\n# index {}: runs of {}\n", series.size() + i, one_line(s.key));
    bool any = false;
    for (const ReportRow* row : s.rows) {
      const auto& times = row->run_epoch_seconds;
      const auto& rates = row->run_images_per_second;
      std::optional<double> ideal;
      if (row->images_per_second && row->scaling_efficiency && *row->scaling_efficiency > 0)
        ideal = *row->images_per_second / *row->scaling_efficiency;
      for (std::size_t j = 0; j < times.size(); ++j) {
        // Deterministic jitter by the run's place: spread over 0.08 of a step beside the mean
        // (right of it, left of a single-process marker).
        const double spread = times.size() > 1 ? double(j) / double(times.size() - 1) : 0.5;
        const double side = s.single ? -1 : 1;
        const double x = axis.shifted(row->np, s.offset + side * (0.06 + 0.08 * spread));
        std::optional<double> rate, efficiency;
        if (rates.size() == times.size()) rate = rates[j];
        if (rate && ideal) efficiency = *rate * 100 / *ideal;
        out += fmt::format("{} {:.6g} {} {} {} {}\n", row->np, x, format_exact(times[j]),
                           value_or_missing(rate), value_or_missing(efficiency), j + 1);
        any = true;
      }
    }
    if (!any) out += "NaN NaN NaN NaN NaN 0\n";  // gnuplot needs every block to hold a line
  }
  return out;
}

// The quantities a figure draws, one panel each.
enum class Quantity { efficiency, time, throughput };

// The data file's columns of a quantity: the series block's value and CI ends, the runs block's
// value.
struct QuantityColumns {
  int value, lower, upper, run;
};
QuantityColumns columns_of(Quantity q) {
  switch (q) {
    case Quantity::efficiency:
      return {10, 11, 12, 5};
    case Quantity::time:
      return {2, 6, 7, 3};
    case Quantity::throughput:
      return {4, 8, 9, 4};
  }
  return {2, 6, 7, 3};
}

bool drawn(const Series& s, Quantity q) {
  switch (q) {
    case Quantity::efficiency:
      return !s.single && s.any(&ReportRow::scaling_efficiency);
    case Quantity::time:
      return true;
    case Quantity::throughput:
      return s.any(&ReportRow::images_per_second);
  }
  return false;
}

// What a row puts in a quantity's panel, in the panel's units (efficiency in percent): the mean,
// its interval's ends and the runs.
std::vector<double> drawn_values(const ReportRow& row, Quantity q, std::optional<double>* lower) {
  std::vector<double> values;
  const auto add = [&](const std::optional<double>& v, double scale) {
    if (v) values.push_back(*v * scale);
  };
  switch (q) {
    case Quantity::time:
      values.push_back(row.mean_epoch_seconds);
      add(row.mean_ci_upper, 1);
      values.insert(values.end(), row.run_epoch_seconds.begin(), row.run_epoch_seconds.end());
      *lower = row.mean_ci_lower;
      break;
    case Quantity::throughput:
      add(row.images_per_second, 1);
      add(row.images_ci_upper, 1);
      values.insert(values.end(), row.run_images_per_second.begin(),
                    row.run_images_per_second.end());
      *lower = row.images_ci_lower;
      break;
    case Quantity::efficiency:
      add(row.scaling_efficiency, 100);
      add(row.efficiency_ci_upper, 100);
      if (row.efficiency_ci_lower) *lower = *row.efficiency_ci_lower * 100;
      break;
  }
  if (*lower && **lower > 0) values.push_back(**lower);
  return values;
}

// How a panel's y axis is drawn: the divisor of its numbers (images/s in thousands past 10^4),
// where it starts (0; on a log axis half the smallest value drawn) and whether an interval reaches
// below that start (its bar ends there, and the caption says so).
struct YAxis {
  double scale = 1;
  bool log = false;
  double floor = 0;
  double largest = 0;
  bool cut = false;
};

// A log axis' ticks at 1, 2 and 5 times the powers of ten between its ends (gnuplot's own are
// decades only: a panel spanning less than one shows one number or none).
std::string log_tics(const YAxis& y) {
  const double low = y.floor / y.scale, high = y.largest / y.scale * 1.2;
  const auto tics_at = [&](std::initializer_list<double> steps) {
    std::vector<std::string> tics;
    for (double decade = std::pow(10, std::floor(std::log10(low))); decade <= high; decade *= 10)
      for (const double step : steps)
        if (decade * step >= low && decade * step <= high)
          tics.push_back(fmt::format("{:g}", decade * step));
    return tics;
  };
  auto tics = tics_at({1, 2, 5});
  if (tics.size() < 3) tics = tics_at({1, 1.5, 2, 3, 5, 7});  // a span of less than a decade
  return fmt::format("  set ytics ({}) nomirror\n", fmt::join(tics, ", "));
}

YAxis y_axis_of(const std::vector<Series>& series, Quantity q, bool log_y) {
  YAxis y;
  y.log = log_y && q != Quantity::efficiency;
  double largest = 0, smallest = std::numeric_limits<double>::infinity();
  std::vector<double> lowers;
  for (const auto& s : series) {
    if (!drawn(s, q)) continue;
    for (const ReportRow* row : s.rows) {
      std::optional<double> lower;
      for (const double v : drawn_values(*row, q, &lower)) {
        largest = std::max(largest, v);
        if (v > 0) smallest = std::min(smallest, v);
      }
      if (lower) lowers.push_back(*lower);
    }
  }
  if (q == Quantity::throughput) y.scale = largest >= 1e7 ? 1e6 : largest >= 1e4 ? 1e3 : 1;
  y.largest = largest;
  if (y.log) y.floor = std::isfinite(smallest) ? smallest / 2 : 1;
  y.cut = std::any_of(lowers.begin(), lowers.end(), [&](double v) { return v < y.floor; });
  return y;
}

std::string ylabel_of(std::string label, const YAxis& y) {
  std::vector<std::string> notes;
  if (y.scale == 1e3) notes.emplace_back("×1000");
  if (y.scale == 1e6) notes.emplace_back("×10⁶");
  if (y.log) notes.emplace_back("log");
  if (!notes.empty()) label += fmt::format(" ({})", fmt::join(notes, ", "));
  return label;
}

// A column of the data file in the panel's units.
std::string scaled(int column, const YAxis& y) {
  return y.scale == 1 ? fmt::format("{}", column) : fmt::format("(${}/{:g})", column, y.scale);
}

// The plot elements of one quantity for one series, back to front: its runs, its bars (the lower
// end no lower than the axis' start), its means.
std::vector<std::string> series_plots(const Series& s, std::size_t index, std::size_t run_index,
                                      Quantity q, const YAxis& y) {
  const auto c = columns_of(q);
  const std::string point = s.single ? fmt::format("pt {} ps 1.3", s.marker.filled)
                                     : fmt::format("pt {}", s.marker.filled);
  return {
      fmt::format("data index {} using 2:{} with points lt {} pt {} ps 0.55 lw 1 notitle",
                  run_index, scaled(c.run, y), s.colour, s.marker.open),
      fmt::format("data index {} using 14:(bar({}, ${}, ${})):(floor_at(${}, {:.6g}){}):{} with "
                  "yerrorbars lt {} {} notitle",
                  index, y.scale == 1 ? fmt::format("${}", c.value) : scaled(c.value, y), c.lower,
                  c.upper, c.lower, y.floor, y.scale == 1 ? "" : fmt::format("/{:g}", y.scale),
                  scaled(c.upper, y), s.colour, point),
      fmt::format("data index {} using 14:{} with {} lt {} {} notitle", index, scaled(c.value, y),
                  s.single ? "points" : "linespoints", s.colour, point),
  };
}

// The legend's entries every figure shares: each series, the runs, the bars.
// `level_lines`: a single-process series is drawn with a dotted line at its level too.
std::vector<LegendEntry> series_legend(const std::vector<Series>& series, double confidence,
                                       bool level_lines) {
  std::vector<LegendEntry> legend;
  for (const auto& s : series) {
    std::string sample = fmt::format("with linespoints lt {} pt {}", s.colour, s.marker.filled);
    if (s.single)
      sample = level_lines && s.rows.size() == 1
                   ? fmt::format("with linespoints lt {} dt 3 lw 1 pt {} ps 1.3", s.colour,
                                 s.marker.filled)
                   : fmt::format("with points lt {} pt {} ps 1.3", s.colour, s.marker.filled);
    legend.push_back({sample, s.title});
  }
  legend.push_back({fmt::format("with points lc rgb '{}' pt 6 ps 0.55 lw 1", kNeutral), "runs"});
  // The unit is the caption's: the entry stays narrow enough for a column's spare slot.
  legend.push_back({fmt::format("with yerrorbars lc rgb '{}' pt 7", kNeutral),
                    fmt::format("mean ± {:g}% CI", confidence * 100)});
  return legend;
}

bool any_series(const std::vector<Series>& series, const std::function<bool(const Series&)>& test) {
  return std::any_of(series.begin(), series.end(), test);
}

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

std::string runs_per_point(const std::vector<Series>& series) {
  return fmt::format("{} per point", runs_text(series));
}

// Whether a figure has an efficiency panel: only a study with more than one launched np has an
// efficiency that is not 100% by definition.
bool has_efficiency_panel(const std::vector<Series>& series) {
  std::set<int> launched_nps;
  bool any = false;
  for (const auto& s : series) {
    if (s.single) continue;
    for (const auto* row : s.rows) launched_nps.insert(row->np);
    any = any || s.any(&ReportRow::scaling_efficiency);
  }
  return any && launched_nps.size() > 1;
}

bool has_throughput_panel(const std::vector<Series>& series) {
  return any_series(series, [](const Series& s) { return drawn(s, Quantity::throughput); });
}

// The panels of both figures, left to right: scaling efficiency (an np study's), mean epoch time,
// throughput (where a series has images/s). `level_lines`: a single-process group's level drawn
// across the time and throughput panels (its `stats` commands go in `stats`).
struct Panels {
  std::vector<Panel> panels;
  std::string stats;
  bool ideal_lines = false;
  bool cut = false;  // an interval reaches below its axis' start
};

Panels quantity_panels(const std::vector<Series>& series, const Labels& labels, bool weak,
                       bool log_y, bool level_lines) {
  const std::size_t n = series.size();
  Panels out;
  const auto single_level = [&](std::size_t i) {
    return level_lines && series[i].single && series[i].rows.size() == 1;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!single_level(i)) continue;
    out.stats += fmt::format("stats data index {} using 2 nooutput name 'single{}_time'\n", i, i);
    if (series[i].rows[0]->images_per_second)
      out.stats += fmt::format("stats data index {} using 4 nooutput name 'single{}_rate'\n", i, i);
  }
  std::vector<Quantity> quantities;
  if (has_efficiency_panel(series)) quantities.push_back(Quantity::efficiency);
  quantities.push_back(Quantity::time);
  if (has_throughput_panel(series)) quantities.push_back(Quantity::throughput);
  for (const Quantity q : quantities) {
    const YAxis y = y_axis_of(series, q, log_y);
    out.cut = out.cut || y.cut;
    Panel panel;
    // A log axis ends at the largest value drawn, not at the next power of ten.
    panel.setup = y.log ? fmt::format(
                              "  set logscale y 10\n  set yrange [{:.6g}:*]\n  set "
                              "autoscale yfixmax\n{}",
                              y.floor / y.scale, log_tics(y))
                        : std::string("  set yrange [0:*]\n");
    if (q == Quantity::efficiency) {
      panel.title = weak ? "Scaled efficiency" : "Scaling efficiency";
      panel.ylabel = labels.of("efficiency", weak ? "scaled efficiency (%)" : "efficiency (%)");
      panel.plots.push_back(fmt::format("100 with lines lc rgb '{}' dt 2 lw 1 notitle", kNeutral));
      out.ideal_lines = true;
    } else if (q == Quantity::time) {
      panel.title = "Mean epoch time";
      panel.ylabel = ylabel_of(labels.of("epoch_time", "epoch time (s)"), y);
    } else {
      panel.title = "Throughput";
      panel.ylabel = ylabel_of(labels.of("images_per_second", "images/s"), y);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Series& s = series[i];
      if (q == Quantity::time && single_level(i))
        panel.plots.push_back(
            fmt::format("single{}_time_mean with lines lt {} dt 3 lw 1 notitle", i, s.colour));
      if (q == Quantity::throughput && single_level(i) && s.rows[0]->images_per_second)
        panel.plots.push_back(fmt::format(
            "single{}_rate_mean/{:g} with lines lt {} dt 3 lw 1 notitle", i, y.scale, s.colour));
      if (q == Quantity::throughput && !s.single && s.has_ideal_line()) {
        out.ideal_lines = true;
        panel.plots.push_back(
            fmt::format("data index {} using 14:{} with lines lt {} dt 2 lw 1 "
                        "notitle",
                        i, scaled(5, y), s.colour));
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      if (drawn(series[i], q))
        for (auto& plot : series_plots(series[i], i, n + i, q, y))
          panel.plots.push_back(std::move(plot));
    out.panels.push_back(std::move(panel));
  }
  return out;
}

// The caption's account of the axes: where a bar is cut, a log axis.
std::string axes_text(const Panels& panels, bool log_y) {
  std::string out;
  if (panels.cut)
    out += log_y ? "; a bar reaching 0 or below ends at the panel's bottom"
                 : "; a bar reaching below 0 is cut at 0, below which these quantities cannot be";
  if (log_y) out += "; epoch time and throughput on log scales";
  return out;
}

std::string weak_text(bool weak) {
  return weak ? " Weak scaling: every process trains the same images per epoch, so the work grows "
                "with np; efficiency is the scaled efficiency (docs/metrics.md)."
              : "";
}

}  // namespace

std::string scaling_data(const ReportTable& table) {
  return series_data(
      fmt::format("# scalebench scaling data, experiment {}\n", one_line(table.experiment)),
      table_series(table), table.unit, table.confidence);
}

std::string scaling_script(const ReportTable& table, const FigureFiles& files,
                           const FigureStyle& style) {
  const std::vector<Series> series = table_series(table);
  const NpAxis axis = np_axis(nps_of(series), xlabel_of(table.labels));
  const Panels panels =
      quantity_panels(series, table.labels, table.weak_scaling, style.log_y, true);
  std::string out;
  out += fmt::format("# scalebench scaling figure, experiment {}\n", one_line(table.experiment));
  out += fmt::format("# Caption: {}\n", one_line(scaling_caption(table, style)));
  out += script_preamble(files);
  out += panels.stats;
  auto legend = series_legend(series, table.confidence, true);
  if (panels.ideal_lines)
    legend.push_back({fmt::format("with lines lc rgb '{}' dt 2 lw 1", kNeutral), "linear scaling"});
  out += multiplot(
      files, style,
      fmt::format("{}: {}with the number of processes, {}",
                  table.labels.of(table.experiment, table.experiment),
                  table.weak_scaling ? "weak scaling " : "scaling ", runs_per_point(series)),
      axis, panels.panels, legend);
  return out;
}

namespace {

// The caption of either figure: what is drawn against np, the bars, the runs, the lines.
std::string caption_of(const std::string& subject, const std::vector<Series>& series,
                       const std::string& colours, double confidence, std::string_view unit,
                       bool weak, bool log_y) {
  const Panels panels = quantity_panels(series, Labels{}, weak, log_y, true);
  const bool efficiency = has_efficiency_panel(series);
  const bool throughput = has_throughput_panel(series);
  std::vector<std::string> drawn_list;
  if (efficiency) drawn_list.push_back(weak ? "scaled efficiency" : "scaling efficiency");
  drawn_list.push_back("mean epoch time");
  if (throughput) drawn_list.push_back("throughput");
  const std::string rates = throughput && efficiency ? "images/s and efficiency"
                            : throughput             ? "images/s"
                                                     : "";
  return fmt::format(
      "{}: {} against the number of processes{} ({}). Bars: the {} ({}{}{}); open markers: the "
      "individual runs{}{}{}.{}",
      subject, and_list(drawn_list), colours, runs_per_point(series), bars_text(confidence, unit),
      bars_method(unit), rates.empty() ? "" : "; for " + rates + " the delta method",
      efficiency ? "; none at the reference np, whose efficiency is 100% by definition" : "",
      panels.ideal_lines ? "; dashed: linear scaling" : "",
      any_series(series, [](const Series& s) { return s.single; })
          ? "; diamonds: single-process runs"
          : "",
      axes_text(panels, log_y), weak_text(weak));
}

}  // namespace

std::string scaling_caption(const ReportTable& table, const FigureStyle& style) {
  return caption_of(table.labels.of(table.experiment, table.experiment), table_series(table),
                    ", one colour and marker per series", table.confidence, table.unit,
                    table.weak_scaling, style.log_y);
}

std::string factor_scaling_data(const FactorReport& report) {
  const double confidence = report.blocks.empty() ? 0.95 : report.blocks.front().confidence;
  return series_data(fmt::format("# scalebench scaling data, experiment {} by {}\n",
                                 one_line(report.experiment), one_line(report.factor)),
                     factor_series(report), report.unit, confidence);
}

std::string factor_scaling_script(const FactorReport& report, const FigureFiles& files,
                                  const FigureStyle& style) {
  const auto series = factor_series(report);
  const Labels& labels = report.labels;
  const double confidence = report.blocks.empty() ? 0.95 : report.blocks.front().confidence;
  const NpAxis axis = np_axis(nps_of(series), xlabel_of(labels));
  const Panels panels = quantity_panels(series, labels, report.weak_scaling, style.log_y, false);
  std::string out;
  out += fmt::format("# scalebench scaling figure, experiment {} by {}\n",
                     one_line(report.experiment), one_line(report.factor));
  out += fmt::format("# Caption: {}\n", one_line(factor_scaling_caption(report, style)));
  out += script_preamble(files);
  auto legend = series_legend(series, confidence, false);
  if (panels.ideal_lines)
    legend.push_back({fmt::format("with lines lc rgb '{}' dt 2 lw 1", kNeutral), "linear scaling"});
  out += multiplot(files, style,
                   fmt::format("{} by {}, {}", labels.of(report.experiment, report.experiment),
                               labels.factor(report.factor), runs_per_point(series)),
                   axis, panels.panels, legend);
  return out;
}

std::string factor_scaling_caption(const FactorReport& report, const FigureStyle& style) {
  const double confidence = report.blocks.empty() ? 0.95 : report.blocks.front().confidence;
  const auto& labels = report.labels;
  return caption_of(fmt::format("{} by {}", labels.of(report.experiment, report.experiment),
                                labels.factor(report.factor)),
                    factor_series(report),
                    fmt::format(", one colour per level of {}", labels.factor(report.factor)),
                    confidence, report.unit, report.weak_scaling, style.log_y);
}

FigureFiles plot_scaling(const ReportTable& table, const std::filesystem::path& output_prefix,
                         const FigureStyle& style) {
  if (table.rows.empty())
    throw ReportError(
        fmt::format("nothing to plot: the report of {} has no rows", table.experiment));
  return render(
      scaling_data(table),
      [&](const FigureFiles& files) { return scaling_script(table, files, style); }, output_prefix);
}

FigureFiles plot_factor_scaling(const FactorReport& report,
                                const std::filesystem::path& output_prefix,
                                const FigureStyle& style) {
  if (factor_series(report).empty())
    throw ReportError(fmt::format("nothing to plot: the report of {} by {} has no rows",
                                  report.experiment, report.factor));
  return render(
      factor_scaling_data(report),
      [&](const FigureFiles& files) { return factor_scaling_script(report, files, style); },
      output_prefix);
}

}  // namespace scalebench::plotting
