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

TEST_CASE("the factor figure's data: one block per level and condition, run-to-run SDs") {
  const auto data = plotting::factor_scaling_data(table2_report());
  // Launched series first (vgg16, inception_v3), then the single-process markers.
  CHECK(data.find("# index 0: vgg16\n1 11 NaN 90.9090909090909 NaN 90.9090909090909 100 NaN 1\n"
                  "2 7 NaN 142.85714285714286 NaN 181.8181818181818 78.57142857142858 NaN 1\n") !=
        std::string::npos);
  CHECK(data.find("# index 1: inception_v3\n1 5 NaN 200 NaN 200 100 NaN 1\n2 4 NaN 250 NaN 400 "
                  "62.5 NaN 1\n") != std::string::npos);
  CHECK(data.find("# index 2: vgg16, single\n1 11 ") != std::string::npos);
  CHECK(data.find("# index 3: inception_v3, single\n1 5 ") != std::string::npos);
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
  CHECK(script.find("set multiplot layout 1,3 title 't2 by model: error bars ±1 SD of the "
                    "run-to-run spread (1 run per point)'") != std::string::npos);
  CHECK(script.find("set title 'Scaling efficiency (dashed: linear scaling = 100%)'") !=
        std::string::npos);
  CHECK(script.find("100 with lines lc rgb '#404040' dt 2 lw 1.5 title 'linear scaling'") !=
        std::string::npos);
  // vgg16 is linetype 1 in every panel, its single marker too; inception_v3 is 2.
  CHECK(script.find("data index 0 using 1:7:(valid(8) ? $8 : 0) with yerrorlines lt 1 title "
                    "'vgg16'") != std::string::npos);
  CHECK(script.find("data index 3 using ($1-0.08):2:(valid(3) ? $3 : 0) with yerrorbars lt 2 pt "
                    "13 ps 1.6 title 'inception_v3, single'") != std::string::npos);
  CHECK(script.find("data index 1 using 1:6 with lines lt 2 dt 2 lw 1.5 notitle") !=
        std::string::npos);
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
