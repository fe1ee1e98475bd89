// The figures as print needs them (issue 37): a series told by colour and marker both, on a
// colour-blind-safe palette; panels on a grid at a column's width; intervals never cut by the axis
// except at 0 (and the caption says so); log axes; throughput in thousands; weak scaling named.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "plotting/figure.hpp"
#include "plotting/gnuplot_script.hpp"
#include "report/analysis/report.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {

// Runs of a two-condition, two-model np study: hvd and ddp at np 1, 2, 4, two runs each, epoch
// times `base / np^0.8` (+-10% between the runs); `images` per epoch (times np when per_rank).
std::vector<report::Run> study_runs(double base, long long images, bool per_rank) {
  std::vector<report::Run> runs;
  std::int64_t id = 0;
  for (const std::string condition : {"hvd", "ddp"})
    for (const std::string model : {"vgg16", "resnet50"})
      for (const int np : {1, 2, 4})
        for (const int rep : {1, 2}) {
          report::Run run;
          run.id = ++id;
          run.instance = 1;
          run.experiment = "study";
          run.condition = condition;
          run.launcher = "mpirun";
          run.np = np;
          run.repetition = rep;
          run.levels = {{"model", model}};
          const double seconds = (per_rank ? base : base / std::pow(np, 0.8)) *
                                 (model == "vgg16" ? 2 : 1) * (rep == 1 ? 0.9 : 1.1);
          run.epochs.emplace_back(1, seconds);
          run.epochs.emplace_back(2, seconds);
          run.train_images = per_rank ? images * np : images;
          runs.push_back(std::move(run));
        }
  return runs;
}

report::ReportTable study_table(double base = 10, long long images = 60000, bool per_rank = false) {
  return report::build_report("study", study_runs(base, images, per_rank));
}

report::FactorReport study_by_model() {
  return report::build_factor_report("study", study_runs(10, 60000, false), "model");
}

}  // namespace

TEST_CASE("every series has its own colour and marker, and the palette is Okabe and Ito's") {
  const auto script = plotting::scaling_script(study_table(), plotting::figure_files("f"));
  CHECK(script.find("set linetype 1 lc rgb '#0072B2'") != std::string::npos);
  CHECK(script.find("set linetype 2 lc rgb '#D55E00'") != std::string::npos);
  CHECK(script.find("set linetype 3 lc rgb '#009E73'") != std::string::npos);
  CHECK(script.find("set linetype cycle 7") != std::string::npos);
  // Four series (hvd and ddp by model): linetypes 1-4 with circle, square, triangle, inverted
  // triangle; the runs open markers of the same shapes.
  int type = 1;
  for (const auto& [filled, open] :
       std::vector<std::pair<int, int>>{{7, 6}, {5, 4}, {9, 8}, {11, 10}}) {
    CHECK(script.find(fmt::format("keyentry with linespoints lt {} pt {} title", type, filled)) !=
          std::string::npos);
    CHECK(script.find(fmt::format("with points lt {} pt {} ps 0.55", type, open)) !=
          std::string::npos);
    ++type;
  }
}

TEST_CASE("plot --by: two conditions of one level share its colour and differ by marker") {
  const auto report = study_by_model();
  const auto script = plotting::factor_scaling_script(report, plotting::figure_files("f"));
  // vgg16 is colour 1, resnet50 colour 2; hvd a circle, ddp a square, in both levels.
  CHECK(script.find("keyentry with linespoints lt 1 pt 7 title 'model = vgg16, hvd'") !=
        std::string::npos);
  CHECK(script.find("keyentry with linespoints lt 1 pt 5 title 'model = vgg16, ddp'") !=
        std::string::npos);
  CHECK(script.find("keyentry with linespoints lt 2 pt 7 title 'model = resnet50, hvd'") !=
        std::string::npos);
  CHECK(script.find("keyentry with linespoints lt 2 pt 5 title 'model = resnet50, ddp'") !=
        std::string::npos);
}

TEST_CASE("the plain figure of an np study has an efficiency panel, as the --by figure") {
  const auto script = plotting::scaling_script(study_table(), plotting::figure_files("f"));
  CHECK(script.find("  # Panel 1: Scaling efficiency\n") != std::string::npos);
  CHECK(script.find("plot 100 with lines lc rgb '#606060' dt 2 lw 1 notitle") != std::string::npos);
  CHECK(plotting::scaling_caption(study_table())
            .starts_with("study: scaling efficiency, mean epoch time and throughput against"));
}

TEST_CASE("at a column's width the panels go on a grid, the legend in the spare slot if it fits") {
  CHECK(plotting::detail::panel_grid(7, 3).columns == 3);
  CHECK(plotting::detail::panel_grid(7, 3).rows == 1);
  CHECK(plotting::detail::panel_grid(3.4, 3).columns == 2);
  CHECK(plotting::detail::panel_grid(3.4, 3).rows == 2);
  CHECK(plotting::detail::panel_grid(1.5, 2).columns == 1);
  CHECK(plotting::detail::panel_grid(1.5, 2).rows == 2);
  plotting::FigureStyle column;
  column.width_in = plotting::kColumnInches;
  column.font_pt = 8;
  column.title = false;
  // Short series names: the legend (6 rows) fits the spare slot beside the throughput panel.
  auto table = study_table();
  table.labels.text = {{"model=vgg16", "VGG"}, {"model=resnet50", "R50"}};
  const auto script = plotting::scaling_script(table, plotting::figure_files("f"), column);
  CHECK(script.find("  set origin 0.5, 0\n  set size 0.5, 1\n") != std::string::npos);
  CHECK(script.find("set key at screen 0.75, screen ") != std::string::npos);
  // Its height: two rows of 1.2 in plots with their axes, no legend rows under them.
  CHECK(script.find("set terminal pdfcairo size 3.4in,3.4in enhanced font 'sans,8'") !=
        std::string::npos);
  // The Table 2 style legend of long names does not fit the slot: it goes under the panels.
  const auto by =
      plotting::factor_scaling_script(study_by_model(), plotting::figure_files("f"), column);
  CHECK(by.find("set key at screen 0.5, screen ") != std::string::npos);
}

TEST_CASE("a bar reaching below 0 is cut at 0 and the caption says so") {
  auto table = study_table();
  for (auto& row : table.rows)
    row.mean_ci_lower = row.images_ci_lower = row.efficiency_ci_lower = std::nullopt;
  CHECK(plotting::scaling_caption(table).find("cut at 0") == std::string::npos);
  table.rows[1].mean_ci_lower = -3;  // 2 runs that disagree: an interval on 1 d.f.
  CHECK(plotting::scaling_caption(table).find(
            "a bar reaching below 0 is cut at 0, below which these quantities cannot be") !=
        std::string::npos);
  const auto script = plotting::scaling_script(table, plotting::figure_files("f"));
  CHECK(script.find("floor_at(low, start) = (low == low && low < start) ? start : low\n") !=
        std::string::npos);
  CHECK(script.find("using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with yerrorbars") !=
        std::string::npos);
  CHECK(test::occurrences(script, "  set yrange [0:*]\n") == 3);  // the axis takes every upper end
}

TEST_CASE("--log-y: epoch time and throughput on log axes from half the smallest value") {
  plotting::FigureStyle style;
  style.log_y = true;
  auto table = study_table();
  table.rows[1].mean_ci_lower = -3;
  const auto script = plotting::scaling_script(table, plotting::figure_files("f"), style);
  // Efficiency stays linear; the other two panels are log10 from half their smallest value.
  CHECK(test::occurrences(script, "  set logscale y 10\n") == 2);
  // Ending at the largest value, with ticks at 1, 2 and 5 times powers of ten (or finer).
  CHECK(test::occurrences(script, "  set autoscale yfixmax\n  set ytics (") == 2);
  double smallest = 1e300;
  for (const auto& row : table.rows) {
    for (const double v : row.run_epoch_seconds) smallest = std::min(smallest, v);
    if (row.mean_ci_lower && *row.mean_ci_lower > 0)
      smallest = std::min(smallest, *row.mean_ci_lower);
  }
  const auto floor = fmt::format("{:.6g}", smallest / 2);
  CHECK(script.find("  set logscale y 10\n  set yrange [" + floor + ":*]\n") != std::string::npos);
  CHECK(script.find("(floor_at($6, " + floor + "))") != std::string::npos);
  CHECK(script.find("set ylabel 'epoch time (s) (log)'") != std::string::npos);
  CHECK(plotting::scaling_caption(table, style)
            .find("a bar reaching 0 or below ends at the panel's bottom; epoch time and "
                  "throughput on log scales") != std::string::npos);
}

TEST_CASE("throughput past 10 000 images/s is drawn in thousands, labelled so") {
  const auto small = plotting::scaling_script(study_table(10, 600), plotting::figure_files("f"));
  CHECK(small.find("set ylabel 'images/s' noenhanced") != std::string::npos);
  CHECK(small.find("using 14:4 with linespoints") != std::string::npos);
  const auto large = plotting::scaling_script(study_table(10, 600000), plotting::figure_files("f"));
  CHECK(large.find("set ylabel 'images/s (×1000)' noenhanced") != std::string::npos);
  CHECK(large.find("using 14:($4/1000) with linespoints") != std::string::npos);
  CHECK(large.find("using 14:(bar(($4/1000), $8, $9)):(floor_at($8, 0)/1000):($9/1000) with "
                   "yerrorbars") != std::string::npos);
  CHECK(large.find("using 2:($4/1000) with points") != std::string::npos);  // the runs
  CHECK(large.find("using 14:($5/1000) with lines") != std::string::npos);  // linear scaling
}

TEST_CASE("--figure-width: column, page or inches") {
  CHECK(plotting::parse_figure_width("column", 6.5) == 3.4);
  CHECK(plotting::parse_figure_width("page", 6.5) == 6.5);
  CHECK(plotting::parse_figure_width("4.25", 6.5) == 4.25);
  for (const char* bad : {"", "wide", "0.5", "41", "3in", "-3", "nan", "1e1"})
    CHECK_THROWS_WITH_AS(plotting::parse_figure_width(bad, 7), doctest::Contains("--figure-width"),
                         report::ReportError);
}
