// Figures a reviewer accepts (issue 26, item 3): the runs beside each mean, one error-bar
// definition (the CI of the mean under the report's unit) in both figures, readable legends, no
// interval on the efficiency's reference, no efficiency panel without a second np, and the print
// options (--size, --font-size, --no-title) in the script. Read from the data files' text.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "plotting/figure.hpp"
#include "report/analysis/report_assembly.hpp"
#include "report/data/load_runs.hpp"
#include "report/factor_samples.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

// The blocks of a figure's data file by their `# index N: name` line: the name and the rows.
struct Block {
  std::string name;
  std::vector<std::vector<double>> rows;
};

std::vector<Block> blocks_of(const std::string& data) {
  std::vector<Block> blocks;
  std::istringstream in(data);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# index ", 0) == 0) {
      REQUIRE(std::stoul(line.substr(8)) == blocks.size());  // in order
      blocks.push_back({line.substr(line.find(": ") + 2), {}});
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    REQUIRE_FALSE(blocks.empty());
    std::istringstream fields(line);
    std::vector<double> row;
    for (std::string field; fields >> field;)
      row.push_back(field == "NaN" ? std::nan("") : std::stod(field));
    blocks.back().rows.push_back(row);
  }
  return blocks;
}

// Table 2 quick (12 runs: single np 1 and hvd np 1, 2 per model, 2 runs each), loaded the way the
// CLI loads it, under `unit`.
class Table2Fixture {
 public:
  Table2Fixture() {
    fs::copy_file(test::data_dir() / "db" / "table2-quick.db", path_);  // never open the original
  }
  report::FactorReport by_model(const std::string& unit) const {
    const auto database = db::Database::open(path_.string(), db::OpenMode::ReadOnly);
    return report::factor_report_of(
        report::load_runs(database, report::InstanceQuery{}, {}, {.allreduce_runs = true}), "model",
        std::nullopt, unit);
  }
  report::ReportTable table(const std::string& unit) const {
    const auto database = db::Database::open(path_.string(), db::OpenMode::ReadOnly);
    return report::report_of(report::load_runs(database, report::InstanceQuery{}), std::nullopt,
                             unit);
  }
  const fs::path& path() const { return path_; }

 private:
  test::TempDir dir_;
  fs::path path_ = dir_ / "t2.db";
};

// The rows of the factor report in the order of the data file's series (launched series of each
// level, then the single-process ones): matched by level and launcher.
std::vector<const report::ReportRow*> rows_of_series(const report::FactorReport& report,
                                                     const std::string& level, bool single) {
  std::vector<const report::ReportRow*> rows;
  for (std::size_t b = 0; b < report.levels.size(); ++b)
    if (report.levels[b] == level)
      for (const auto& row : report.blocks[b].rows)
        if ((row.launcher == "single") == single) rows.push_back(&row);
  return rows;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("the factor figure's data has every run as a point of its own block") {
  const Table2Fixture fixture;
  const auto report = fixture.by_model("run");
  const auto blocks = blocks_of(plotting::factor_scaling_data(report));
  // 4 series (vgg16, inception_v3, and their single-process rows), then their 4 blocks of runs.
  REQUIRE(blocks.size() == 8);
  CHECK(blocks[4].name == "runs of vgg16");
  CHECK(blocks[7].name == "runs of inception_v3, single");
  std::size_t points = 0, runs = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    for (const auto& row : blocks[i].rows) runs += static_cast<std::size_t>(row[12]);
    points += blocks[4 + i].rows.size();
  }
  CHECK(runs == 12);
  CHECK(points == 12);  // one point per run, none more
  // The runs of vgg16 at np 2 are the row's own values, each with its np, epoch time and images/s.
  const auto vgg16 = rows_of_series(report, "vgg16", false);
  REQUIRE(vgg16.size() == 2);
  const auto& np2 = *vgg16[1];
  REQUIRE(np2.run_epoch_seconds.size() == 2);
  std::vector<std::vector<double>> at_np2;
  for (const auto& row : blocks[4].rows)
    if (row[0] == 2) at_np2.push_back(row);
  REQUIRE(at_np2.size() == 2);
  for (std::size_t j = 0; j < 2; ++j) {
    CHECK(at_np2[j][2] == doctest::Approx(np2.run_epoch_seconds[j]));
    CHECK(at_np2[j][3] == doctest::Approx(np2.run_images_per_second[j]));
    // Beside the mean (right of np 2, within a fifth of the step), apart from each other.
    CHECK(at_np2[j][1] > 2);
    CHECK(at_np2[j][1] < 2.2);
  }
  CHECK(at_np2[0][1] != at_np2[1][1]);
  // The run means' mean is the row's mean under the run unit.
  CHECK((at_np2[0][2] + at_np2[1][2]) / 2 == doctest::Approx(np2.mean_epoch_seconds));
}

TEST_CASE("the figures' error bars are the report's confidence intervals, one definition") {
  const Table2Fixture fixture;
  const auto report = fixture.by_model("run");
  const auto blocks = blocks_of(plotting::factor_scaling_data(report));
  const auto check_series = [&](const Block& block,
                                const std::vector<const report::ReportRow*>& rows) {
    REQUIRE(block.rows.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = *rows[i];
      const auto& d = block.rows[i];
      CAPTURE(r.label);
      CHECK(d[0] == r.np);
      CHECK(d[1] == doctest::Approx(r.mean_epoch_seconds));
      REQUIRE(r.mean_ci_lower);
      CHECK(d[5] == doctest::Approx(*r.mean_ci_lower));
      CHECK(d[6] == doctest::Approx(*r.mean_ci_upper));
      REQUIRE(r.images_ci_lower);
      CHECK(d[7] == doctest::Approx(*r.images_ci_lower));
      CHECK(d[8] == doctest::Approx(*r.images_ci_upper));
      if (r.efficiency_ci_lower) {
        CHECK(d[10] == doctest::Approx(*r.efficiency_ci_lower * 100));
        CHECK(d[11] == doctest::Approx(*r.efficiency_ci_upper * 100));
      }
    }
  };
  check_series(blocks[0], rows_of_series(report, "vgg16", false));
  check_series(blocks[1], rows_of_series(report, "inception_v3", false));
  check_series(blocks[2], rows_of_series(report, "vgg16", true));
  // The script draws those columns as the bars, nothing else: no SD, no fallback to the mean.
  const auto script =
      plotting::factor_scaling_script(report, plotting::figure_files("out/t2-by-model"));
  CHECK(script.find(
            "data index 0 using 14:(bar($10, $11, $12)):(floor_at($11, 0)):12 with yerrorbars") !=
        std::string::npos);
  CHECK(
      script.find("data index 0 using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with yerrorbars") !=
      std::string::npos);
  CHECK(
      script.find("data index 0 using 14:(bar($4, $8, $9)):(floor_at($8, 0)):9 with yerrorbars") !=
      std::string::npos);
  CHECK(script.find("valid(") == std::string::npos);
  CHECK(script.find("bar(y, low, high) = (low == low && high == high) ? y : NaN\n") !=
        std::string::npos);  // an unknown end (NaN) draws no bar at all
  CHECK(script.find("SD") == std::string::npos);
  // Named in the key and in the data file's comments.
  CHECK(script.find("title 'mean ± 95% CI'") != std::string::npos);
  CHECK(plotting::factor_scaling_caption(report).find("95% CI of the mean, unit run") !=
        std::string::npos);
  CHECK(plotting::factor_scaling_data(report).find(
            "# Error bars, one definition everywhere: the 95% CI of the mean, unit run") !=
        std::string::npos);
  CHECK(plotting::factor_scaling_caption(report).find("Bars: the 95% CI of the mean, unit run") !=
        std::string::npos);
}

TEST_CASE("the efficiency's reference point has no interval: 100% by definition") {
  const Table2Fixture fixture;
  const auto blocks = blocks_of(plotting::factor_scaling_data(fixture.by_model("run")));
  for (std::size_t i : {0, 1}) {  // the launched series: np 1 is the reference
    const auto& np1 = blocks[i].rows.at(0);
    REQUIRE(np1[0] == 1);
    CHECK(np1[9] == 100);
    CHECK(std::isnan(np1[10]));
    CHECK(std::isnan(np1[11]));
    const auto& np2 = blocks[i].rows.at(1);
    CHECK_FALSE(std::isnan(np2[10]));  // np 2 has one
  }
}

TEST_CASE("plot --by draws the unit's intervals: run, nested and epoch differ") {
  const Table2Fixture fixture;
  const auto run = plotting::factor_scaling_data(fixture.by_model("run"));
  const auto nested = plotting::factor_scaling_data(fixture.by_model("nested"));
  const auto epoch = plotting::factor_scaling_data(fixture.by_model("epoch"));
  CHECK(run != nested);
  CHECK(run != epoch);
  const auto run_blocks = blocks_of(run), nested_blocks = blocks_of(nested),
             epoch_blocks = blocks_of(epoch);
  // vgg16 at np 2: the intervals of its epoch time differ with the unit...
  CHECK(run_blocks[0].rows[1][5] != doctest::Approx(nested_blocks[0].rows[1][5]));
  CHECK(run_blocks[0].rows[1][5] != doctest::Approx(epoch_blocks[0].rows[1][5]));
  // ...while the runs drawn are the same runs.
  CHECK(run_blocks[4].rows == nested_blocks[4].rows);
  CHECK(nested.find("unit nested") != std::string::npos);
  const auto script =
      plotting::factor_scaling_script(fixture.by_model("epoch"), plotting::figure_files("out/t2"));
  CHECK(script.find("# Caption: horovodrunner-table2-quick by model: scaling efficiency, mean "
                    "epoch time and throughput against the number of processes, one colour per "
                    "level of model (2 runs per point). Bars: the 95% CI of the mean, unit "
                    "epoch") != std::string::npos);
}

TEST_CASE("the main figure: runs, the intervals of epoch time and images/s, and its caption") {
  const Table2Fixture fixture;
  const auto table = fixture.table("run");
  const auto blocks = blocks_of(plotting::scaling_data(table));
  REQUIRE(blocks.size() == 8);  // 4 series, 4 blocks of runs
  std::size_t points = 0;
  for (std::size_t i = 4; i < 8; ++i) points += blocks[i].rows.size();
  CHECK(points == 12);
  CHECK(blocks[0].name == "hvd model=vgg16");
  const auto& base = table.rows[2];  // hvd model=vgg16 np=1
  REQUIRE(base.label == "hvd model=vgg16 np=1");
  CHECK(blocks[0].rows[0][5] == doctest::Approx(*base.mean_ci_lower));
  CHECK(blocks[0].rows[0][8] == doctest::Approx(*base.images_ci_upper));
  const auto script = plotting::scaling_script(table, plotting::figure_files("out/t2"));
  CHECK(script.find("data index 4 using 2:3 with points lt 1 pt 6") != std::string::npos);
  CHECK(script.find(
            "data index 0 using 14:(bar($4, $8, $9)):(floor_at($8, 0)):9 with yerrorbars lt 1") !=
        std::string::npos);
  CHECK(plotting::scaling_caption(table).find("open markers: the individual runs") !=
        std::string::npos);
}

namespace {

// Labels added after the tables were built (figures read them from the tables).
void add_labels(report::ReportTable& table, const report::Labels& labels) {
  for (const auto& [key, text] : labels.text) table.labels.text[key] = text;
}
void add_labels(report::FactorReport& report, const report::Labels& labels) {
  for (const auto& [key, text] : labels.text) report.labels.text[key] = text;
  for (auto& block : report.blocks) add_labels(block, labels);
}

}  // namespace

TEST_CASE("legends name the factor with the level, or the labels") {
  const Table2Fixture fixture;
  auto report = fixture.by_model("run");
  const auto files = plotting::figure_files("out/t2");
  auto script = plotting::factor_scaling_script(report, files);
  CHECK(script.find("title 'model = vgg16'") != std::string::npos);
  CHECK(script.find("title 'model = inception_v3, single'") != std::string::npos);
  report::Labels labels;
  labels.text = {{"model", "Model"}, {"vgg16", "VGG-16"}, {"single", "Single process"}};
  add_labels(report, labels);
  script = plotting::factor_scaling_script(report, files);
  CHECK(script.find("title 'VGG-16'") != std::string::npos);
  CHECK(script.find("title 'Model = inception_v3, Single process'") != std::string::npos);
  // The data file keeps the stored names, for scripts that read it.
  CHECK(plotting::factor_scaling_data(report).find("# index 0: vgg16\n") != std::string::npos);

  auto table = fixture.table("run");
  CHECK(plotting::scaling_script(table, files).find("title 'hvd, model = vgg16'") !=
        std::string::npos);
  add_labels(table, labels);
  labels.text = {{"hvd", "Horovod"}, {"np", "GPUs"}};
  add_labels(table, labels);
  script = plotting::scaling_script(table, files);
  CHECK(script.find("title 'Horovod, VGG-16'") != std::string::npos);
  CHECK(script.find("title 'Single process, Model = inception_v3'") != std::string::npos);
  CHECK(script.find("set xlabel 'GPUs' noenhanced") != std::string::npos);
}

TEST_CASE("a study with one np has no efficiency panel and no linear-scaling line") {
  auto samples = test::table2_samples();
  std::erase_if(samples, [](const report::Run& s) { return s.np != 1; });
  const auto report =
      report::build_factor_report("t2", samples, "model", test::table2_file_order());
  const auto files = plotting::figure_files("out/t2");
  const auto script = plotting::factor_scaling_script(report, files);
  CHECK(script.find("Scaling efficiency") == std::string::npos);
  CHECK(script.find("efficiency (%)") == std::string::npos);
  CHECK(script.find("# Panel 1: Mean epoch time") != std::string::npos);
  CHECK(script.find("# Panel 2: Throughput") != std::string::npos);
  CHECK(script.find("# Panel 3") == std::string::npos);
  CHECK(script.find("using 14:5") == std::string::npos);  // no ideal line
  CHECK(script.find("linear scaling") == std::string::npos);
  CHECK(plotting::factor_scaling_caption(report).find("efficiency") == std::string::npos);
  // The full study has the panel, first.
  const auto full = plotting::factor_scaling_script(
      report::build_factor_report("t2", test::table2_samples(), "model", test::table2_file_order()),
      files);
  CHECK(full.find("# Panel 1: Scaling efficiency") != std::string::npos);
  CHECK(full.find("100 with lines") != std::string::npos);
}

TEST_CASE("reference lines stay within the data's np and the panel's range") {
  const Table2Fixture fixture;
  const auto script =
      plotting::factor_scaling_script(fixture.by_model("run"), plotting::figure_files("out/t2"));
  // The linear-scaling lines are drawn from the series' own rows (np 1 to 2), and every panel
  // autoscales to what it draws (bars, runs and lines included) from 0: nothing is cut off.
  CHECK(script.find("data index 0 using 14:5 with lines lt 1 dt 2") != std::string::npos);
  CHECK(script.find("rate_max") == std::string::npos);
  CHECK(script.find("set xrange [0.5:2.5]") != std::string::npos);
  std::size_t ranges = 0;
  for (auto at = script.find("set yrange [0:*]"); at != std::string::npos;
       at = script.find("set yrange [0:*]", at + 1))
    ++ranges;
  CHECK(ranges == 3);
}

TEST_CASE("--size, --font-size and --no-title reach the script, the defaults without them") {
  const Table2Fixture fixture;
  const auto report = fixture.by_model("run");
  const auto files = plotting::figure_files("out/t2");
  const auto defaults = plotting::factor_scaling_script(report, files);
  CHECK(defaults.find("set terminal pdfcairo size 7in,") != std::string::npos);
  CHECK(defaults.find("font 'sans,9' fontscale 0.75") != std::string::npos);
  CHECK(defaults.find("set terminal pngcairo size 1050,") != std::string::npos);
  CHECK(defaults.find("set terminal svg size 672,") != std::string::npos);
  CHECK(defaults.find("set title 'Mean epoch time'") != std::string::npos);
  CHECK(defaults.find("set label 1 'horovodrunner-table2-quick by model, 2 runs per point'") !=
        std::string::npos);

  plotting::FigureStyle column;
  column.width_in = 3.5;
  column.height_in = 4.2;
  column.font_pt = 8;
  column.title = false;
  const auto small = plotting::factor_scaling_script(report, files, column);
  CHECK(small.find("set terminal pdfcairo size 3.5in,4.2in enhanced font 'sans,8' fontscale "
                   "0.75") != std::string::npos);
  CHECK(small.find("set terminal pngcairo size 525,630 enhanced font 'sans,8'") !=
        std::string::npos);
  CHECK(small.find("set terminal svg size 336,403 dynamic enhanced font 'sans,10.67'") !=
        std::string::npos);
  // Three panels on a column: two rows of two (the legend too wide for the spare slot, under).
  CHECK(small.find("  # Panel 3: Throughput\n  reset\n") != std::string::npos);
  CHECK(small.find("  set origin 0.5, 0\n  set size 0.5, 1\n") != std::string::npos);
  CHECK(small.find("set title") == std::string::npos);
  CHECK(small.find("set label 1") == std::string::npos);
  // The same options on the main figure and the model's.
  const auto table = plotting::scaling_script(fixture.table("run"), files, column);
  CHECK(table.find("size 3.5in,4.2in") != std::string::npos);
  CHECK(table.find("set title") == std::string::npos);

  // Too small for its legend and axes: an error that says what to change.
  plotting::FigureStyle tiny;
  tiny.width_in = 2;
  tiny.height_in = 1;
  CHECK_THROWS_WITH_AS(plotting::factor_scaling_script(report, files, tiny),
                       doctest::Contains("give a larger --size"), report::ReportError);
  plotting::FigureStyle huge_font;
  huge_font.font_pt = 100;
  CHECK_THROWS_AS(plotting::factor_scaling_script(report, files, huge_font), report::ReportError);
}

TEST_CASE("--size is WIDTHxHEIGHT in inches") {
  CHECK(plotting::parse_figure_size("3.5x2.6") == std::pair<double, double>{3.5, 2.6});
  CHECK(plotting::parse_figure_size("7X3") == std::pair<double, double>{7, 3});
  for (const char* bad : {"3.5", "x2", "3.5x", "0x2", "3.5x2.6in", "-3x2", "3x2x1", "50x2", "1e1x2",
                          " 3x2", "nanxinf"})
    CHECK_THROWS_WITH_AS(plotting::parse_figure_size(bad), doctest::Contains("--size"),
                         report::ReportError);
}

TEST_CASE("scalebench plot passes --size, --font-size and --no-title to the figure") {
  const fs::path binary = test::binary_dir() / "scalebench";
  if (!fs::exists(binary)) SCALEBENCH_SKIP("the scalebench binary is not built");
  const Table2Fixture fixture;
  test::TempDir out;
  // Without gnuplot the command fails but leaves the script: it is read either way.
  const std::string command = binary.string() + " plot --db '" + fixture.path().string() +
                              "' --by model --size 3.5x4.2 --font-size 8 --no-title -o '" +
                              (out / "fig").string() + "' >/dev/null 2>&1";
  (void)std::system(command.c_str());
  const auto script = read_file(out / "fig.gp");
  CHECK(script.find("set terminal pdfcairo size 3.5in,4.2in enhanced font 'sans,8'") !=
        std::string::npos);
  CHECK(script.find("set title") == std::string::npos);
  const std::string refused = binary.string() + " plot --db '" + fixture.path().string() +
                              "' --size 3.5 -o '" + (out / "bad").string() + "' >/dev/null 2>&1";
  CHECK(std::system(refused.c_str()) != 0);
  CHECK_FALSE(fs::exists(out / "bad.gp"));
}

TEST_CASE("gnuplot draws no bar at the efficiency's reference and a bar at np 2") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    SCALEBENCH_SKIP("gnuplot not found (apt-get install gnuplot-nox)");
  const Table2Fixture fixture;
  const auto report = fixture.by_model("run");
  test::TempDir dir;
  const auto files = plotting::figure_files(dir / "fig");
  std::ofstream(files.data) << plotting::factor_scaling_data(report);
  // The script's own bar definition and efficiency element, tabulated instead of drawn.
  const auto script = plotting::factor_scaling_script(report, files);
  // From `start` to the end of its line, or of its plot element (`notitle`).
  const auto text_of = [&](const std::string& start, const std::string& end) {
    const auto at = script.find(start);
    REQUIRE(at != std::string::npos);
    return script.substr(at, script.find(end, at) + end.size() - at);
  };
  std::ofstream(dir / "check.gp") << "data = 'fig.dat'\n"
                                  << text_of("bar(y, low, high)", "\n")
                                  << text_of("floor_at(low, start)", "\n")
                                  << "set table 'table.txt'\nplot "
                                  << text_of("data index 0 using 14:(bar($10", "notitle")
                                  << "\nunset table\n";
  const std::string command =
      "cd '" + dir.path().string() + "' && gnuplot check.gp >/dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  const auto table = read_file(dir / "table.txt");
  INFO(table);
  // np 1 (x 0.98): undefined, so nothing is drawn; np 2: a bar from its interval.
  CHECK(table.find(" 0.98  NaN ") != std::string::npos);
  CHECK(table.find(" u\n") != std::string::npos);
  CHECK(table.find(" 1.98  64.83") != std::string::npos);
}
