// scalebench paper as a user runs it, on the committed quickstart (labelled in its experiment
// file) and Table 2 databases (labelled on the command line): the directory's files, the labels
// in every table, the side-by-side Table 2 in one tabular, and main.tex compiled by lualatex with
// no error and no overfull box.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool have(const char* tool) {
  return std::system(("command -v " + std::string(tool) + " >/dev/null 2>&1").c_str()) == 0;
}

std::optional<std::string> missing_tools() {
  if (!have("gnuplot")) return "gnuplot is not installed (the figures)";
  return std::nullopt;
}

// main.tex is for LuaLaTeX (fontspec, any UTF-8): texlive-luatex.
std::optional<std::string> no_lualatex() {
  if (std::system("kpsewhich luaotfload-main.lua >/dev/null 2>&1") != 0 || !have("lualatex"))
    return "lualatex with luaotfload is not installed (texlive-luatex)";
  return std::nullopt;
}

// The width of a one-page PDF as pdfcairo writes it (its MediaBox), in points.
std::optional<double> pdf_width_pt(const fs::path& pdf) {
  const auto text = read(pdf);
  std::smatch box;
  if (!std::regex_search(text, box, std::regex("/MediaBox \\[ *0 +0 +([0-9.]+) +[0-9.]+ *\\]")))
    return std::nullopt;
  return std::stod(box[1]);
}

// lualatex twice (labels), in the bundle's directory, as main.tex's first line says; the log.
std::string compile(const fs::path& dir) {
  const auto command = "cd '" + dir.string() +
                       "' && lualatex -interaction=nonstopmode -halt-on-error main.tex "
                       ">lualatex.out 2>&1 && lualatex -interaction=nonstopmode -halt-on-error "
                       "main.tex >lualatex.out 2>&1";
  const int status = std::system(command.c_str());
  INFO(read(dir / "lualatex.out"));
  CHECK(status == 0);
  return read(dir / "main.log");
}

}  // namespace

TEST_CASE("paper: the quickstart, labelled in its experiment file, compiles without overfull box") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  const auto out = dir / "paper";
  const auto result = test::invoke({"paper", "--db", db, "-o", out.string()});
  INFO(result.err);
  REQUIRE(result.status == 0);
  for (const auto* file : {"main.tex", "provenance.tex", "index.html", "tables/quickstart.tex",
                           "figures/quickstart.pdf", "figures/quickstart.svg"})
    CHECK_MESSAGE(fs::exists(out / file), file);
  const auto table = read(out / "tables" / "quickstart.tex");
  CHECK(table.find("Single process") != std::string::npos);  // the file's labels
  CHECK(table.find("Open MPI, np = 2") != std::string::npos);
  CHECK(table.find("mpirun np=2") == std::string::npos);
  const auto main = read(out / "main.tex");
  CHECK(main.find("\\input{tables/quickstart}") != std::string::npos);
  // At the size it was drawn (6.5 in, the text width), placed where it stands, after its table.
  CHECK(main.find("\\begin{figure}[H]\n\\centering\n\\includegraphics{figures/quickstart}") !=
        std::string::npos);
  CHECK(main.find("\\input{tables/quickstart}") < main.find("figures/quickstart}"));
  CHECK(main.find("\\documentclass[10pt]{article}") != std::string::npos);
  CHECK(main.find("\\input{provenance}") != std::string::npos);
  const auto page = read(out / "index.html");
  CHECK(page.find("Open MPI, np = 2") != std::string::npos);
  CHECK(test::occurrences(page, "<svg") == 1);
  CHECK(test::occurrences(page, "<body>") == 1);  // the table's page went in as its body only
  CHECK(read(out / "provenance.tex").find("cpu\\_\\allowbreak{}model") != std::string::npos);
  SCALEBENCH_SKIP_IF(no_lualatex());
  const auto log = compile(out);
  CHECK(log.find("Overfull \\hbox") == std::string::npos);
  CHECK(log.find("LaTeX Warning: Reference") == std::string::npos);
  CHECK(fs::file_size(out / "main.pdf") > 10'000);
}

TEST_CASE("paper: Table 2 with --by and --label: both models' blocks side by side in one tabular") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto out = dir / "paper";
  const auto result =
      test::invoke({"paper", "--db", db, "-o", out.string(), "--by", "model", "--label",
                    "hvd=Horovod", "--label", "single=Single process", "--label", "model=Model",
                    "--label", "model=inception_v3=Inception V3", "--label", "vgg16=VGG-16"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const auto stem = std::string("horovodrunner-table2-quick");
  const auto by = read(out / "tables" / (stem + "-by-model.tex"));
  CHECK(test::occurrences(by, "\\begin{tabular}") >= 1);
  // Both levels head column blocks of the first tabular (side by side, not stacked).
  const auto first_end = by.find("\\end{tabular}");
  const auto first = by.substr(0, first_end);
  CHECK(first.find("VGG-16") != std::string::npos);
  CHECK(first.find("Inception V3") != std::string::npos);
  CHECK(first.find("\\cmidrule") != std::string::npos);
  CHECK(by.find("Horovod, np = 2") != std::string::npos);
  CHECK(by.find("hvd np=2") == std::string::npos);
  // vgg16's variances differ 757-fold: its block is Games-Howell's (report --pairwise auto).
  CHECK(by.find("(Tukey or Games-Howell, 95\\%)") != std::string::npos);
  CHECK(fs::exists(out / "figures" / (stem + "-by-model.pdf")));
  const auto main = read(out / "main.tex");
  CHECK(main.find("\\input{tables/" + stem + "-by-model}") != std::string::npos);
  // Labels are unique over the bundle's tables.
  std::set<std::string> labels;
  const std::regex label_re("\\\\label\\{([^}]*)\\}");
  for (const auto& entry : fs::directory_iterator(out / "tables")) {
    const auto text = read(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), label_re), end; it != end; ++it)
      CHECK_MESSAGE(labels.insert((*it)[1]).second, (*it)[1]);
  }
  SCALEBENCH_SKIP_IF(no_lualatex());
  const auto log = compile(out);
  CHECK(log.find("Overfull \\hbox") == std::string::npos);
}

TEST_CASE("paper --pairwise tukey: the pooled tables of a replication, and the command says it") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto out = dir / "paper";
  const auto result =
      test::invoke({"paper", "--db", db, "-o", out.string(), "--pairwise", "tukey"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const auto table = read(out / "tables" / "horovodrunner-table2-quick.tex");
  CHECK(table.find("(Tukey, 95\\%)") != std::string::npos);
  CHECK(table.find("Welch") == std::string::npos);
  CHECK(read(out / "main.tex").find("--pairwise tukey") != std::string::npos);
  CHECK(
      test::invoke({"paper", "--db", db, "-o", (dir / "p2").string(), "--pairwise", "x"}).status !=
      0);
}

TEST_CASE("paper --decimals: the LaTeX and HTML tables at those decimals, a bad one refused") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto out = dir / "paper";
  const auto result = test::invoke({"paper", "--db", db, "-o", out.string(), "--decimals",
                                    "epoch_time=1", "--decimals", "images_per_second=2"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const auto table = read(out / "tables" / "horovodrunner-table2-quick.tex");
  CHECK(table.find("hvd model=vgg16 np=2 & 1.5^{\\mathrm{abc}} & 0.1517 & 0.33 & 21.43 &") !=
        std::string::npos);
  CHECK(read(out / "index.html")
            .find("<td>hvd model=vgg16 np=2</td><td>1.5 [0.1, 2.9]</td><td>0.1517</td>") !=
        std::string::npos);
  CHECK(read(out / "main.tex").find("--decimals epoch_time=1 --decimals images_per_second=2") !=
        std::string::npos);
  const auto bad =
      test::invoke({"paper", "--db", db, "-o", (dir / "p2").string(), "--decimals", "epoch=1"});
  CHECK(bad.status != 0);
  CHECK(bad.err.find("--decimals 'epoch=1': unknown column 'epoch'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "p2"));
}

TEST_CASE("paper: a bad --label or unknown experiment fails with one line and writes nothing") {
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  const auto out = dir / "paper";
  const auto bad = test::invoke({"paper", "--db", db, "-o", out.string(), "--label", "hvd"});
  CHECK(bad.status != 0);
  CHECK(bad.err.find("--label 'hvd': expected KEY=TEXT") != std::string::npos);
  const auto typo = test::invoke({"paper", "--db", db, "-o", out.string(), "--label", "mpiru=MPI"});
  CHECK(typo.status != 0);
  CHECK(typo.err.find(
            "'mpiru' names no experiment, condition, launcher, factor, level, np or column of this "
            "experiment (did you mean 'mpirun'?)") != std::string::npos);
  const auto report_typo = test::invoke({"report", "--db", db, "--label", "singel=One"});
  CHECK(report_typo.status != 0);
  CHECK(report_typo.err.find("did you mean 'single'?") != std::string::npos);
  const auto unknown =
      test::invoke({"paper", "--db", db, "-o", out.string(), "--experiment", "nope"});
  CHECK(unknown.status != 0);
  CHECK(unknown.err.find("nope") != std::string::npos);
  CHECK(!fs::exists(out));
}

TEST_CASE("paper: two experiments, one section each, --by only where the factor exists") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "both.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", dir / "q.db");
  REQUIRE(test::invoke({"merge", "--into", db, (dir / "q.db").string()}).status == 0);
  const auto out = dir / "paper";
  const auto result =
      test::invoke({"paper", "--db", db, "-o", out.string(), "--experiment", "quickstart",
                    "--experiment", "horovodrunner-table2-quick", "--by", "model"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  CHECK(result.out.find("paper: --by left out of quickstart") != std::string::npos);
  const auto main = read(out / "main.tex");
  const auto first = main.find("\\section{quickstart}");
  const auto second = main.find("\\section{horovodrunner-table2-quick}");
  CHECK(first < second);
  CHECK(second != std::string::npos);
  CHECK(main.find("\\input{tables/horovodrunner-table2-quick-by-model}") > second);
  CHECK(!fs::exists(out / "tables" / "quickstart-by-model.tex"));
  CHECK(test::occurrences(read(out / "index.html"), "<svg") == 3);
}

TEST_CASE("paper: a model that cannot be fitted fails before anything is written") {
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  const auto out = dir / "paper";
  // The quickstart's runs form two series (single, mpirun): the model fits one.
  const auto result = test::invoke({"paper", "--db", db, "-o", out.string(), "--model"});
  CHECK(result.status != 0);
  CHECK(result.err.find("series") != std::string::npos);
  CHECK(!fs::exists(out));
}

TEST_CASE("paper refuses what it must not write over, before writing anything") {
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  const auto paper = [&](const fs::path& out, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"paper", "--db", db, "-o", out.string()};
    args.insert(args.end(), more.begin(), more.end());
    return test::invoke(args);
  };
  // -o names a file.
  std::ofstream(dir / "afile") << "x";
  CHECK(paper(dir / "afile").err.find("not a directory") != std::string::npos);
  // A user's own main.tex is never replaced.
  fs::create_directories(dir / "mine");
  std::ofstream(dir / "mine" / "main.tex") << "\\documentclass{article} my paper\n";
  const auto mine = paper(dir / "mine");
  CHECK(mine.status != 0);
  CHECK(mine.err.find("was not written by scalebench paper") != std::string::npos);
  CHECK(read(dir / "mine" / "main.tex") == "\\documentclass{article} my paper\n");
  // A planted tables/ link is not followed.
  fs::create_directories(dir / "victim");
  fs::create_directories(dir / "linked");
  fs::create_directory_symlink(dir / "victim", dir / "linked" / "tables");
  CHECK(paper(dir / "linked").err.find("a symbolic link") != std::string::npos);
  CHECK(fs::is_empty(dir / "victim"));
  // Model settings without --model say so.
  CHECK(paper(dir / "p", {"--fit-max-np", "4"}).err.find("add --model") != std::string::npos);
  CHECK(!fs::exists(dir / "p"));
}

TEST_CASE("paper: its own earlier bundle is replaced, the command line recorded quoted") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "t 2.db").string();  // a space to quote
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto out = dir / "paper";
  const std::vector<std::string> args = {"paper",   "--db",         db,
                                         "-o",      out.string(),   "--by",
                                         "model",   "--base",       "hvd model=vgg16 np=1",
                                         "--label", "hvd=Horovod's"};
  REQUIRE(test::invoke(args).status == 0);
  const auto again = test::invoke(args);  // --base serves the table and the --by blocks
  INFO(again.err);
  REQUIRE(again.status == 0);
  const auto provenance = read(out / "provenance.tex");
  CHECK(provenance.find("-\\allowbreak{}base 'hvd model=") != std::string::npos);
  const auto main = read(out / "main.tex");
  CHECK(main.find("--label 'hvd=Horovod'\\''s'") != std::string::npos);
  CHECK(main.find("--db '" + db + "'") != std::string::npos);
}

TEST_CASE("paper: file names that would clash are refused, a leading '_' is no option") {
  SCALEBENCH_SKIP_IF(missing_tools());
  SCALEBENCH_SKIP_IF(have("sqlite3") ? std::nullopt
                                     : std::optional<std::string>("sqlite3 is not installed"));
  test::TempDir dir;
  const auto db = (dir / "both.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", dir / "q.db");
  REQUIRE(test::invoke({"merge", "--into", db, (dir / "q.db").string()}).status == 0);
  // The quickstart renamed so that its table's file is the Table 2 --by table's.
  const auto rename = [&](const std::string& name) {
    const auto sql =
        "UPDATE experiments SET name = '" + name +
        "' WHERE name <> 'horovodrunner-table2-quick'; UPDATE runs SET experiment = '" + name +
        "' WHERE experiment <> 'horovodrunner-table2-quick';";
    REQUIRE(std::system(("sqlite3 '" + db + "' \"" + sql + "\"").c_str()) == 0);
  };
  rename("horovodrunner-table2-quick by model");
  const auto out = dir / "paper";
  const auto clash = test::invoke({"paper", "--db", db, "-o", out.string(), "--by", "model",
                                   "--experiment", "horovodrunner-table2-quick", "--experiment",
                                   "horovodrunner-table2-quick by model"});
  CHECK(clash.status != 0);
  CHECK(clash.err.find("would both be written as tables/horovodrunner-table2-quick-by-model.tex") !=
        std::string::npos);
  CHECK(!fs::exists(out));
  rename("_base");
  const auto underscore =
      test::invoke({"paper", "--db", db, "-o", out.string(), "--experiment", "_base"});
  INFO(underscore.err);
  CHECK(underscore.status == 0);
  CHECK(fs::exists(out / "figures" / "base.pdf"));
}

TEST_CASE(
    "paper writes only its own files: -o '', a user's provenance.tex or table refused first") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  const auto paper = [&](const fs::path& out) {
    return test::invoke({"paper", "--db", db, "-o", out.string()});
  };
  // An empty -o is refused (it wrote the bundle into the current directory).
  const auto empty = test::invoke({"paper", "--db", db, "-o", ""});
  CHECK(empty.status != 0);
  CHECK(empty.err.find("-o '': an empty directory name") != std::string::npos);
  // A user's own provenance.tex, or a table of the bundle's name, in a fresh directory: refused
  // naming it, and nothing of the bundle written (not even the figures, made first).
  for (const std::string own : {"provenance.tex", "tables/quickstart.tex", "figures/quickstart.png",
                                "index.html", ".scalebench-paper"}) {
    CAPTURE(own);
    const auto out = dir / ("mine-" + std::to_string(std::hash<std::string>{}(own)));
    fs::create_directories((out / own).parent_path());
    std::ofstream(out / own) << "mine\n";
    const auto refused = paper(out);
    CHECK(refused.status != 0);
    CHECK(refused.err.find((out / own).string() + ": exists and was not written by scalebench "
                                                  "paper") != std::string::npos);
    CHECK(read(out / own) == "mine\n");
    CHECK_FALSE(fs::exists(out / "main.tex"));
    CHECK_FALSE(fs::exists(out / "figures" / "quickstart.svg"));
  }
  // Its own bundle is replaced, every file listed in the manifest; a file it never wrote beside
  // them is left alone, and one planted at a bundle name after the manifest was made is refused.
  const auto out = dir / "paper";
  REQUIRE(paper(out).status == 0);
  const auto manifest = read(out / ".scalebench-paper");
  for (const char* file : {"main.tex", "index.html", "provenance.tex", "tables/quickstart.tex",
                           "figures/quickstart.pdf", "figures/quickstart.gp"})
    CHECK(manifest.find(std::string("\n") + file + "\n") != std::string::npos);
  std::ofstream(out / "notes.tex") << "mine\n";
  CHECK(paper(out).status == 0);
  CHECK(read(out / "notes.tex") == "mine\n");
}

TEST_CASE("paper: a bundle of the previous release (no manifest) is still replaced") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  const auto out = dir / "paper";
  REQUIRE(test::invoke({"paper", "--db", db, "-o", out.string()}).status == 0);
  fs::remove(out / ".scalebench-paper");  // as the previous release left its bundles
  const auto again = test::invoke({"paper", "--db", db, "-o", out.string()});
  INFO(again.err);
  CHECK(again.status == 0);
}

TEST_CASE("paper and plot: every printable ASCII character and UTF-8 in names and labels") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  std::string ascii;
  for (char c = 0x20; c < 0x7f; ++c) ascii += c;
  // A quote first and a doubled quote (gnuplot's '' escape broke on both), then every printable
  // character; labels in Greek, with arrows, in CJK and Korean for the other.
  // (--label splits KEY=TEXT at its last '=': the label has every character but '=', the title
  // all of them.)
  std::string no_equals = ascii;
  std::erase(no_equals, '=');
  const std::string first = "'" + no_equals + "''";
  const std::string second = "μs → 中文 한국어 ελληνικά ≤ ± ×";
  const std::vector<std::string> labels = {"--label", "single=" + first, "--label",
                                           "mpirun=" + second};
  std::vector<std::string> plot = {"plot", "--db", db, "-o", (dir / "fig").string()};
  plot.insert(plot.end(), labels.begin(), labels.end());
  const auto plotted = test::invoke(plot);
  INFO(plotted.err);
  REQUIRE(plotted.status == 0);
  const auto svg = read(dir / "fig.svg");
  CHECK(svg.find("中文 한국어") != std::string::npos);
  // gnuplot's SVG escapes only & and <.
  CHECK(svg.find("' !\"#$%&amp;'()*+,-./0123456789:;&lt;>?@AB") != std::string::npos);
  CHECK(svg.find("[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~''") != std::string::npos);
  const auto out = dir / "paper";
  std::vector<std::string> paper = {
      "paper", "--db", db, "-o", out.string(), "--title", "'" + ascii + "'' " + second};
  paper.insert(paper.end(), labels.begin(), labels.end());
  const auto written = test::invoke(paper);
  INFO(written.err);
  REQUIRE(written.status == 0);
  const auto main = read(out / "main.tex");
  CHECK(main.find("% !TEX program = lualatex\n") != std::string::npos);
  CHECK(main.find("compile with LuaLaTeX") < main.find('\n'));
  SCALEBENCH_SKIP_IF(no_lualatex());
  const auto log = compile(out);
  CHECK(log.find("Missing character") == std::string::npos);
}

TEST_CASE("a label that is not UTF-8 is refused up front, with its byte offset") {
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  for (const char* command : {"paper", "plot", "report"}) {
    CAPTURE(command);
    const auto bad = test::invoke(
        {command, "--db", db, "-o", (dir / "out").string(), "--label", "single=ab\xc3("});
    CHECK(bad.status != 0);
    CHECK(bad.err.find("not valid UTF-8 at byte 9 (0xc3)") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "out"));
  }
  // The title too (it went into main.tex, which then failed to compile), a lone surrogate also.
  for (const char* title : {"Ti\xc3(tle",
                            "a\xed\xa0\x80"
                            "b"}) {
    const auto bad =
        test::invoke({"paper", "--db", db, "-o", (dir / "out").string(), "--title", title});
    CHECK(bad.status != 0);
    CHECK(bad.err.find("--title: not valid UTF-8 at byte") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "out"));
  }
}

TEST_CASE("paper --columns 2: figures drawn at a column's 3.4 in with 8 pt text, included at it") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto stem = std::string("horovodrunner-table2-quick");
  const auto two = dir / "two";
  const auto result =
      test::invoke({"paper", "--db", db, "-o", two.string(), "--by", "model", "--columns", "2"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const auto main = read(two / "main.tex");
  CHECK(main.find("\\documentclass[10pt,twocolumn]{article}") != std::string::npos);
  CHECK(main.find("textwidth=7in,columnsep=0.2in") != std::string::npos);
  // A column's figure is a figure (not figure*), included without scaling.
  CHECK(main.find("\\begin{figure}[htbp]\n\\centering\n\\includegraphics{figures/" + stem + "}") !=
        std::string::npos);
  CHECK(main.find("\\includegraphics[") == std::string::npos);
  for (const auto& name : {stem, stem + "-by-model"}) {
    const auto width = pdf_width_pt(two / "figures" / (name + ".pdf"));
    REQUIRE(width);
    CHECK(*width == doctest::Approx(3.4 * 72).epsilon(0.005));  // pdfcairo rounds to a point
    const auto script = read(two / "figures" / (name + ".gp"));
    CHECK(script.find("pdfcairo size 3.4in,") != std::string::npos);
    CHECK(script.find("font 'sans,8' fontscale 0.75") != std::string::npos);  // 8 pt on paper
  }
  // The tables stay floats for two columns: the page-wide table* goes to the top of a page.
  CHECK(read(two / "tables" / (stem + ".tex")).find("\\begin{table*}") != std::string::npos);

  // One column, a page-wide figure: 6.5 in with 9 pt text; --figure-width column there too.
  const auto one = dir / "one";
  REQUIRE(
      test::invoke({"paper", "--db", db, "-o", one.string(), "--figure-width", "column"}).status ==
      0);
  const auto width = pdf_width_pt(one / "figures" / (stem + ".pdf"));
  REQUIRE(width);
  CHECK(*width == doctest::Approx(3.4 * 72).epsilon(0.005));
  const auto page = dir / "page";
  REQUIRE(test::invoke({"paper", "--db", db, "-o", page.string()}).status == 0);
  const auto page_width = pdf_width_pt(page / "figures" / (stem + ".pdf"));
  REQUIRE(page_width);
  CHECK(*page_width == doctest::Approx(6.5 * 72).epsilon(0.005));
  CHECK(read(page / "figures" / (stem + ".gp")).find("font 'sans,9' fontscale 0.75") !=
        std::string::npos);
  // One column: tables and figures where they stand, inside their section.
  CHECK(read(page / "tables" / (stem + ".tex")).find("\\begin{table}[H]") != std::string::npos);

  const auto bad =
      test::invoke({"paper", "--db", db, "-o", (dir / "bad").string(), "--figure-width", "narrow"});
  CHECK(bad.status != 0);
  CHECK(bad.err.find("--figure-width 'narrow': expected column (3.4 in), page (6.5 in)") !=
        std::string::npos);
  CHECK(!fs::exists(dir / "bad"));
  SCALEBENCH_SKIP_IF(no_lualatex());
  for (const auto& bundle : {two, page}) {
    const auto log = compile(bundle);
    CHECK(log.find("Overfull \\hbox") == std::string::npos);
    CHECK(log.find("Float too large") == std::string::npos);
  }
}

TEST_CASE("paper --model: a compact predicted table to 4x the measured np, notes in prose") {
  // issue 37, item 6: the predicted table at \small, never shrunk, rows up to 4 x the largest
  // measured np (8 -> 32) unless --max-np says; the notes with no option name, path or time.
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "h.db").string();
  fs::copy_file(test::data_dir() / "db" / "scaling-model-holdout.db", db);
  const auto out = dir / "paper";
  const auto result =
      test::invoke({"paper", "--db", db, "-o", out.string(), "--model", "--fit-max-np", "4",
                    "--network-per-np", "--allreduce-window", "2"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const auto table = read(out / "tables" / "scaling-model-holdout-model.tex");
  CHECK(table.find("resizebox") == std::string::npos);
  CHECK(table.find("scalebox") == std::string::npos);
  CHECK(table.find("\\tiny") == std::string::npos);
  CHECK(table.find("\\scriptsize") == std::string::npos);
  // A page-wide table (table*), placed where it stands in a one-column bundle.
  CHECK(table.find("\\begin{table}[H]\n\\centering\n\\small\n") != std::string::npos);
  CHECK(table.find("\n32 & ") != std::string::npos);
  CHECK(table.find("\n64 & ") == std::string::npos);
  CHECK(table.find("\n8$^{*}$ & ") != std::string::npos);
  // In the paper's words: no option, no docs path, no timestamp (LaTeX writes "--" as -{}-).
  const auto notes = table.substr(table.find("\\par\\smallskip"));
  CHECK(notes.find("-{}-") == std::string::npos);
  CHECK(notes.find("docs/") == std::string::npos);
  CHECK_FALSE(std::regex_search(notes, std::regex("[0-9]{4}-[0-9]{2}-[0-9]{2}T")));
  CHECK(notes.find("On the committed hold-out measurements") != std::string::npos);
  // The latency at np 2 sits at its bound (0) in every refit: flagged.
  // Flagged by a mark in the column, said under the tabular (the table fits a column).
  CHECK(table.find("fitted † \\\\") != std::string::npos);
  CHECK(table.find("† At its bound: not identified by these data.") != std::string::npos);
  const auto page = read(out / "index.html");
  CHECK(page.find("docs/scaling-model.md") == std::string::npos);
  CHECK(test::occurrences(page, "--network-per-np") ==
        1);  // in the command line of the provenance only
  // --max-np bounds the rows and goes into the recorded command line.
  const auto bounded = test::invoke({"paper", "--db", db, "-o", (dir / "p16").string(), "--model",
                                     "--fit-max-np", "4", "--max-np", "16"});
  REQUIRE(bounded.status == 0);
  const auto small = read(dir / "p16" / "tables" / "scaling-model-holdout-model.tex");
  CHECK(small.find("\n16 & ") != std::string::npos);
  CHECK(small.find("\n32 & ") == std::string::npos);
  CHECK(read(dir / "p16" / "provenance.tex").find("max-\\allowbreak{}np 16") != std::string::npos);
  SCALEBENCH_SKIP_IF(no_lualatex());
  const auto log = compile(out);
  CHECK(log.find("Overfull \\hbox") == std::string::npos);
}

TEST_CASE(
    "paper --label EXPERIMENT=TEXT: the name readers see in every heading, caption and page") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "q.db").string();
  fs::copy_file(test::data_dir() / "db" / "quickstart.db", db);
  const auto out = dir / "paper";
  const auto result = test::invoke(
      {"paper", "--db", db, "-o", out.string(), "--label", "quickstart=Fashion-MNIST MLP"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const auto main = read(out / "main.tex");
  CHECK(main.find("\\title{Scaling of Fashion-MNIST MLP}") != std::string::npos);
  CHECK(main.find("\\section{Fashion-MNIST MLP}") != std::string::npos);
  CHECK(main.find("\\caption{Fashion-MNIST MLP: scaling efficiency, mean epoch time") !=
        std::string::npos);
  // The setup paragraph under the heading.
  CHECK(main.find("\\paragraph{Setup.}\n\\emph{Program:} scalebench-") != std::string::npos);
  CHECK(main.find("\\emph{Images per epoch:} 59 904 at every np.") != std::string::npos);
  CHECK(main.find("\\emph{Conditions:} Single process: one plain process;") != std::string::npos);
  const auto table = read(out / "tables" / "quickstart.tex");
  CHECK(table.find("experiment Fashion-MNIST MLP") != std::string::npos);
  CHECK(table.find("\\label{tab:quickstart-run}") != std::string::npos);  // labels stay stable
  CHECK(read(out / "provenance.tex").find("\\subsection*{Fashion-MNIST MLP}") != std::string::npos);
  const auto page = read(out / "index.html");
  CHECK(page.find("<h1>Fashion-MNIST MLP</h1>") != std::string::npos);
  CHECK(page.find("<dt>Warm-up</dt><dd>none: every epoch counts</dd>") != std::string::npos);
  CHECK(page.find("quickstart: scaling") == std::string::npos);
  const auto script = read(out / "figures" / "quickstart.gp");
  CHECK(script.find("# Caption: Fashion-MNIST MLP: ") != std::string::npos);
}

TEST_CASE("paper --columns 2 --model: the model's tables fit a column, the bundle compiles clean") {
  SCALEBENCH_SKIP_IF(missing_tools());
  test::TempDir dir;
  const auto db = (dir / "h.db").string();
  fs::copy_file(test::data_dir() / "db" / "scaling-model-holdout.db", db);
  const auto out = dir / "paper";
  const auto result = test::invoke(
      {"paper", "--db", db, "-o", out.string(), "--model", "--fit-max-np", "4", "--columns", "2"});
  INFO(result.err);
  REQUIRE(result.status == 0);
  const auto main = read(out / "main.tex");
  // Weak scaling: the section's figure says so; the appendix in one column (longtable).
  CHECK(main.find("Weak scaling: every process trains the same images per epoch") !=
        std::string::npos);
  CHECK(main.find("\\onecolumn\n\\appendix") != std::string::npos);
  // The model figure at a column's width: its panels one above the other.
  const auto script = read(out / "figures" / "scaling-model-holdout-model.gp");
  CHECK(script.find("pdfcairo size 3.4in,") != std::string::npos);
  CHECK(script.find("set multiplot layout 2,1") != std::string::npos);
  SCALEBENCH_SKIP_IF(no_lualatex());
  const auto log = compile(out);
  CHECK(log.find("Overfull \\hbox") == std::string::npos);
}
