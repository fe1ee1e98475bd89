#include "plotting/figure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/process.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <system_error>

#include "plotting/gnuplot_script.hpp"
#include "report/export/format.hpp"
#include "report/export/output_file.hpp"

namespace scalebench::plotting {

using namespace report;  // the tables, formats and errors it draws
using namespace detail;
using scaling::PlanValue;
using scaling::ScalingPlan;
namespace {

namespace bp = boost::process;
namespace fs = std::filesystem;

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

namespace detail {

FigureFiles render(const std::string& data,
                   const std::function<std::string(const FigureFiles&)>& script,
                   const fs::path& output_prefix) {
  const FigureFiles files = figure_files(output_prefix);
  // All five checked first: none is written when one is refused.
  for (const fs::path& file : {files.data, files.script, files.svg, files.png, files.pdf})
    check_output_target(file);
  // The script before any file or folder: a style out of its limits is refused here.
  const std::string script_text = script(files);
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
  write_file_replacing(staged.script, script_text);
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
    // "./": a script named "-fig.gp" is a file, not an option.
    bp::child child(gnuplot, "./" + files.script.filename().string(),
                    bp::start_dir(work.path().string()), bp::std_in<bp::null, bp::std_out> bp::null,
                    bp::std_err > stderr_stream);
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

}  // namespace detail

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
  // Efficiency against the measured mean step at np 1 (as the table's measured efficiency).
  std::optional<double> single;
  for (const auto& r : plan.rows)
    if (r.np == 1 && r.measured_step_seconds) single = *r.measured_step_seconds;
  const auto efficiency = [&](double step) {
    return single ? format_exact(*single / step * 100) : std::string("NaN");
  };
  for (const bool held_out : {false, true}) {
    out += fmt::format(
        "\n\n# Block {}, measured means{}: np efficiency(%) low high images/s low high (the "
        "mean's t interval; the mean itself with one run)\n",
        held_out ? 2 : 1, held_out ? " held out of the fit" : " fitted");
    bool any = false;
    for (const auto& r : plan.rows) {
      if (!r.measured_step_seconds || r.held_out != held_out) continue;
      const double mean = *r.measured_step_seconds;
      const auto rate = [&](double step) { return format_exact(r.np * plan.batch / step); };
      // A longer step is a lower efficiency and rate: the interval's high end is their low.
      const double slow = r.measured_step_interval ? r.measured_step_interval->high : mean;
      const double fast = r.measured_step_interval ? r.measured_step_interval->low : mean;
      out += fmt::format("{} {} {} {} {} {} {}\n", r.np, efficiency(mean), efficiency(slow),
                         efficiency(fast), rate(mean), rate(slow), rate(fast));
      any = true;
    }
    if (!any) out += "NaN NaN NaN NaN NaN NaN NaN\n";  // gnuplot needs every block to hold a line
  }
  out += "\n\n# Block 3, measured runs: np efficiency(%) images/s (each run's mean step)\n";
  bool any_run = false;
  for (const auto& r : plan.rows)
    for (double step : r.measured_run_steps) {
      out +=
          fmt::format("{} {} {}\n", r.np, efficiency(step), format_exact(r.np * plan.batch / step));
      any_run = true;
    }
  if (!any_run) out += "NaN NaN NaN\n";
  return out;
}

std::string scaling_plan_caption(const ScalingPlan& plan, const std::string& experiment) {
  const std::string band =
      plan.replicates == 0
          ? "the prediction (no interval: every input given)"
          : fmt::format("the prediction with its {:g}% {}", 100 * plan.level,
                        plan.model_error ? "band (the bootstrap and the model's own error)"
                                         : "bootstrap interval (run-to-run noise only)");
  const bool measured = std::any_of(plan.rows.begin(), plan.rows.end(), [](const auto& r) {
    return r.measured_step_seconds.has_value();
  });
  std::string caption = fmt::format("The scaling model of {}: {}", experiment, band);
  if (measured)
    caption += fmt::format(
        "; each measured run as a small open circle and the mean of each np with its {:g}% "
        "t interval as a bar (held-out np marked apart)",
        100 * plan.level);
  caption += ".";
  if (plan.replicates > 0)
    caption += " " + scaling::band_coverage_statement(plan.model_error.has_value());
  return caption;
}

std::string scaling_plan_script(const ScalingPlan& plan, const FigureFiles& files,
                                const FigureStyle& style) {
  std::string out = fmt::format("# scalebench scaling model figure: {}\n", one_line(plan.title));
  out += script_preamble(files);
  out += "set style line 100 lc rgb '#e0e0e0' lw 1 dt 1\nset grid ls 100\n";
  // Side by side from two panels of 2.6 in; narrower (a column), one above the other, each with
  // the width its legend needs.
  const bool stacked = style.width_in.value_or(7.0) < 2 * 2.6;
  Canvas canvas = canvas_of(style, 2);
  if (stacked && !style.height_in) canvas.height_in *= 2;
  out += "set logscale x 2\nset xlabel 'np (log scale)'\nset format x '%g'\n";
  // Powers of two, as many as fit a panel with room for "1024" (5 characters) each.
  int max_np = 1;
  for (const auto& r : plan.rows) max_np = std::max(max_np, r.np);
  const double tic_in = 5 * 0.6 * canvas.em();
  const int fit = std::max(2, static_cast<int>(canvas.width_in / (stacked ? 1 : 2) / tic_in));
  int factor = 2;
  while (std::log2(max_np) / std::log2(factor) > fit - 1) factor *= 2;
  out += fmt::format("set xtics 1, {}\n", factor);
  out += "set key below center horizontal maxrows 2 samplen 3 spacing 1.1\n";
  out += "set style fill transparent solid 0.25 noborder\n";
  out += terminals(canvas);
  out += fmt::format("  set output {}.'.'.format\n", gnuplot_string(files.script.stem().string()));
  if (canvas.title)
    out += fmt::format("  set multiplot layout {} title {} noenhanced\n", stacked ? "2,1" : "1,2",
                       gnuplot_string(plan.title + ": predicted and measured"));
  else
    out += fmt::format("  set multiplot layout {}\n", stacked ? "2,1" : "1,2");
  const auto title = [&](std::string_view text) {
    return canvas.title ? fmt::format("  set title '{}'\n", text) : std::string("  unset title\n");
  };
  // With the model's own error in it the band is a prediction band, not a bootstrap interval.
  const std::string band = plan.replicates == 0 ? std::string("no interval (presets)")
                           : plan.model_error
                               ? fmt::format("{:g}% band", 100 * plan.level)
                               : fmt::format("{:g}% CI (refits only)", 100 * plan.level);
  // Each np's mean with its t interval as a bar; the runs as small dark open circles on top.
  const auto panel = [&](int value_column, int mean_column, int run_column) {
    return fmt::format(
        "  plot data index 0 using 1:{}:{} with filledcurves lt 1 title {}, \\\n"
        "       data index 0 using 1:{} with lines lt 1 title 'predicted', \\\n"
        "       data index 1 using 1:{}:{}:{} with yerrorbars lt 2 pt 7 ps 0.6 "
        "title 'mean ± CI, fitted', \\\n"
        "       data index 2 using 1:{}:{}:{} with yerrorbars lt 3 pt 9 ps 0.8 "
        "title 'held out', \\\n"
        "       data index 3 using 1:{} with points pt 6 ps 0.4 lc rgb '#303030' "
        "title 'runs'\n",
        value_column + 1, value_column + 2, gnuplot_string(band), value_column, mean_column,
        mean_column + 1, mean_column + 2, mean_column, mean_column + 1, mean_column + 2,
        run_column);
  };
  out += title("Scaling efficiency") + "  set ylabel 'efficiency (%)'\n  set yrange [0:105]\n";
  out += "  unset logscale y\n";
  out += panel(2, 2, 2);
  out += title("Throughput") + "  set ylabel 'images/s (log scale)'\n  set yrange [*:*]\n";
  out += "  set logscale y 10\n";
  out += panel(5, 5, 3);
  out += "  unset multiplot\n  unset output\n}\n";
  return out;
}

FigureFiles plot_scaling_plan(const ScalingPlan& plan, const fs::path& prefix,
                              const FigureStyle& style) {
  if (plan.rows.empty()) throw ReportError("nothing to plot: the model has no rows");
  return render(
      scaling_plan_data(plan),
      [&](const FigureFiles& files) { return scaling_plan_script(plan, files, style); }, prefix);
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
