// The LaTeX and HTML exporters: the emitted text (escaping, p-values in math mode, caption, no
// script; LaTeX's aligned columns, separators, labels, notes and the side-by-side --by table), then
// the real thing: the LaTeX compiled by pdflatex with only booktabs, dcolumn and graphicx (no
// overfull box; --by fits an article's line unscaled), and the HTML page rendered by headless
// Chromium, its pixels read back to find the figure.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "column_decimals.hpp"
#include "factor_samples.hpp"
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
  CHECK(text.find("\\begin{table*}[tbp]") != std::string::npos);
  CHECK(text.find("\\toprule") != std::string::npos);
  CHECK(text.find("\\bottomrule") != std::string::npos);
  CHECK(text.find("Unit of analysis: run") != std::string::npos);
  CHECK(text.find("base: mpirun np=1") != std::string::npos);
  CHECK(text.find("& $3.20 \\times 10^{-12}$ &") != std::string::npos);  // Tukey p, a cell
  CHECK(text.find("& 0.43 &") != std::string::npos);
  CHECK(text.find("$F(3, 18) = 1119.95$, $p = 2.77 \\times 10^{-258}$") != std::string::npos);
  CHECK(text.find("a\\_b \\& c \\#1 \\{x\\} \\$y \\textasciitilde{}z \\textasciicircum{}w "
                  "\\textbackslash{}v $<$i$>$``q''$<$/i$>$") != std::string::npos);
  CHECK(text.find("exp\\_1 50\\% \\& $<$b$>$") != std::string::npos);
  CHECK(text.find("% host: node 01\n") != std::string::npos);  // provenance as a comment
  // The interval in a row of its own, under its value.
  // The times' column at the decimals of its smallest value (0.0512 s: 4), its interval too.
  CHECK(text.find("mpirun np=2 & 21.8400 & ") != std::string::npos);
  CHECK(text.find("\\\\\n & \\multicolumn{1}{c}{\\scriptsize [20.1000, 23.5800]} & ") !=
        std::string::npos);
  CHECK(text.find("\\label{tab:exp-1-50-----b--run}") != std::string::npos);
}

namespace {

// The sample table as a paper would have it: a large rate, intervals, notes of every kind.
report::ReportTable paper_table() {
  auto table = test::sample_table();
  table.rows[1].images_per_second = 160938.08;
  table.rows[2].images_per_second = 250123.4;
  table.rows[2].images_ci_lower = 240001.2;
  table.rows[2].images_ci_upper = 260456.7;
  table.notes = {
      "Measured in instance 1 (started 2026-11-24T19:09:11.586430Z, finished; 9 of 9 runs ok).",
      "Unit of analysis: one run (its mean epoch time); N = runs (docs/statistics.md, \"Unit of "
      "analysis\").",
      "Last epochs without an end-of-epoch line end later than the epoch: 1 at the process's exit "
      "(they include what the program did after training; docs/metrics.md, \"The last epoch\").",
      "For claims use --unit run or nested, not np=1 epochs."};
  return table;
}

// The lines of `text` that are not comments.
std::string without_comments(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (!line.starts_with("%")) out += line + "\n";
  return out;
}

report::FactorReport labelled_factor_report() {
  auto options = test::table2_file_order();
  for (const auto* label : {"hvd=Horovod", "single=Single process", "model=Model",
                            "model=inception_v3=Inception V3", "vgg16=VGG-16"})
    report::add_label_argument(options.labels, label);
  return report::build_factor_report("t2", test::table2_samples(), "model", options);
}

}  // namespace

TEST_CASE("LaTeX: decimal-aligned columns, thin-space thousands, notes short, the rest comments") {
  const auto text = report::make_exporter("latex")->render(paper_table());
  CAPTURE(text);
  CHECK(text.find("(needs \\usepackage{booktabs,dcolumn,graphicx})") != std::string::npos);
  // The tabular's columns: decimal-aligned numbers (dcolumn), the p-values right-aligned text.
  CHECK(text.find("\\begin{tabular}{@{}lD{.}{.}{2.4}D{.}{.}{1.2}rD{.}{.}{7.0}D{.}{.}{3.2}"
                  "D{.}{.}{3.1}@{}}") != std::string::npos);
  CHECK(text.find("& 160\\,900 &") != std::string::npos);  // 4 significant figures
  CHECK(text.find("[240\\,000, 260\\,500]") != std::string::npos);
  CHECK(text.find("160938") == std::string::npos);
  CHECK(text.find("& \\multicolumn{1}{c}{N.A.} &") != std::string::npos);  // text in a D column
  CHECK(text.find("\\multicolumn{1}{c}{\\begin{tabular}[b]{@{}c@{}}Efficiency\\\\{}(\\%)") !=
        std::string::npos);
  const auto visible = without_comments(text);
  // Timestamps, the unit's explanation and documentation paths only in comments.
  CHECK(text.find("% Note: Measured in instance 1 (started 2026-11-24T19:09") != std::string::npos);
  CHECK(visible.find("2026-11-24") == std::string::npos);
  CHECK(visible.find("docs/") == std::string::npos);
  CHECK(visible.find("N = runs") == std::string::npos);
  CHECK(visible.find("Last epochs without an end-of-epoch line end later than the epoch: 1 at "
                     "the process's exit (they include what the program did after training).") !=
        std::string::npos);
  // Options never as en dashes, np in math.
  CHECK(visible.find("--unit") == std::string::npos);
  CHECK(visible.find("\\texttt{-{}-unit} run or nested, not $\\mathit{np} = 1$ epochs") !=
        std::string::npos);
}

TEST_CASE("LaTeX --digits: significant figures of every column's smallest value, CSV unchanged") {
  // Two figures for each column's smallest value: 0.0512 s gives the times 3 decimals, 1.65 the
  // SDs 1, 1.00 the speed-ups 1, 85% the efficiency 0; images/s keeps 4 figures.
  const auto two = report::make_exporter("latex", {2})->render(paper_table());
  CHECK(two.find("mpirun np=2 & 21.840 & 1.6 & 0.43 & 250\\,100 & 1.7 & 85 \\\\") !=
        std::string::npos);
  CHECK(report::make_exporter("markdown", {2})->render(paper_table()) !=
        report::make_exporter("markdown")->render(paper_table()));
  CHECK(report::make_exporter("csv", {2})->render(paper_table()) ==
        report::make_exporter("csv")->render(paper_table()));
  CHECK_THROWS_AS(report::make_exporter("latex", {0}), report::ReportError);
  CHECK_THROWS_AS(report::LatexExporter({16}), report::ReportError);
}

TEST_CASE("LaTeX and HTML: one number of decimals per column, images/s at 4 figures grouped") {
  const auto latex = report::make_exporter("latex")->render(test::decimals_table());
  CAPTURE(latex);
  CHECK(latex.find("\\begin{tabular}{@{}lD{.}{.}{1.3}D{.}{.}{1.4}rD{.}{.}{7.0}D{.}{.}{1.2}"
                   "D{.}{.}{3.1}@{}}") != std::string::npos);
  CHECK(latex.find("mpirun np=1 & 1.270 & 0.0213 & N.A. & 269\\,800 & 1.00 & 100.0 \\\\\n"
                   " & \\multicolumn{1}{c}{\\scriptsize [1.200, 1.340]} & & & "
                   "\\multicolumn{1}{c}{\\scriptsize [266\\,500, 273\\,300]} & & \\\\\n") !=
        std::string::npos);
  CHECK(latex.find("mpirun np=2 & 0.827 & 0.1520 & 0.0032 & 516\\,200 & 1.54 & 76.8 \\\\\n"
                   " & \\multicolumn{1}{c}{\\scriptsize [0.610, 1.044]} & & & "
                   "\\multicolumn{1}{c}{\\scriptsize [480\\,000, 552\\,500]} & "
                   "\\multicolumn{1}{c}{\\scriptsize [1.20, 1.90]} & "
                   "\\multicolumn{1}{c}{\\scriptsize [60.0, 95.0]} \\\\\n") != std::string::npos);

  const auto page = report::make_exporter("html")->render(test::decimals_table());
  CAPTURE(page);
  CHECK(page.find("<tr><td>mpirun np=1</td><td>1.270 [1.200, 1.340]</td><td>0.0213</td>"
                  "<td>N.A.</td><td>269&#8239;800 [266&#8239;500, 273&#8239;300]</td><td>1.00</td>"
                  "<td>100.0%</td></tr>") != std::string::npos);
  CHECK(page.find("<tr><td>mpirun np=2</td><td>0.827 [0.610, 1.044]</td><td>0.1520</td>"
                  "<td>p=0.0032</td><td>516&#8239;200 [480&#8239;000, 552&#8239;500]</td>"
                  "<td>1.54 [1.20, 1.90]</td><td>76.8% [60.0%, 95.0%]</td></tr>") !=
        std::string::npos);
  // Every cell of a numeric column at the same decimals, in both formats.
  const auto cells = [](const std::string& text, const std::string& open, const std::string& close,
                        std::size_t column) {
    std::vector<std::string> out;
    for (auto at = text.find(open); at != std::string::npos; at = text.find(open, at + 1)) {
      const auto end = text.find(close, at);
      auto row = text.substr(at, end - at);
      for (std::size_t c = 0; c < column; ++c) row = row.substr(row.find("</td><td>") + 9);
      out.push_back(row.substr(0, row.find("</td>")));
    }
    return out;
  };
  for (const std::size_t c : {1, 2, 4, 5, 6}) {
    INFO("HTML column " << c);
    CHECK(test::decimals_in_column(cells(page, "<tr><td>mpirun", "</tr>", c)).size() == 1);
  }
  CHECK(page.find("269849") == std::string::npos);
  CHECK(latex.find("269849") == std::string::npos);

  // --decimals in both: every integer digit of images/s, the times at 1 decimal.
  const report::ExporterOptions set{std::nullopt, {{"images_per_second", 0}, {"epoch_time", 1}}};
  CHECK(report::make_exporter("latex", set)
            ->render(test::decimals_table())
            .find("mpirun np=1 & 1.3 & 0.0213 & N.A. & 269\\,849 & 1.00 & 100.0 \\\\") !=
        std::string::npos);
  CHECK(report::make_exporter("html", set)
            ->render(test::decimals_table())
            .find("<td>1.3 [1.2, 1.3]</td><td>0.0213</td><td>N.A.</td><td>269&#8239;849 "
                  "[266&#8239;453, 273&#8239;289]</td>") != std::string::npos);
}

TEST_CASE("LaTeX: a label per experiment, unit and --by factor, with no control sequence") {
  auto table = paper_table();
  const auto latex = report::make_exporter("latex");
  const auto run = latex->render(table);
  table.unit = "nested";
  const auto nested = latex->render(table);
  CHECK(run.find("\\label{tab:mnist-cnn-run}") != std::string::npos);
  CHECK(nested.find("\\label{tab:mnist-cnn-nested}") != std::string::npos);
  const auto by = latex->render(labelled_factor_report());
  CHECK(by.find("\\label{tab:t2-by-model-epoch}") != std::string::npos);
}

TEST_CASE("LaTeX --by: the levels side by side in one tabular, labels in every header") {
  const auto text = report::make_exporter("latex")->render(labelled_factor_report());
  CAPTURE(text);
  // The first tabular holds both levels (the others are the headers' and the two-way ANOVA's).
  const auto first = text.find("\\begin{tabular}{@{}l");
  REQUIRE(first != std::string::npos);
  CHECK(text.find("\\begin{tabular}{@{}l", first + 1) ==
        text.find("\\begin{tabular}{@{}lD{.}{.}{1.0}"));  // the next: the two-way ANOVA
  CHECK(text.find(" & \\multicolumn{3}{c}{VGG-16} & \\multicolumn{3}{c}{Inception V3} \\\\\n"
                  "\\cmidrule(lr){2-4}\\cmidrule(lr){5-7}\n") != std::string::npos);
  CHECK(text.find("Condition & \\multicolumn{1}{c}{\\begin{tabular}") != std::string::npos);
  CHECK(test::occurrences(text, "Speed-up\\\\{}[95\\% CI]") == 2);
  CHECK(text.find("\nHorovod, np = 2 & ") != std::string::npos);  // row labels by display_label
  CHECK(text.find("\nSingle process & ") != std::string::npos);
  CHECK(text.find("ANOVA & \\multicolumn{3}{c}{$F(") != std::string::npos);  // per level
  // Tukey letters as superscripts on the times.
  CHECK(text.find("^{\\mathrm{a}}") != std::string::npos);
  CHECK(text.find("Epoch time by Model, experiment t2") != std::string::npos);
  // The two-way ANOVA below, its terms by their labels.
  CHECK(text.find("Two-way ANOVA of condition Horovod: Model $\\times$ $\\mathit{np}$") !=
        std::string::npos);
  CHECK(text.find("\nModel $\\times$ $\\mathit{np}$ & 1 & ") != std::string::npos);
  // What the compact blocks leave out is said in a comment.
  CHECK(text.find("% Per level: epoch time") != std::string::npos);
  CHECK(without_comments(text).find("--") == std::string::npos);
}

namespace {

// `table` \input into an article (default width) compiled by pdflatex; with `natural`, the
// tabular at its natural width (the \resizebox that would shrink it disabled). Returns the log,
// or "" when pdflatex failed (the output is in INFO).
std::string compile_in_article(const fs::path& dir, const std::string& table, bool natural) {
  write(dir / "table.tex", table);
  write(dir / "paper.tex",
        std::string("\\documentclass{article}\n\\usepackage{booktabs,dcolumn,graphicx}\n") +
            (natural ? "\\renewcommand{\\resizebox}[3]{#3}\n" : "") +
            "\\begin{document}\n\\input{table.tex}\n\\end{document}\n");
  const auto command = "cd '" + dir.string() +
                       "' && pdflatex -interaction=nonstopmode -halt-on-error paper.tex "
                       ">pdflatex.out 2>&1";
  const int status = std::system(command.c_str());
  INFO(read(dir / "pdflatex.out"));
  CHECK(status == 0);
  if (status != 0) return "";
  CHECK(fs::file_size(dir / "paper.pdf") > 1000);
  return read(dir / "paper.log");
}

}  // namespace

TEST_CASE("LaTeX: the tables compile with a stock TeX Live, no overfull box, no warning") {
  SCALEBENCH_SKIP_IF(have("pdflatex")
                         ? std::nullopt
                         : std::optional<std::string>("pdflatex is not installed (Debian "
                                                      "texlive-latex-recommended)"));
  test::TempDir dir;
  const auto latex = report::make_exporter("latex");
  const auto unlabelled =
      report::build_factor_report("t2", test::table2_samples(), "model", test::table2_file_order());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hostile", latex->render(hostile_table())},
      {"paper", latex->render(paper_table())},
      {"paper, 2 digits", report::make_exporter("latex", {2})->render(paper_table())},
      {"decimals", latex->render(test::decimals_table())},
      {"by", latex->render(unlabelled)},
      {"by-labelled", latex->render(labelled_factor_report())}};
  for (const auto& [name, table] : cases) {
    INFO(name);
    fs::create_directory(dir / name);
    const auto log = compile_in_article(dir / name, table, false);
    CHECK(log.find("Overfull \\hbox") == std::string::npos);
    // No warning but the first run's "Label(s) may have changed" (no .aux yet).
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("LaTeX Warning") && line.find("Label(s) may have changed") == line.npos)
        CHECK_MESSAGE(false, line);
  }
  // Unscaled, the side-by-side table of this (wide-interval) sample is no more than a few percent
  // wider than an article's line: the \resizebox only touches it up. tests/cli checks that the
  // committed Table 2 database's fits unscaled.
  const auto log = compile_in_article(dir / "by", latex->render(unlabelled), true);
  CHECK(log.find("Overfull \\hbox") == std::string::npos);
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
  CHECK(page.find("<td>21.8400 [20.1000, 23.5800]</td>") != std::string::npos);  // 0.0512's 4
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

TEST_CASE(
    "HTML: every table scrolls inside its own box, so a wide --by table never widens the page") {
  const auto by =
      report::build_factor_report("t2", test::table2_samples(), "model", test::table2_file_order());
  const auto html = report::make_exporter("html")->render(by);
  CHECK(html.find("div.scroll { overflow-x: auto; max-width: 100%; }") != std::string::npos);
  const auto tables = test::occurrences(html, "<table");
  CHECK(tables >= 2);  // the blocks and the two-way ANOVA
  CHECK(test::occurrences(html, "<div class=\"scroll\"><table") == tables);
  CHECK(test::occurrences(html, "</table></div>") == tables);
}
