// report --by with many levels (issue 37, item 7): at most two levels side by side per table in
// Markdown and LaTeX (the rest in tables under it, never a 36-column row), and a note the levels
// share said once.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {

const std::vector<std::string> kModels = {"mlp", "cnn", "vgg16", "resnet50", "inception_v3"};

// Five models, hvd at np 1, 2, 4, two runs each (so every level has the same 2-run note).
report::FactorReport five_levels() {
  std::vector<report::Run> runs;
  std::int64_t id = 0;
  double scale = 1;
  for (const auto& model : kModels) {
    scale *= 1.7;
    for (const int np : {1, 2, 4})
      for (const double jitter : {0.97, 1.03}) {
        report::Run run;
        run.id = ++id;
        run.experiment = "five";
        run.condition = "hvd";
        run.launcher = "mpirun";
        run.np = np;
        run.levels = {{"model", model}};
        run.epochs.emplace_back(1, scale * jitter * 8 / (np + 1));
        run.epochs.emplace_back(2, scale / jitter * 8 / (np + 1));
        run.train_images = 50000;
        runs.push_back(std::move(run));
      }
  }
  report::ReportOptions options;
  options.level_order = {{"model", kModels}};
  return report::build_factor_report("five", runs, "model", options);
}

}  // namespace

TEST_CASE("report --by, five levels in Markdown: tables of two levels, no row past 15 columns") {
  const auto markdown = report::make_exporter("markdown")->render(five_levels());
  // Levels 1-2, 3-4 and 5 (a level's block has 7 columns; the two-way ANOVA's table has 6).
  CHECK(test::occurrences(markdown, "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |") ==
        3);
  std::size_t widest = 0;
  for (std::size_t at = 0; at < markdown.size();) {
    const auto end = markdown.find('\n', at);
    const auto line = markdown.substr(at, end - at);
    if (line.starts_with("|")) widest = std::max(widest, test::occurrences(line, " |"));
    at = end + 1;
  }
  CHECK(widest == 1 + 2 * 7);
  // Each level heads a column block exactly once, in the file's order.
  std::size_t last = 0;
  for (const auto& model : kModels) {
    const auto at = markdown.find("| " + model + " Avg. epoch time");
    CHECK_MESSAGE(at != std::string::npos, model);
    CHECK(at > last);
    last = at;
  }
  // Every level has 2 runs per group: that note once, not five times.
  CHECK(test::occurrences(markdown, "Groups with 2 runs:") == 1);
  CHECK(markdown.find("model mlp, cnn, vgg16, resnet50, inception_v3:") == std::string::npos);
}

TEST_CASE("report --by, five levels in LaTeX: three tabulars in one table, the ANOVA under each") {
  const auto latex = report::make_exporter("latex")->render(five_levels());
  CHECK(test::occurrences(latex, "\\begin{table*}") == 1);
  CHECK(test::occurrences(latex, "\\begin{tabular}") >= 3);
  CHECK(test::occurrences(latex, "\\par\\medskip\n\\resizebox") ==
        2);  // the second and third under the first
  const auto first = latex.substr(0, latex.find("\\end{tabular}"));
  CHECK(first.find("mlp") != std::string::npos);
  CHECK(first.find("cnn") != std::string::npos);
  CHECK(first.find("vgg16") == std::string::npos);
  if (std::system("command -v lualatex >/dev/null 2>&1") != 0 ||
      std::system("kpsewhich luaotfload-main.lua >/dev/null 2>&1") != 0)
    SCALEBENCH_SKIP("lualatex is not installed (texlive-luatex)");
  test::TempDir dir;
  std::ofstream(dir / "t.tex")
      << "\\documentclass{article}\n\\usepackage[textwidth=6.5in]{geometry}"
         "\n\\usepackage{booktabs,dcolumn,graphicx}\n\\begin{document}\n"
      << latex << "\\end{document}\n";
  const auto command =
      "cd '" + dir.path().string() +
      "' && lualatex -interaction=nonstopmode -halt-on-error t.tex >/dev/null 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream log(dir / "t.log");
  const std::string text{std::istreambuf_iterator<char>(log), {}};
  CHECK(text.find("Overfull \\hbox") == std::string::npos);
}
