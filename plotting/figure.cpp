#include "plotting/figure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/process.hpp>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "report/export/format.hpp"
#include "report/export/output_file.hpp"
#include "util/text.hpp"

namespace scalebench::plotting {

using namespace report;  // the tables, formats and errors it draws
using scaling::PlanValue;
using scaling::ScalingPlan;
namespace {

namespace bp = boost::process;
namespace fs = std::filesystem;

constexpr std::string_view kSingleLauncher = "single";

// Tableau 10: distinguishable, print- and colour-blind-friendly enough for a handful of series.
constexpr std::string_view kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

// The rows of one condition, launcher and combination of factor levels, sorted by np: one line
// (or, for "single", one marker). Rows of different levels (vgg16 and inception_v3) are never
// joined into one line.
struct Series {
  std::string title;
  bool single = false;
  std::vector<const ReportRow*> rows;
  bool any_throughput() const {
    return std::any_of(rows.begin(), rows.end(), [](auto* r) { return r->images_per_second; });
  }
  bool any_ideal() const {
    return std::any_of(rows.begin(), rows.end(),
                       [](auto* r) { return r->images_per_second && r->scaling_efficiency; });
  }
};

std::vector<Series> make_series(const ReportTable& table) {
  std::vector<Series> series;
  std::map<std::tuple<std::string, std::string, db::FactorLevels>, std::size_t> index;
  std::map<std::string, std::set<std::string>> launchers_of;
  for (const auto& row : table.rows) launchers_of[row.condition].insert(row.launcher);
  for (const auto& row : table.rows) {
    auto [it, inserted] =
        index.try_emplace({row.condition, row.launcher, row.levels}, series.size());
    if (inserted) {
      Series s;
      s.single = row.launcher == kSingleLauncher;
      s.title = row.condition;
      for (const auto& [factor, level] : row.levels) s.title += " " + factor + "=" + level;
      if (s.single) {
        if (row.condition.find("single") == std::string::npos) s.title += " (single process)";
      } else if (launchers_of[row.condition].size() > 1) {
        s.title += fmt::format(" ({})", row.launcher);
      }
      series.push_back(std::move(s));
    }
    series[it->second].rows.push_back(&row);
  }
  // Launched series first, single-process markers last: the legend's second row (the linear-scaling
  // lines) then sits under the first row's series.
  std::stable_partition(series.begin(), series.end(), [](const Series& s) { return !s.single; });
  for (auto& s : series) {
    std::stable_sort(s.rows.begin(), s.rows.end(),
                     [](const ReportRow* a, const ReportRow* b) { return a->np < b->np; });
  }
  return series;
}

std::string value_or_missing(const std::optional<double>& value) {
  return value ? format_exact(*value) : "NaN";
}

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

// A gnuplot single-quoted string. Gnuplot 5.4 interprets nothing inside one (no backslash
// escapes, no `backquote` command substitution, no @macro expansion) except '' for a quote; a
// line break would end the command and a NUL the line, so control characters become spaces.
std::string gnuplot_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += is_control(c) ? ' ' : c;
  }
  return out + "'";
}

// Text for a `#` comment line: a line break would end the comment and a trailing backslash would
// continue it onto the next line (gnuplot joins such lines before it reads the comment).
std::string one_line(std::string_view text) {
  std::string out(text);
  std::replace_if(out.begin(), out.end(), is_control, ' ');
  if (!out.empty() && out.back() == '\\') out += ' ';
  return out;
}

// The loop header that renders the same plot as SVG, PNG and PDF (width x height in SVG/PNG
// pixels; the PDF gets the same aspect at 100 px per inch).
std::string terminals(int width, int height) {
  std::string out;
  out += "do for [format in 'svg png pdf'] {\n";
  out += "  if (format eq 'svg') {\n";
  out += fmt::format(
      "    set terminal svg size {},{} dynamic enhanced font 'sans,12' background rgb 'white'\n",
      width, height);
  out += "  } else { if (format eq 'png') {\n";
  out += fmt::format(
      "    set terminal pngcairo size {},{} enhanced font 'sans,12' background rgb 'white'\n",
      width, height);
  out += "  } else {\n";
  out += fmt::format(
      "    set terminal pdfcairo size {:.2f}in,{:.2f}in enhanced font 'sans,9' background rgb "
      "'white'\n",
      width / 100.0, height / 100.0);
  out += "  } }\n";
  return out;
}

// The script's opening after its title line: how to re-render, the data file, the colours.
std::string script_preamble(const FigureFiles& files) {
  std::string out;
  out += fmt::format("# Re-render after editing: cd <this directory> && gnuplot {}\n",
                     files.script.filename().string());
  out += "set encoding utf8\n";
  out += fmt::format("data = {}\n", gnuplot_string(files.data.filename().string()));
  for (std::size_t i = 0; i < std::size(kColours); ++i) {
    out += fmt::format("set linetype {} lc rgb '{}' lw 2 pt 7 ps 1\n", i + 1, kColours[i]);
  }
  out += fmt::format("set linetype cycle {}\n", std::size(kColours));
  return out;
}

// The grid and the np axis: log2 beyond a 4x span, ticks at the np values run.
struct NpAxis {
  std::string commands;
  std::string single_x;  // where a single-process marker sits: just left of its np
};

NpAxis np_axis(const std::set<int>& nps) {
  const int min_np = *nps.begin();
  const int max_np = *nps.rbegin();
  const bool log_x = max_np > 4 * min_np;
  NpAxis axis;
  std::string& out = axis.commands;
  out += "set style line 100 lc rgb '#e0e0e0' lw 1 dt 1\n";
  out += "set grid ls 100\n";
  out += "set border lw 1\n";
  out += "set xlabel 'processes (np)'\n";
  if (log_x) {
    out += "set logscale x 2\n";
    out += fmt::format("set xrange [{:.3g}:{:.3g}]\n", min_np / 1.3, max_np * 1.3);
  } else {
    out += fmt::format("set xrange [{:.3g}:{:.3g}]\n", min_np - 0.5, max_np + 0.5);
  }
  // Single-process markers sit just left of their np so they do not hide the np=1 point.
  axis.single_x = log_x ? "($1*0.93)" : "($1-0.08)";
  std::string tics;
  for (int np : nps) tics += fmt::format("{}{}", tics.empty() ? "" : ", ", np);
  out += fmt::format("set xtics ({})\n", tics);
  out += "set offsets 0, 0, graph 0.05, 0\n";
  return axis;
}

std::string read_all(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

FigureFiles figure_files(const fs::path& output_prefix) {
  auto with = [&](const char* extension) {
    fs::path path = output_prefix;
    path += extension;
    return path;
  };
  return FigureFiles{with(".svg"), with(".png"), with(".pdf"), with(".dat"), with(".gp")};
}

std::string scaling_data(const ReportTable& table) {
  std::string out = fmt::format(
      "# scalebench scaling data, experiment {}\n"
      "# One block per series (gnuplot `index`), blocks separated by two blank lines; NaN = "
      "unknown.\n"
      "# ideal_images_per_s = images_per_s / scaling_efficiency (linear scaling from the reference "
      "group, docs/report.md)\n"
      "# mean_ci_*: the mean's confidence interval per the unit of analysis ({})\n"
      "# np mean_epoch_s sd_epoch_s images_per_s ideal_images_per_s mean_ci_lower mean_ci_upper\n",
      one_line(table.experiment), table.unit);
  const std::vector<Series> series = make_series(table);
  for (std::size_t i = 0; i < series.size(); ++i) {
    out += fmt::format("{}# index {}: {}\n", i == 0 ? "" : "\n\n", i, one_line(series[i].title));
    for (const ReportRow* row : series[i].rows) {
      std::optional<double> ideal;
      if (row->images_per_second && row->scaling_efficiency && *row->scaling_efficiency > 0) {
        ideal = *row->images_per_second / *row->scaling_efficiency;
      }
      out +=
          fmt::format("{} {} {} {} {} {} {}\n", row->np, format_exact(row->mean_epoch_seconds),
                      value_or_missing(row->sd_epoch_seconds),
                      value_or_missing(row->images_per_second), value_or_missing(ideal),
                      value_or_missing(row->mean_ci_lower), value_or_missing(row->mean_ci_upper));
    }
  }
  return out;
}

std::string scaling_script(const ReportTable& table, const FigureFiles& files) {
  const std::vector<Series> series = make_series(table);
  std::set<int> nps;
  for (const auto& row : table.rows) nps.insert(row.np);
  const NpAxis axis = np_axis(nps);
  const std::string& single_x = axis.single_x;
  const bool throughput_panel =
      std::any_of(series.begin(), series.end(), [](const Series& s) { return s.any_throughput(); });

  std::string out;
  out += fmt::format("# scalebench scaling figure, experiment {}\n", one_line(table.experiment));
  out += script_preamble(files);
  // Reference levels of single-process groups and the throughput range, read from the data so
  // edits there carry over.
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (!series[i].single || series[i].rows.size() != 1) continue;
    out += fmt::format("stats data index {} using 2 nooutput name 'single{}_time'\n", i, i);
    if (series[i].rows[0]->images_per_second) {
      out += fmt::format("stats data index {} using 4 nooutput name 'single{}_rate'\n", i, i);
    }
  }

  if (throughput_panel) out += "stats data using 4 nooutput name 'rate'\n";
  out += axis.commands;

  // The keys sit below the panels, a row per series: taller for more series (factor levels).
  const int extra_rows = std::max(0, 2 * static_cast<int>(series.size()) - 6);
  out += terminals(1000, 450 + 22 * extra_rows);
  out += fmt::format("  set output {}.'.'.format\n", gnuplot_string(files.script.stem().string()));
  out += fmt::format(
      "  set multiplot layout 1,{} title {} noenhanced\n", throughput_panel ? 2 : 1,
      gnuplot_string(fmt::format("{}: scaling with the number of processes", table.experiment)));

  // Panel 1: mean epoch time with the mean's confidence interval as error bars.
  out += fmt::format("  set title 'Mean epoch time (error bars: {:g}% CI of the mean, unit {})'\n",
                     table.confidence * 100, table.unit);
  out += "  set ylabel 'epoch time (s)'\n";
  out += "  set yrange [0:*]\n";
  // Keys go below the panels, never over the data.
  out += "  set key below center horizontal samplen 3 spacing 1.1\n";
  std::vector<std::string> plots;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const std::size_t lt = i + 1;
    plots.push_back(
        fmt::format("data index {} using {}:2:(valid(6) ? $6 : $2):(valid(7) ? $7 : $2) with {} lt "
                    "{}{} title {} "
                    "noenhanced",
                    i, s.single ? single_x : "1", s.single ? "yerrorbars" : "yerrorlines", lt,
                    s.single ? " pt 13 ps 1.6" : "", gnuplot_string(s.title)));
    if (s.single && s.rows.size() == 1) {
      plots.push_back(fmt::format("single{}_time_mean with lines lt {} dt 2 lw 1 notitle", i, lt));
    }
  }
  out += "  plot " + fmt::format("{}", fmt::join(plots, ", \\\n       ")) + "\n";

  // Panel 2: throughput with each series' linear-scaling line.
  if (throughput_panel) {
    out += "  set title 'Training throughput (dashed: linear scaling)'\n";
    out += "  set ylabel 'throughput (images/s)'\n";
    // Room for the measurements; a linear-scaling line far above them leaves through the top.
    out += "  set yrange [0:rate_max*1.5]\n";
    std::size_t throughput_series = 0;
    for (const auto& s : series) throughput_series += s.any_throughput() ? 1 : 0;
    // First column the measurements, second column their linear-scaling lines, row by row; with
    // more than three series (factor levels) two columns no longer fit the panel: one column.
    if (throughput_series <= 3)
      out += fmt::format("  set key below center vertical maxrows {} samplen 3 spacing 1.1\n",
                         throughput_series);
    else
      out += "  set key below center horizontal samplen 3 spacing 1.1\n";
    plots.clear();
    std::vector<std::string> ideal_lines;
    for (std::size_t i = 0; i < series.size(); ++i) {
      const Series& s = series[i];
      const std::size_t lt = i + 1;
      if (!s.any_throughput()) continue;
      plots.push_back(fmt::format("data index {} using {}:4 with {} lt {}{} title {} noenhanced", i,
                                  s.single ? single_x : "1", s.single ? "points" : "linespoints",
                                  lt, s.single ? " pt 13 ps 1.6" : "", gnuplot_string(s.title)));
      if (s.single && s.rows.size() == 1) {
        plots.push_back(
            fmt::format("single{}_rate_mean with lines lt {} dt 2 lw 1 notitle", i, lt));
      } else if (!s.single && s.any_ideal()) {
        ideal_lines.push_back(
            fmt::format("data index {} using 1:5 with lines lt {} dt 2 lw 1.5 title {} noenhanced",
                        i, lt, gnuplot_string(s.title + ": linear")));
      }
    }
    plots.insert(plots.end(), ideal_lines.begin(), ideal_lines.end());
    out += "  plot " + fmt::format("{}", fmt::join(plots, ", \\\n       ")) + "\n";
  }
  out += "  unset multiplot\n";
  out += "  unset output\n";
  out += "}\n";
  return out;
}

namespace {

// One curve of the factor figure: the rows of one level and condition, by np.
struct LevelSeries {
  std::string title;
  std::size_t colour = 1;  // gnuplot linetype: one colour per level, in every panel
  bool single = false;
  std::vector<const ReportRow*> rows;
};

std::vector<LevelSeries> level_series(const FactorReport& report) {
  std::set<std::string> launched_conditions;
  for (const auto& block : report.blocks)
    for (const auto& row : block.rows)
      if (row.launcher != kSingleLauncher) launched_conditions.insert(row.condition);
  std::vector<LevelSeries> launched, single;
  for (std::size_t b = 0; b < report.blocks.size(); ++b) {
    std::map<std::pair<std::string, std::string>, std::size_t> index;
    std::vector<LevelSeries> of_block;
    for (const auto& row : report.blocks[b].rows) {
      std::string key_rest;
      for (const auto& [factor, level] : row.levels) key_rest += " " + factor + "=" + level;
      const auto [it, inserted] =
          index.try_emplace({row.condition + key_rest, row.launcher}, of_block.size());
      if (inserted) {
        LevelSeries s;
        s.colour = b + 1;
        s.single = row.launcher == kSingleLauncher;
        s.title = report.levels[b];
        if (s.single || launched_conditions.size() > 1) s.title += ", " + row.condition;
        s.title += key_rest;
        of_block.push_back(std::move(s));
      }
      of_block[it->second].rows.push_back(&row);
    }
    for (auto& s : of_block) {
      std::stable_sort(s.rows.begin(), s.rows.end(),
                       [](const ReportRow* a, const ReportRow* c) { return a->np < c->np; });
      (s.single ? single : launched).push_back(std::move(s));
    }
  }
  launched.insert(launched.end(), single.begin(), single.end());
  return launched;
}

}  // namespace

std::string factor_scaling_data(const FactorReport& report) {
  std::string out = fmt::format(
      "# scalebench scaling data, experiment {} by {}\n"
      "# One block per series (gnuplot `index`), blocks separated by two blank lines; NaN = "
      "unknown.\n"
      "# sd_run_*: sample SD of the runs' values (run-to-run spread); ideal = images_per_s / "
      "efficiency; efficiency in percent (docs/report.md)\n"
      "# np mean_epoch_s sd_run_epoch_s images_per_s sd_run_images_per_s ideal_images_per_s "
      "efficiency_pct sd_run_efficiency_pct runs\n",
      one_line(report.experiment), one_line(report.factor));
  const auto series = level_series(report);
  for (std::size_t i = 0; i < series.size(); ++i) {
    out += fmt::format("{}# index {}: {}\n", i == 0 ? "" : "\n\n", i, one_line(series[i].title));
    for (const ReportRow* row : series[i].rows) {
      std::optional<double> ideal, efficiency, sd_efficiency;
      if (row->images_per_second && row->scaling_efficiency && *row->scaling_efficiency > 0) {
        ideal = *row->images_per_second / *row->scaling_efficiency;
        efficiency = *row->scaling_efficiency * 100;
        if (row->sd_run_images_per_second)
          sd_efficiency = *row->sd_run_images_per_second / *ideal * 100;
      }
      out += fmt::format(
          "{} {} {} {} {} {} {} {} {}\n", row->np, format_exact(row->mean_epoch_seconds),
          value_or_missing(row->sd_run_epoch_seconds), value_or_missing(row->images_per_second),
          value_or_missing(row->sd_run_images_per_second), value_or_missing(ideal),
          value_or_missing(efficiency), value_or_missing(sd_efficiency), row->runs);
    }
  }
  return out;
}

std::string factor_scaling_script(const FactorReport& report, const FigureFiles& files) {
  const auto series = level_series(report);
  std::set<int> nps;
  for (const auto& s : series)
    for (const auto* row : s.rows) nps.insert(row->np);
  const NpAxis axis = np_axis(nps);
  const std::string& single_x = axis.single_x;
  std::size_t min_runs = std::numeric_limits<std::size_t>::max(), max_runs = 0;
  for (const auto& s : series)
    for (const auto* row : s.rows)
      min_runs = std::min(min_runs, row->runs), max_runs = std::max(max_runs, row->runs);
  const std::string runs_text = min_runs == max_runs
                                    ? util::count_of(static_cast<long long>(min_runs), "run")
                                    : fmt::format("{}-{} runs", min_runs, max_runs);

  std::string out;
  out += fmt::format("# scalebench scaling figure, experiment {} by {}\n",
                     one_line(report.experiment), one_line(report.factor));
  out += script_preamble(files);
  out += "stats data using 4 nooutput name 'rate'\n";
  out += "stats data using 7 nooutput name 'efficiency'\n";
  out += axis.commands;
  out += "set bars 1.5\n";

  out += terminals(1500, 500);
  out += fmt::format("  set output {}.'.'.format\n", gnuplot_string(files.script.stem().string()));
  out += fmt::format("  set multiplot layout 1,3 title {} noenhanced\n",
                     gnuplot_string(fmt::format(
                         "{} by {}: error bars ±1 SD of the run-to-run spread ({} per point)",
                         report.experiment, report.factor, runs_text)));
  out += "  set key below center horizontal maxrows 2 samplen 3 spacing 1.1\n";

  // Panel 1: efficiency, the figure of the study.
  out += "  set title 'Scaling efficiency (dashed: linear scaling = 100%)'\n";
  out += "  set ylabel 'scaling efficiency (%)'\n";
  out += "  set yrange [0:(efficiency_max > 110 ? efficiency_max*1.1 : 120)]\n";
  std::vector<std::string> plots;
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (series[i].single) continue;
    plots.push_back(fmt::format(
        "data index {} using 1:7:(valid(8) ? $8 : 0) with yerrorlines lt {} title {} noenhanced", i,
        series[i].colour, gnuplot_string(series[i].title)));
  }
  plots.push_back("100 with lines lc rgb '#404040' dt 2 lw 1.5 title 'linear scaling'");
  out += "  plot " + fmt::format("{}", fmt::join(plots, ", \\\n       ")) + "\n";

  // Panel 2: mean epoch time.
  out += "  set title 'Mean epoch time'\n";
  out += "  set ylabel 'epoch time (s)'\n";
  out += "  set yrange [0:*]\n";
  plots.clear();
  for (std::size_t i = 0; i < series.size(); ++i) {
    const bool single = series[i].single;
    plots.push_back(fmt::format(
        "data index {} using {}:2:(valid(3) ? $3 : 0) with {} lt {}{} title {} noenhanced", i,
        single ? single_x : "1", single ? "yerrorbars" : "yerrorlines", series[i].colour,
        single ? " pt 13 ps 1.6" : "", gnuplot_string(series[i].title)));
  }
  out += "  plot " + fmt::format("{}", fmt::join(plots, ", \\\n       ")) + "\n";

  // Panel 3: throughput with each level's linear-scaling line.
  out += "  set title 'Training throughput (dashed: linear scaling)'\n";
  out += "  set ylabel 'throughput (images/s)'\n";
  out += "  set yrange [0:rate_max*1.5]\n";
  plots.clear();
  for (std::size_t i = 0; i < series.size(); ++i) {
    const bool single = series[i].single;
    plots.push_back(fmt::format(
        "data index {} using {}:4:(valid(5) ? $5 : 0) with {} lt {}{} title {} noenhanced", i,
        single ? single_x : "1", single ? "yerrorbars" : "yerrorlines", series[i].colour,
        single ? " pt 13 ps 1.6" : "", gnuplot_string(series[i].title)));
    if (!single)
      plots.push_back(fmt::format("data index {} using 1:6 with lines lt {} dt 2 lw 1.5 notitle", i,
                                  series[i].colour));
  }
  out += "  plot " + fmt::format("{}", fmt::join(plots, ", \\\n       ")) + "\n";
  out += "  unset multiplot\n";
  out += "  unset output\n";
  out += "}\n";
  return out;
}

namespace {

// Writes data and script, runs gnuplot in a private directory beside the targets and renames the
// results over them (see plot_scaling).
FigureFiles render(const std::string& data,
                   const std::function<std::string(const FigureFiles&)>& script,
                   const fs::path& output_prefix) {
  const FigureFiles files = figure_files(output_prefix);
  // All five checked first: none is written when one is refused.
  for (const fs::path& file : {files.data, files.script, files.svg, files.png, files.pdf})
    check_output_target(file);
  const fs::path directory = fs::absolute(files.script).parent_path();
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) {
    throw ReportError(fmt::format("cannot create {}: {}", directory.string(), error.message()));
  }
  // Everything is written and rendered in a private directory beside the targets, then renamed
  // over them: a symlink planted at one of the fixed names is replaced, never written through.
  const PrivateTempDir work(directory);
  const FigureFiles staged = figure_files(work.path() / files.script.stem());
  write_file_replacing(staged.data, data);
  write_file_replacing(staged.script, script(files));
  const auto publish = [&] {
    replace_file(staged.data, files.data);
    replace_file(staged.script, files.script);
  };
  const boost::filesystem::path gnuplot = bp::search_path("gnuplot");
  if (gnuplot.empty()) {
    publish();
    throw ReportError(fmt::format(
        "gnuplot not found: apt-get install gnuplot-nox (the data and script are in {} and {})",
        files.data.string(), files.script.string()));
  }
  // argv, no shell; relative names in the script resolve against its directory.
  bp::ipstream stderr_stream;
  std::string messages;
  int exit_code = 0;
  try {
    bp::child child(gnuplot, files.script.filename().string(), bp::start_dir(work.path().string()),
                    bp::std_in<bp::null, bp::std_out> bp::null, bp::std_err > stderr_stream);
    messages = read_all(stderr_stream);
    child.wait();
    exit_code = child.exit_code();
  } catch (const bp::process_error& e) {
    throw ReportError(fmt::format("cannot run {}: {}", gnuplot.string(), e.what()));
  }
  if (exit_code != 0) {
    publish();
    throw ReportError(fmt::format("gnuplot failed (exit code {}) on {}:\n{}", exit_code,
                                  files.script.string(), messages));
  }
  for (const fs::path& image : {staged.svg, staged.png, staged.pdf}) {
    if (!fs::exists(image) || fs::file_size(image) == 0) {
      throw ReportError(fmt::format("gnuplot wrote no {}:\n{}",
                                    (directory / image.filename()).string(), messages));
    }
  }
  publish();
  replace_file(staged.svg, files.svg);
  replace_file(staged.png, files.png);
  replace_file(staged.pdf, files.pdf);
  return files;
}

}  // namespace

FigureFiles plot_scaling(const ReportTable& table, const fs::path& output_prefix) {
  if (table.rows.empty()) {
    throw ReportError(
        fmt::format("nothing to plot: the report of {} has no rows", table.experiment));
  }
  return render(
      scaling_data(table), [&](const FigureFiles& files) { return scaling_script(table, files); },
      output_prefix);
}

FigureFiles plot_factor_scaling(const FactorReport& report, const fs::path& output_prefix) {
  const auto series = level_series(report);
  if (series.empty())
    throw ReportError(fmt::format("nothing to plot: the report of {} by {} has no rows",
                                  report.experiment, report.factor));
  return render(
      factor_scaling_data(report),
      [&](const FigureFiles& files) { return factor_scaling_script(report, files); },
      output_prefix);
}

std::string scaling_plan_data(const ScalingPlan& plan) {
  const auto low = [](const PlanValue& v, double scale) {
    return v.interval ? format_exact(v.interval->low * scale) : std::string("NaN");
  };
  const auto high = [](const PlanValue& v, double scale) {
    return v.interval ? format_exact(v.interval->high * scale) : std::string("NaN");
  };
  std::string out =
      fmt::format("# {}\n# Source: {}\n", one_line(plan.title), one_line(plan.source));
  out += "# Block 0, predicted: np efficiency(%) low high images/s low high\n";
  for (const auto& r : plan.rows)
    out += fmt::format("{} {} {} {} {} {} {}\n", r.np, format_exact(r.efficiency.value * 100),
                       low(r.efficiency, 100), high(r.efficiency, 100),
                       format_exact(r.images_per_second.value), low(r.images_per_second, 1),
                       high(r.images_per_second, 1));
  for (const bool held_out : {false, true}) {
    out += fmt::format("\n\n# Block {}, measured{}: np efficiency(%) images/s\n", held_out ? 2 : 1,
                       held_out ? " and held out of the fit" : " and fitted");
    bool any = false;
    for (const auto& r : plan.rows) {
      if (!r.measured_step_seconds || r.held_out != held_out) continue;
      const double rate = r.np * plan.batch / *r.measured_step_seconds;
      out += fmt::format("{} {} {}\n", r.np,
                         r.measured_efficiency ? format_exact(*r.measured_efficiency * 100) : "NaN",
                         format_exact(rate));
      any = true;
    }
    if (!any) out += "NaN NaN NaN\n";  // gnuplot needs every block to hold a line
  }
  return out;
}

std::string scaling_plan_script(const ScalingPlan& plan, const FigureFiles& files) {
  std::string out = fmt::format("# scalebench scaling model figure: {}\n", one_line(plan.title));
  out += script_preamble(files);
  out += "set style line 100 lc rgb '#e0e0e0' lw 1 dt 1\nset grid ls 100\n";
  out += "set logscale x 2\nset xlabel 'np (log scale)'\nset format x '%g'\n";
  out += "set key below center horizontal maxrows 2 samplen 3 spacing 1.1\n";
  out += "set style fill transparent solid 0.25 noborder\n";
  out += terminals(1000, 450);
  out += fmt::format("  set output {}.'.'.format\n", gnuplot_string(files.script.stem().string()));
  out += fmt::format("  set multiplot layout 1,2 title {} noenhanced\n",
                     gnuplot_string(plan.title + ": predicted and measured"));
  const std::string band = plan.replicates > 0 ? fmt::format("{:g}% interval", 100 * plan.level)
                                               : std::string("no interval (presets)");
  const auto panel = [&](int value_column, const std::string& measured_column) {
    return fmt::format(
        "  plot data index 0 using 1:{}:{} with filledcurves lt 1 title {}, \\\n"
        "       data index 0 using 1:{} with lines lt 1 title 'predicted', \\\n"
        "       data index 1 using 1:{} with points lt 2 pt 7 ps 1.3 title 'measured, fitted', "
        "\\\n"
        "       data index 2 using 1:{} with points lt 3 pt 9 ps 1.6 title 'measured, held out'\n",
        value_column + 1, value_column + 2, gnuplot_string(band), value_column, measured_column,
        measured_column);
  };
  out += "  set title 'Scaling efficiency'\n  set ylabel 'efficiency (%)'\n  set yrange [0:105]\n";
  out += "  unset logscale y\n";
  out += panel(2, "2");
  out += "  set title 'Throughput'\n  set ylabel 'images/s (log scale)'\n  set yrange [*:*]\n";
  out += "  set logscale y 10\n";
  out += panel(5, "3");
  out += "  unset multiplot\n  unset output\n}\n";
  return out;
}

FigureFiles plot_scaling_plan(const ScalingPlan& plan, const fs::path& prefix) {
  if (plan.rows.empty()) throw ReportError("nothing to plot: the model has no rows");
  return render(
      scaling_plan_data(plan),
      [&](const FigureFiles& files) { return scaling_plan_script(plan, files); }, prefix);
}

std::filesystem::path figure_prefix(const std::string& database_path, const std::string& experiment,
                                    const std::optional<std::string>& output) {
  namespace fs = std::filesystem;
  // The experiment's name comes from the database: it names a file, never a path.
  const std::string stem = safe_file_name(experiment) + "-scaling";
  if (!output) return fs::path(database_path).parent_path() / stem;
  const std::string& given = *output;
  if (given.empty()) throw ReportError("plot: --output is empty");
  std::error_code error;
  return given.ends_with('/') || fs::is_directory(given, error) ? fs::path(given) / stem
                                                                : fs::path(given);
}

}  // namespace scalebench::plotting
