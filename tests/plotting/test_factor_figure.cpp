// plot --by FACTOR (issue 11): the data and script of Figure 2, and the rendered files.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "plotting/figure.hpp"
#include "report/factor_samples.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

report::FactorReport table2_report() {
  return report::build_factor_report("t2", test::table2_samples(), "model",
                                     test::table2_file_order());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("the factor figure's data: one block per level and condition, the unit's intervals") {
  const auto data = plotting::factor_scaling_data(table2_report());
  // Launched series first (vgg16, inception_v3), then the single-process markers, then the runs
  // of each. The unit is epoch here (the paper's): the intervals are the epochs' t intervals.
  CHECK(data.find("# index 0: vgg16\n"
                  "1 11 1.4142135623730951 90.9090909090909 90.9090909090909 -1.7062047361746941 "
                  "23.706204736174694 28.63845756619851 288.5791872978438 100 NaN NaN 1 0.98\n"
                  "2 7 1.4142135623730951 142.85714285714286 181.8181818181818 -5.706204736174694 "
                  "19.706204736174694 23.258555079450492 877.4475970494497 78.57142857142858 "
                  "32.94000012676021 187.4155848208338 1 1.98\n") != std::string::npos);
  CHECK(data.find("# index 1: inception_v3\n1 5 ") != std::string::npos);
  CHECK(data.find("# index 2: vgg16, single\n1 11 ") != std::string::npos);
  CHECK(data.find("# index 3: inception_v3, single\n1 5 ") != std::string::npos);
  CHECK(data.find("# index 4: runs of vgg16\n1 1.08 11 90.9090909090909 100 1\n2 2.08 7 "
                  "142.85714285714286 78.57142857142858 1\n") != std::string::npos);
  CHECK(data.find("# index 7: runs of inception_v3, single\n1 0.78 5 200 100 1\n") !=
        std::string::npos);
  CHECK(data.find("sd_run") == std::string::npos);
}

TEST_CASE("the run-to-run SD is that of the runs' means, not of the epochs") {
  auto samples = test::table2_samples();
  // A second vgg16 np=2 run with mean 9: run means 7 and 9, SD sqrt(2).
  test::add_model_run(samples, 7, "hvd", "mpirun", 2, "vgg16", {8, 10});
  const auto report =
      report::build_factor_report("t2", samples, "model", test::table2_file_order());
  const auto& row = report.blocks[0].rows[2];
  REQUIRE(row.sd_run_epoch_seconds);
  CHECK(*row.sd_run_epoch_seconds == doctest::Approx(std::sqrt(2.0)));
  // The epoch SD (of 6, 8, 8, 10: sqrt(8/3)) differs; the caption says which one is drawn.
  CHECK(*row.sd_epoch_seconds != doctest::Approx(std::sqrt(2.0)));
}

TEST_CASE("the factor figure's script: three panels, the ideal lines, one colour per level") {
  const auto files = plotting::figure_files("out/t2-by-model-scaling");
  const auto script = plotting::factor_scaling_script(table2_report(), files);
  CHECK(script.find("do for [format in 'svg png pdf']") != std::string::npos);
  CHECK(script.find("set terminal pdfcairo") != std::string::npos);
  CHECK(script.find("set label 1 't2 by model, 1 run per point'") != std::string::npos);
  CHECK(script.find("  # Panel 1: Scaling efficiency\n") != std::string::npos);
  CHECK(script.find("  # Panel 2: Mean epoch time\n") != std::string::npos);
  CHECK(script.find("  # Panel 3: Throughput\n") != std::string::npos);
  CHECK(script.find("set title 'Scaling efficiency' offset 0,-0.4 noenhanced") !=
        std::string::npos);
  CHECK(script.find("plot 100 with lines lc rgb '#606060' dt 2 lw 1 notitle") != std::string::npos);
  // vgg16 is linetype 1 in every panel, its single marker too; inception_v3 is 2.
  CHECK(script.find("data index 0 using 14:(bar($10, $11, $12)):(floor_at($11, 0)):12 with "
                    "yerrorbars lt 1 pt 7 notitle") != std::string::npos);
  CHECK(script.find("data index 3 using 14:(bar($2, $6, $7)):(floor_at($6, 0)):7 with yerrorbars "
                    "lt 2 pt 13 ps 1.3 "
                    "notitle") != std::string::npos);
  CHECK(script.find("data index 1 using 14:5 with lines lt 2 dt 2 lw 1 notitle") !=
        std::string::npos);
  // The single-process markers are not in the efficiency panel.
  const auto efficiency = script.substr(0, script.find("# Panel 2"));
  CHECK(efficiency.find("data index 2 ") == std::string::npos);
  CHECK(script.find("keyentry with points lt 2 pt 13 ps 1.3 title 'model = inception_v3, "
                    "single'") != std::string::npos);
  CHECK(script.find("data = 't2-by-model-scaling.dat'") != std::string::npos);
}

TEST_CASE("gnuplot renders the factor figure as SVG, PNG and PDF") {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    SCALEBENCH_SKIP("gnuplot is not installed");
    return;
  }
  test::TempDir dir;
  const auto files = plotting::plot_factor_scaling(table2_report(), dir / "fig");
  const auto svg = read_file(files.svg);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("inception_v3, single") != std::string::npos);
  CHECK(svg.find("Scaling efficiency") != std::string::npos);
  CHECK(read_file(files.png).substr(1, 3) == "PNG");
  CHECK(read_file(files.pdf).substr(0, 5) == "%PDF-");
  CHECK(fs::exists(files.data));
  CHECK(fs::exists(files.script));
}
