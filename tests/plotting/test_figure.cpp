#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "plotting/figure.hpp"
#include "report/sample_table.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

report::ReportTable tiny_table() {
  report::ReportTable table;
  table.experiment = "tiny";
  table.base_label = "mpirun np=1";
  table.rows = {
      report::ReportRow{"mpirun np=1", "mpirun", "mpirun", 1, 1, 2, 10, 1, std::nullopt, 100, 1, 1,
                        true},
      report::ReportRow{"mpirun np=2", "mpirun", "mpirun", 2, 1, 1, 6, std::nullopt, 0.2, 100,
                        10.0 / 6, 0.5, false},
  };
  table.rows[0].mean_ci_lower = 8.5;
  table.rows[0].mean_ci_upper = 11.5;
  table.rows[0].runs = 2;
  table.rows[0].run_epoch_seconds = {9, 11};
  table.rows[0].run_images_per_second = {110, 90};
  table.rows[1].run_epoch_seconds = {6};
  table.rows[1].run_images_per_second = {100};
  return table;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Sets PATH for the lifetime of the object.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::string old_;
};

}  // namespace

TEST_CASE("figure files are the prefix plus an extension, dots in the prefix kept") {
  const auto files = plotting::figure_files("out/run-1.2");
  CHECK(files.svg == "out/run-1.2.svg");
  CHECK(files.png == "out/run-1.2.png");
  CHECK(files.data == "out/run-1.2.dat");
  CHECK(files.script == "out/run-1.2.gp");
}

TEST_CASE("the data file: one block per series, NaN for unknown values, the ideal line") {
  CHECK(plotting::scaling_data(tiny_table()) ==
        "# scalebench scaling data, experiment tiny\n"
        "# Error bars, one definition everywhere: the 95% CI of the mean, unit run (the t interval "
        "on the runs' means): mean_ci_* for the epoch time, images_ci_* for images/s, "
        "efficiency_ci_* for the efficiency (the delta method; none on the efficiency's reference, "
        "100% by definition). docs/report.md.\n"
        "# Blocks (gnuplot `index`) 0 to 0: one per series, by np; blocks 1 to 1: the runs of "
        "series 0 to 0, one line per run. Blocks are separated by two blank lines; NaN = "
        "unknown.\n"
        "# ideal_images_per_s = images_per_s / scaling_efficiency (linear scaling from the "
        "reference group); x = where the point is drawn (np, shifted so that series and runs do "
        "not hide each other)\n"
        "# Series: np mean_epoch_s sd_epoch_s images_per_s ideal_images_per_s mean_ci_lower "
        "mean_ci_upper images_ci_lower images_ci_upper efficiency_pct efficiency_ci_lower_pct "
        "efficiency_ci_upper_pct runs x\n"
        "# Runs: np x epoch_s images_per_s efficiency_pct run\n"
        "# index 0: mpirun\n"
        "1 10 1 100 100 8.5 11.5 NaN NaN 100 NaN NaN 2 1\n"
        "2 6 NaN 100 200 NaN NaN NaN NaN 50 NaN NaN 1 2\n"
        "\n"
        "\n"
        "# index 1: runs of mpirun\n"
        "1 1.06 9 110 110 1\n"
        "1 1.14 11 90 90 2\n"
        "2 2.1 6 100 50 1\n");
}

TEST_CASE("the data file puts single-process groups last, in their own block") {
  const std::string data = plotting::scaling_data(test::sample_table());
  CHECK(data.find("# index 0: mpirun\n"
                  "1 37.13 4.32 147.48 147.48 NaN NaN NaN NaN 100 NaN NaN 3 1\n"
                  "2 21.84 1.65 250.7 294.94117647058823 20.1 23.58 NaN NaN 85 NaN NaN 3 2\n"
                  "8 0.0512 NaN NaN NaN NaN NaN NaN NaN NaN NaN NaN 1 8\n"
                  "\n"
                  "\n"
                  "# index 1: single\n"
                  "1 29.77 4.12 183.94 147.152 NaN NaN NaN NaN 125 NaN NaN 1 0.907519\n") !=
        std::string::npos);
  // Rows without their runs' values (a hand-made table) get a placeholder line per runs block.
  CHECK(data.find("# index 3: runs of single\nNaN NaN NaN NaN NaN 0\n") != std::string::npos);
}

TEST_CASE("the script: the terminals at the default size, three panels, relative file names") {
  const auto files = plotting::figure_files("some/dir/tiny");
  const std::string script = plotting::scaling_script(tiny_table(), files);
  CHECK(script.find("# scalebench scaling figure, experiment tiny\n# Caption: tiny: scaling "
                    "efficiency, mean epoch time and throughput against the number of processes, "
                    "one colour and marker per series (1-2 runs per point). Bars: the 95% CI of "
                    "the mean, unit run (the t interval on the runs' means; for images/s and "
                    "efficiency the delta method; none at the reference np, whose efficiency is "
                    "100% by definition); open markers: the individual runs; dashed: linear "
                    "scaling.\n") == 0);
  CHECK(script.find("data = 'tiny.dat'\n") != std::string::npos);
  CHECK(script.find("some/dir") == std::string::npos);
  CHECK(script.find("do for [format in 'svg png pdf'] {\n") != std::string::npos);
  // 7 in wide; high enough for a 1.2 in plot area under the titles and above the axis and legend.
  CHECK(script.find("set terminal svg size 672,232 dynamic enhanced font 'sans,12'") !=
        std::string::npos);
  CHECK(script.find("set terminal pngcairo size 1050,362 enhanced font 'sans,9' fontscale 1.562") !=
        std::string::npos);
  CHECK(
      script.find("set terminal pdfcairo size 7in,2.41in enhanced font 'sans,9' fontscale 0.75") !=
      std::string::npos);
  CHECK(script.find("  set output 'tiny'.'.'.format\n") != std::string::npos);
  // An np study has an efficiency panel; three panels side by side, a third of the width each.
  CHECK(script.find("  # Panel 1: Scaling efficiency\n") != std::string::npos);
  CHECK(script.find("  # Panel 2: Mean epoch time\n") != std::string::npos);
  CHECK(script.find("  # Panel 3: Throughput\n") != std::string::npos);
  CHECK(script.find("  set origin 0.6667, 0\n  set size 0.3333, 1\n") != std::string::npos);
  CHECK(script.find("  set label 1 'tiny: scaling with the number of processes, 1-2 runs per "
                    "point' at screen 0.5") != std::string::npos);
  // Back to front: the runs, the bars (the CI columns), the means.
  CHECK(script.find("  plot data index 1 using 2:3 with points lt 1 pt 6 ps 0.55 lw 1 notitle, \\\n"
                    "       data index 0 using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with "
                    "yerrorbars lt 1 pt 7 "
                    "notitle, \\\n"
                    "       data index 0 using 14:2 with linespoints lt 1 pt 7 notitle\n") !=
        std::string::npos);
  CHECK(script.find("  plot data index 0 using 14:5 with lines lt 1 dt 2 lw 1 notitle, \\\n"
                    "       data index 1 using 2:4 with points lt 1 pt 6 ps 0.55 lw 1 notitle, \\\n"
                    "       data index 0 using 14:(bar($4, $8, $9)):(floor_at($8, 0)):9 with "
                    "yerrorbars lt 1 pt 7 "
                    "notitle, \\\n"
                    "       data index 0 using 14:4 with linespoints lt 1 pt 7 notitle\n") !=
        std::string::npos);
  // One legend under both panels: the series, then what the marks mean.
  CHECK(script.find("keyentry with linespoints lt 1 pt 7 title 'mpirun', \\\n"
                    "       keyentry with points lc rgb '#606060' pt 6 ps 0.55 lw 1 title 'runs', "
                    "\\\n"
                    "       keyentry with yerrorbars lc rgb '#606060' pt 7 title 'mean ± 95% CI', "
                    "\\\n"
                    "       keyentry with lines lc rgb '#606060' dt 2 lw 1 title 'linear "
                    "scaling'\n") != std::string::npos);
  CHECK(script.find("  unset multiplot\n  unset output\n}\n") != std::string::npos);
}

TEST_CASE("the script: log2 x beyond a 4x span, single-process marker and reference line") {
  const std::string script =
      plotting::scaling_script(test::sample_table(), plotting::figure_files("fig"));
  CHECK(script.find("  set logscale x 2\n  set xrange [0.707107:11.3137]\n  set xtics (1, 2, 8) "
                    "nomirror\n") != std::string::npos);
  CHECK(script.find("stats data index 1 using 2 nooutput name 'single1_time'\n") !=
        std::string::npos);
  CHECK(script.find("  plot single1_time_mean with lines lt 2 dt 3 lw 1 notitle, \\\n") !=
        std::string::npos);
  CHECK(script.find("data index 1 using 14:2 with points lt 2 pt 13 ps 1.3 notitle") !=
        std::string::npos);
  CHECK(script.find("keyentry with linespoints lt 2 dt 3 lw 1 pt 13 ps 1.3 title 'single'") !=
        std::string::npos);
}

TEST_CASE("the script quotes user text for gnuplot and turns off enhanced text for it") {
  auto table = tiny_table();
  table.experiment = "it's_a\ntest";
  const std::string script = plotting::scaling_script(table, plotting::figure_files("x"));
  CHECK(script.find("# scalebench scaling figure, experiment it's_a test\n") == 0);
  CHECK(script.find(
            "set label 1 'it'.\"'\".'s_a test: scaling with the number of processes, 1-2 runs per "
            "point' at screen 0.5, screen ") != std::string::npos);
  CHECK(script.find("noenhanced\n  plot -1 notitle") != std::string::npos);  // the legend's key
}

TEST_CASE("one panel when no group has a throughput") {
  auto table = tiny_table();
  for (auto& row : table.rows) row.images_per_second.reset(), row.scaling_efficiency.reset();
  const std::string script = plotting::scaling_script(table, plotting::figure_files("x"));
  CHECK(script.find("# Panel 1: Mean epoch time") != std::string::npos);
  CHECK(script.find("# Panel 2") == std::string::npos);
  CHECK(script.find("set size 1, 1\n  set bmargin") != std::string::npos);
  CHECK(script.find("images/s") == std::string::npos);
  CHECK(script.find("linear scaling") == std::string::npos);
}

TEST_CASE("an empty table is not plotted") {
  test::TempDir dir;
  report::ReportTable table;
  table.experiment = "empty";
  CHECK_THROWS_AS(plotting::plot_scaling(table, dir / "fig"), report::ReportError);
}

TEST_CASE("missing gnuplot is reported with the package to install") {
  test::TempDir dir;
  ScopedPath path(dir.path().string());
  CHECK_THROWS_WITH_AS(plotting::plot_scaling(tiny_table(), dir / "fig"),
                       doctest::Contains("gnuplot not found: apt-get install gnuplot-nox"),
                       report::ReportError);
  CHECK(fs::exists(dir / "fig.gp"));  // the script and data are there to render by hand
  CHECK(fs::exists(dir / "fig.dat"));
}

TEST_CASE("a failing gnuplot's stderr is in the error") {
  test::TempDir dir;
  const fs::path fake = dir / "gnuplot";
  std::ofstream(fake) << "#!/bin/sh\necho \"line 7: undefined variable: oops\" >&2\nexit 1\n";
  fs::permissions(fake, fs::perms::owner_all);
  ScopedPath path(dir.path().string());
  CHECK_THROWS_WITH_AS(plotting::plot_scaling(tiny_table(), dir / "out" / "fig"),
                       doctest::Contains("line 7: undefined variable: oops"), report::ReportError);
}

namespace {
// On PATH, where plot_scaling looks for it (a /usr/bin/gnuplot outside PATH does not count).
bool have_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }
}  // namespace

TEST_CASE("gnuplot renders the SVG and the PNG") {
  if (!have_gnuplot()) {
    SCALEBENCH_SKIP("gnuplot not found (apt-get install gnuplot-nox)");
  }
  test::TempDir dir;
  const auto files = plotting::plot_scaling(test::sample_table(), dir / "figures" / "mnist");
  CHECK(files.png == dir / "figures" / "mnist.png");
  for (const auto& path : {files.svg, files.png, files.data, files.script}) {
    REQUIRE(fs::exists(path));
    CHECK(fs::file_size(path) > 0);
  }
  const std::string png = read_file(files.png);
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  const std::string svg = read_file(files.svg);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("mnist-cnn: scaling with the number of processes") != std::string::npos);
}

namespace {

// The tiny table with hostile condition and experiment names: quotes, line breaks, a NUL,
// backquoted commands, a macro, a trailing backslash (which continues a gnuplot line).
report::ReportTable hostile_table(const fs::path& marker) {
  auto table = tiny_table();
  const std::string touch = "`touch " + marker.string() + "`";
  table.experiment = "evil' " + touch + " \\";
  table.rows[0].condition = "a'b\nset output '" + marker.string() + "'\n" + touch;
  table.rows[1].condition =
      std::string("c\0d\r@x \\", 8) + "'; system(\"touch " + marker.string() + "\") #";
  return table;
}

}  // namespace

TEST_CASE("hostile names stay text: every line of the script is one command or comment") {
  const auto table = hostile_table("/tmp/never");
  const std::string script = plotting::scaling_script(table, plotting::figure_files("x"));
  CHECK(script.find('\0') == std::string::npos);
  CHECK(script.find('\r') == std::string::npos);
  CHECK(script.find("title 'a'.\"'\".'b set output '.\"'\".'/tmp/never'.\"'\".' `touch "
                    "/tmp/never`', \\\n") != std::string::npos);
  CHECK(script.find("title 'c d @x \\'.\"'\".'; system(\"touch /tmp/never\") #', \\\n") !=
        std::string::npos);
  CHECK(script.find("set key at screen") < script.find("title 'a'."));  // a noenhanced key
  // The comment naming the experiment does not end in a backslash (it would swallow a line).
  CHECK(script.find("# scalebench scaling figure, experiment evil' `touch /tmp/never` \\ \n") == 0);
  const std::string data = plotting::scaling_data(table);
  CHECK(data.find("# index 0: a'b set output '/tmp/never' `touch /tmp/never`\n") !=
        std::string::npos);
}

TEST_CASE("gnuplot renders hostile names without running anything") {
  if (!have_gnuplot()) {
    SCALEBENCH_SKIP("gnuplot not found (apt-get install gnuplot-nox)");
  }
  test::TempDir dir;
  const fs::path marker = dir / "executed";
  const auto files = plotting::plot_scaling(hostile_table(marker), dir / "fig");
  CHECK_FALSE(fs::exists(marker));
  REQUIRE(fs::exists(files.svg));
  CHECK(fs::file_size(files.png) > 0);
  const std::string svg = read_file(files.svg);
  CHECK(svg.find("touch") != std::string::npos);  // drawn as text
}

TEST_CASE("plot_scaling refuses symlinks planted at its file names before writing any file") {
  test::TempDir dir;
  const fs::path prefix = dir / "fig";
  const auto files = plotting::figure_files(prefix);
  // One link, at the last file it would publish: nothing at all may be written.
  const fs::path victim = dir / "victim.pdf";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, files.pdf);
  CHECK_THROWS_WITH_AS(plotting::plot_scaling(tiny_table(), prefix),
                       doctest::Contains("fig.pdf: refusing to write there: it is a symbolic link"),
                       report::ReportError);
  CHECK(read_file(victim) == "precious");
  CHECK(fs::is_symlink(fs::symlink_status(files.pdf)));
  for (const auto& path : {files.svg, files.png, files.data, files.script})
    CHECK_FALSE(fs::exists(fs::symlink_status(path)));
  // Nothing left over: the victim and the link.
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 2);
}

TEST_CASE("plain plot on factor data: one series per level combination, never one zig-zag line") {
  // Two models at np 1 and 2 under one condition: two lines, each with its own levels in the
  // title, and a key that keeps all of them.
  report::ReportTable table;
  table.experiment = "t2";
  table.confidence = 0.95;
  table.unit = "run";
  for (const char* model : {"vgg16", "inception_v3"})
    for (int np : {1, 2}) {
      report::ReportRow row;
      row.condition = "hvd";
      row.launcher = "mpirun";
      row.np = np;
      row.label = std::string("hvd model=") + model + " np=" + std::to_string(np);
      row.levels = {{"model", model}};
      row.mean_epoch_seconds = std::string(model) == "vgg16" ? 2.0 / np : 0.7 / np;
      row.images_per_second = 100.0 * np;
      row.scaling_efficiency = 0.9;
      table.rows.push_back(row);
    }
  const auto data = plotting::scaling_data(table);
  CHECK(data.find("# index 0: hvd model=vgg16\n") != std::string::npos);
  CHECK(data.find("# index 1: hvd model=inception_v3\n") != std::string::npos);
  CHECK(data.find("# index 2: runs of hvd model=vgg16\n") != std::string::npos);
  CHECK(data.find("# index 4") == std::string::npos);
  const auto script = plotting::scaling_script(table, plotting::figure_files("t2"));
  CHECK(script.find("title 'hvd, model = vgg16'") != std::string::npos);
  CHECK(script.find("title 'hvd, model = inception_v3'") != std::string::npos);
}
