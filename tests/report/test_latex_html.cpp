// The LaTeX and HTML exporters: the emitted text (escaping, p-values in math mode, caption, no
// script), then the real thing: the LaTeX compiled by pdflatex with only booktabs and graphicx,
// and the HTML page rendered by headless Chromium, its pixels read back to find the figure.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "plotting/png_pixels.hpp"
#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"
#include "sample_table.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

bool have(const char* program) {
  return std::system(("command -v " + std::string(program) + " >/dev/null 2>&1").c_str()) == 0;
}

std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (have(name)) return name;
  return "";
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

report::ReportTable hostile_table() {
  auto table = test::sample_table();
  table.experiment = "exp_1 50% & <b>";
  table.rows[0].label = "a_b & c #1 {x} $y ~z ^w \\v <i>\"q\"</i>";
  table.provenance = {{"host", "node\n01"}};
  return table;
}

// A figure with one known colour: the series colour of the scaling figure.
constexpr const char* kCircleSvg =
    "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"no\"?>\n"
    "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
    "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"300\">"
    "<script>alert(1)</script>"
    "<circle cx=\"200\" cy=\"150\" r=\"120\" fill=\"#1f77b4\"/></svg>\n";

}  // namespace

TEST_CASE(
    "LaTeX: booktabs table, escaped text, p-values in math mode, caption with unit and base") {
  const auto text = report::make_exporter("latex")->render(hostile_table());
  CHECK(text.find("\\begin{table}[htbp]") != std::string::npos);
  CHECK(text.find("\\toprule") != std::string::npos);
  CHECK(text.find("\\bottomrule") != std::string::npos);
  CHECK(text.find("Unit of analysis: run") != std::string::npos);
  CHECK(text.find("base: mpirun np=1") != std::string::npos);
  CHECK(text.find("$p = 3.20 \\times 10^{-12}$") != std::string::npos);
  CHECK(text.find("$p = 0.43$") != std::string::npos);
  CHECK(text.find("$F(3, 18) = 1119.95$, $p = 2.77 \\times 10^{-258}$") != std::string::npos);
  CHECK(text.find("a\\_b \\& c \\#1 \\{x\\} \\$y \\textasciitilde{}z \\textasciicircum{}w "
                  "\\textbackslash{}v $<$i$>$``q''$<$/i$>$") != std::string::npos);
  CHECK(text.find("exp\\_1 50\\% \\& $<$b$>$") != std::string::npos);
  CHECK(text.find("% host: node 01\n") != std::string::npos);  // provenance as a comment
  // The interval sits under its value.
  CHECK(text.find("21.84\\\\{}\\scriptsize [20.10, 23.58]") != std::string::npos);
  CHECK(text.find("\\label{tab:scalebench-exp-1-50-----b-}") != std::string::npos);
}

TEST_CASE("LaTeX: the table compiles with a stock TeX Live") {
  SCALEBENCH_SKIP_IF(have("pdflatex")
                         ? std::nullopt
                         : std::optional<std::string>("pdflatex is not installed (Debian "
                                                      "texlive-latex-recommended)"));
  test::TempDir dir;
  write(dir / "table.tex", report::make_exporter("latex")->render(hostile_table()));
  write(dir / "paper.tex",
        "\\documentclass{article}\n\\usepackage{booktabs,graphicx}\n\\begin{document}\n"
        "\\input{table.tex}\n\\end{document}\n");
  const auto command = "cd '" + dir.path().string() +
                       "' && pdflatex -interaction=nonstopmode -halt-on-error paper.tex "
                       ">pdflatex.out 2>&1";
  const int status = std::system(command.c_str());
  INFO(read(dir / "pdflatex.out"));
  REQUIRE(status == 0);
  CHECK(fs::file_size(dir / "paper.pdf") > 1000);
  // Wide tables are scaled to the line: nothing sticks out of the text block.
  CHECK(read(dir / "paper.log").find("Overfull \\hbox") == std::string::npos);
}

TEST_CASE("HTML: one self-contained page, escaped, the figure inline, no script") {
  auto table = hostile_table();
  table.figure_svg = kCircleSvg;
  const auto page = report::make_exporter("html")->render(table);
  CHECK(page.find("<!DOCTYPE html>") == 0);
  CHECK(page.find("<table class=\"report\">") != std::string::npos);
  CHECK(page.find("a_b &amp; c #1 {x} $y ~z ^w \\v &lt;i&gt;&quot;q&quot;&lt;/i&gt;") !=
        std::string::npos);
  CHECK(page.find("<i>") == std::string::npos);
  CHECK(page.find("<figure>\n<svg xmlns") != std::string::npos);  // no XML prolog inline
  CHECK(page.find("<?xml") == std::string::npos);
  CHECK(page.find("<!DOCTYPE svg") == std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://www.w3.org/2000/svg") != std::string::npos);
  CHECK(page.find("<link") == std::string::npos);  // nothing fetched
  CHECK(page.find("<dt>host</dt><dd>node 01</dd>") != std::string::npos);
  CHECK(page.find("<td>21.84 [20.10, 23.58]</td>") != std::string::npos);
  CHECK(page.find("F(3, 18) = 1119.95, p=2.77e-258") != std::string::npos);
  // Without a figure, no figure element.
  CHECK(report::make_exporter("html")->render(hostile_table()).find("<figure>") ==
        std::string::npos);
}

TEST_CASE("HTML: headless Chromium renders the page with its table and its figure") {
  const auto browser = chromium();
  SCALEBENCH_SKIP_IF(
      browser.empty() ? std::optional<std::string>("no chromium to render with (Debian chromium)")
                      : std::nullopt);
  test::TempDir dir;
  auto table = hostile_table();
  table.figure_svg = kCircleSvg;
  write(dir / "report.html", report::make_exporter("html")->render(table));
  const auto flags =
      "--headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--window-size=1000,1400 --user-data-dir='" +
      (dir / "profile").string() + "'";
  const auto url = "file://" + (dir / "report.html").string();
  const auto screenshot = browser + " " + flags + " --screenshot='" + (dir / "page.png").string() +
                          "' '" + url + "' >chromium.out 2>&1";
  REQUIRE(std::system(("cd '" + dir.path().string() + "' && " + screenshot).c_str()) == 0);
  // The DOM Chromium built: the table's rows and the svg element are there.
  const auto dom_command = browser + " " + flags + " --dump-dom '" + url + "' >'" +
                           (dir / "dom.html").string() + "' 2>/dev/null";
  REQUIRE(std::system(dom_command.c_str()) == 0);
  const auto dom = read(dir / "dom.html");
  CHECK(dom.find("<td>mpirun np=2</td>") != std::string::npos);
  CHECK(dom.find("<circle") != std::string::npos);

  const auto image = test::read_png((dir / "page.png").string());
  REQUIRE(image.width == 1000);
  // Dark text pixels (the table) and the figure's blue (#1f77b4) are on the page.
  std::size_t dark = 0, blue = 0;
  for (std::uint32_t y = 0; y < image.height; ++y)
    for (std::uint32_t x = 0; x < image.width; ++x) {
      const auto* p = image.at(x, y);
      if (p[0] < 80 && p[1] < 80 && p[2] < 80) ++dark;
      if (std::abs(p[0] - 0x1f) < 12 && std::abs(p[1] - 0x77) < 12 && std::abs(p[2] - 0xb4) < 12)
        ++blue;
    }
  INFO("dark pixels ", dark, ", blue pixels ", blue);
  CHECK(dark > 2000);
  CHECK(blue > 20000);  // a circle of radius 120: about 45 000 pixels
}

TEST_CASE("Markdown: names and notes from a crafted database reach the terminal escaped") {
  auto table = test::sample_table();
  table.experiment = "exp\x1b]0;owned\x07";           // an OSC that retitles the terminal
  table.rows[0].label = "one\x1b[2J\xE2\x80\xAEtxt";  // clear screen, RIGHT-TO-LEFT OVERRIDE
  table.notes.push_back("note \x1b[31mred\xC2\x9B");  // colour, and the C1 CSI
  table.provenance = {{"host\x1b[8m", "node"}};
  const auto text = report::make_exporter("markdown")->render(table);
  CHECK_FALSE(test::has_raw_control(text));
  CHECK(text.find("\xE2\x80\xAE") == std::string::npos);
  CHECK(text.find("exp\\x1b]0;owned\\x07") != std::string::npos);
  CHECK(text.find("one\\x1b[2J\\u202etxt") != std::string::npos);
  CHECK(text.find("- note \\x1b[31mred\\u009b") != std::string::npos);
}
