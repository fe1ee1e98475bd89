// report --format latex|html as a user runs it, on the committed Table 2 quick database: the
// HTML page carries the real gnuplot figure inline, --by works in both, --unit is named, LaTeX's
// --digits and --decimals, and the labelled --by table fits an article's line unscaled (pdflatex).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

TEST_CASE("report --format html embeds the scaling figure, latex names the unit, --by in both") {
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto latex = test::invoke({"report", "--db", db, "--format", "latex", "--unit", "nested"});
  INFO(latex.err);
  REQUIRE(latex.status == 0);
  CHECK(latex.out.find("Unit of analysis: nested") != std::string::npos);
  CHECK(latex.out.find("\\begin{tabular}") != std::string::npos);
  const auto latex_by = test::invoke({"report", "--db", db, "--format", "latex", "--by", "model"});
  REQUIRE(latex_by.status == 0);
  CHECK(latex_by.out.find("\\multicolumn{3}{c}{model = vgg16}") != std::string::npos);
  CHECK(latex_by.out.find("Two-way ANOVA of condition hvd") != std::string::npos);

  const auto html = test::invoke({"report", "--db", db, "--format", "html"});
  REQUIRE(html.status == 0);
  CHECK(html.out.find("<table class=\"report\">") != std::string::npos);
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    CHECK(html.out.find("<figure>\n<svg") != std::string::npos);
    CHECK(html.out.find("<script") == std::string::npos);
  } else {
    CHECK(html.out.find("No figure: ") != std::string::npos);
  }
  const auto html_by = test::invoke({"report", "--db", db, "--format", "html", "--by", "model"});
  REQUIRE(html_by.status == 0);
  CHECK(html_by.out.find("<table class=\"two-way\">") != std::string::npos);
}

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("report --format latex --digits, and --by with labels fits an article's line unscaled") {
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto two = test::invoke({"report", "--db", db, "--format", "latex", "--digits", "2"});
  INFO(two.err);
  REQUIRE(two.status == 0);
  CHECK(two.out.find("\n\\label{tab:horovodrunner-table2-quick-run}\n") != std::string::npos);
  // Two figures for the column's smallest time (0.453 s): every time with 2 decimals.
  CHECK(two.out.find("hvd model=vgg16 np=2 & 1.49^{\\mathrm{") != std::string::npos);
  CHECK(two.out.find("hvd model=inception\\_v3 np=2 & 0.45^{\\mathrm{") != std::string::npos);
  const auto markdown = test::invoke({"report", "--db", db, "--digits", "2"});
  CHECK(markdown.status == 0);
  CHECK(markdown.out.find("| hvd model=vgg16 np=2 | 1.49 [0.13, 2.86] |") != std::string::npos);
  const auto csv = test::invoke({"report", "--db", db, "--format", "csv", "--digits", "2"});
  CHECK(csv.status != 0);
  CHECK(csv.err.find("--digits and --decimals apply to markdown, latex and html, not to csv (its "
                     "numbers are exact)") != std::string::npos);
  CHECK(test::invoke({"report", "--db", db, "--format", "latex", "--digits", "0"}).status != 0);

  const auto by =
      test::invoke({"report", "--db", db, "--format", "latex", "--by", "model", "--label",
                    "hvd=Horovod", "--label", "single=Single process", "--label",
                    "model=inception_v3=Inception V3", "--label", "vgg16=VGG-16"});
  REQUIRE(by.status == 0);
  CHECK(by.out.find("\\label{tab:horovodrunner-table2-quick-by-model-run}") != std::string::npos);
  CHECK(by.out.find(" & \\multicolumn{3}{c}{VGG-16} & \\multicolumn{3}{c}{Inception V3}") !=
        std::string::npos);
  SCALEBENCH_SKIP_IF(
      std::system("command -v pdflatex >/dev/null 2>&1") == 0
          ? std::nullopt
          : std::optional<std::string>("pdflatex is not installed (texlive-latex-recommended)"));
  // The \resizebox that would shrink a wider table is disabled: an overfull box says it is wider.
  std::ofstream(dir / "table.tex") << by.out;
  std::ofstream(dir / "paper.tex")
      << "\\documentclass{article}\n\\usepackage{booktabs,dcolumn,graphicx}\n"
         "\\renewcommand{\\resizebox}[3]{#3}\n\\begin{document}\n\\input{table.tex}\n"
         "\\end{document}\n";
  const auto command = "cd '" + dir.path().string() +
                       "' && pdflatex -interaction=nonstopmode -halt-on-error paper.tex "
                       ">pdflatex.out 2>&1";
  const int status = std::system(command.c_str());
  INFO(read_text(dir / "pdflatex.out"));
  REQUIRE(status == 0);
  const auto log = read_text(dir / "paper.log");
  CHECK(log.find("Overfull \\hbox") == std::string::npos);
  CHECK(log.find("Error") == std::string::npos);
}

TEST_CASE("report --decimals COLUMN=N: that column's decimals in every format, errors named") {
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  // By default the times have the decimals of the smallest (0.453 s: 3), the SDs of theirs.
  const auto rule = test::invoke({"report", "--db", db});
  INFO(rule.err);
  REQUIRE(rule.status == 0);
  CHECK(rule.out.find("| hvd model=vgg16 np=2 | 1.493 [0.130, 2.856] | 0.1517 |") !=
        std::string::npos);
  const auto set = test::invoke({"report", "--db", db, "--decimals", "epoch_time=1", "--decimals",
                                 "sd=2", "--decimals", "images_per_second=2"});
  INFO(set.err);
  REQUIRE(set.status == 0);
  CHECK(set.out.find("| hvd model=vgg16 np=2 | 1.5 [0.1, 2.9] | 0.15 | p=0.33 | abc | 21.43 "
                     "[8.60, 53.41] |") != std::string::npos);
  const auto latex =
      test::invoke({"report", "--db", db, "--format", "latex", "--decimals", "epoch_time=1"});
  REQUIRE(latex.status == 0);
  CHECK(latex.out.find("hvd model=vgg16 np=2 & 1.5^{\\mathrm{abc}} & 0.1517 &") !=
        std::string::npos);
  const auto html =
      test::invoke({"report", "--db", db, "--format", "html", "--decimals", "epoch_time=1"});
  REQUIRE(html.status == 0);
  CHECK(html.out.find("<td>hvd model=vgg16 np=2</td><td>1.5 [0.1, 2.9]</td>") != std::string::npos);

  const auto error = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"report", "--db", db};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = test::invoke(argv);
    CHECK(result.status != 0);
    CHECK(result.out.empty());
    return result.err;
  };
  CHECK(error({"--decimals", "epoch_tim=2"})
            .find("--decimals 'epoch_tim=2': unknown column 'epoch_tim' (did you mean "
                  "epoch_time?); columns with decimals: epoch_time, sd, images_per_second, "
                  "speedup, efficiency, test_accuracy") != std::string::npos);
  CHECK(error({"--decimals", "sd=11"})
            .find("--decimals 'sd=11': N must be a whole number of decimals from 0 to 10, not "
                  "'11'") != std::string::npos);
  CHECK(error({"--decimals", "tukey=2"}).find("the column tukey has no decimals to set") !=
        std::string::npos);
  CHECK(error({"--format", "json", "--decimals", "sd=2"})
            .find("--digits and --decimals apply to markdown, latex and html, not to json") !=
        std::string::npos);
}

TEST_CASE("report and stats --db give the same ANOVA and Tukey p-values for each unit") {
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  for (const std::string unit : {"run", "nested", "epoch"}) {
    INFO(unit);
    const auto report = test::invoke(
        {"report", "--db", db, "--unit", unit, "--format", "json", "--pairwise", "tukey"});
    const auto stats = test::invoke({"stats", "--db", db, "--unit", unit, "--json"});
    REQUIRE(report.status == 0);
    REQUIRE(stats.status == 0);
    const auto table = nlohmann::json::parse(report.out);
    const auto analysis = nlohmann::json::parse(stats.out);
    CHECK(table["unit"] == unit);
    CHECK(analysis["unit"] == unit);
    REQUIRE(table["anova"].is_object());
    CHECK(table["anova"]["p"].get<double>() ==
          doctest::Approx(analysis["anova"][0]["p"].get<double>()).epsilon(1e-12));
    CHECK(table["anova"]["f"].get<double>() ==
          doctest::Approx(analysis["anova"][0]["F"].get<double>()).epsilon(1e-12));
    const std::string base = table["base_label"];
    std::size_t compared = 0;
    for (const auto& row : table["rows"]) {
      if (row["is_base"].get<bool>()) continue;
      const std::string label = row["label"];
      for (const auto& pair : analysis["tukey"]) {
        if (!((pair["a"] == label && pair["b"] == base) ||
              (pair["a"] == base && pair["b"] == label)))
          continue;
        INFO(label);
        CHECK(row["tukey_p_vs_base"].get<double>() ==
              doctest::Approx(pair["p_adj"].get<double>()).epsilon(1e-9));
        ++compared;
      }
    }
    CHECK(compared == table["rows"].size() - 1);
  }
}

TEST_CASE("report's default: Games-Howell p-values equal stats' where the variances differ") {
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  // The six groups' run-mean variances differ far more than 4-fold: report uses Games-Howell.
  const auto report = test::invoke({"report", "--db", db, "--format", "json"});
  const auto stats = test::invoke({"stats", "--db", db, "--json"});
  REQUIRE(report.status == 0);
  REQUIRE(stats.status == 0);
  const auto table = nlohmann::json::parse(report.out);
  const auto analysis = nlohmann::json::parse(stats.out);
  CHECK(table["pairwise_test"] == "Games-Howell");
  CHECK(table["anova"]["welch"] == true);
  const std::string base = table["base_label"];
  std::size_t compared = 0;
  for (const auto& row : table["rows"]) {
    if (row["is_base"].get<bool>()) continue;
    const std::string label = row["label"];
    for (const auto& pair : analysis["games_howell"])
      if ((pair["a"] == label && pair["b"] == base) || (pair["a"] == base && pair["b"] == label)) {
        INFO(label);
        CHECK(row["tukey_p_vs_base"].get<double>() ==
              doctest::Approx(pair["p_adj"].get<double>()).epsilon(1e-9));
        ++compared;
      }
  }
  CHECK(compared == table["rows"].size() - 1);
  const auto refused = test::invoke({"report", "--db", db, "--pairwise", "scheffe"});
  CHECK(refused.status != 0);
  CHECK(refused.err.find("--pairwise") != std::string::npos);
}

TEST_CASE("report's letters split the groups as stats' letters do (stats' are multcomp's)") {
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  for (const std::string unit : {"run", "nested"}) {
    INFO(unit);
    const auto report = test::invoke(
        {"report", "--db", db, "--unit", unit, "--format", "json", "--pairwise", "tukey"});
    const auto stats = test::invoke({"stats", "--db", db, "--unit", unit, "--json"});
    REQUIRE(report.status == 0);
    REQUIRE(stats.status == 0);
    std::map<std::string, std::string> ours, theirs;
    const auto table = nlohmann::json::parse(report.out);
    const auto analysis = nlohmann::json::parse(stats.out);
    for (const auto& row : table["rows"])
      ours[row["label"].get<std::string>()] = row["letters"].get<std::string>();
    for (const auto& group : analysis["groups"])
      if (group["factor"] == "group")
        theirs[group["level"].get<std::string>()] = group["letters"].get<std::string>();
    REQUIRE(ours.size() == 6);
    REQUIRE(theirs.size() == ours.size());
    // The names of the letters follow each table's order; which groups share one must not.
    const auto share = [](const std::string& a, const std::string& b) {
      return a.find_first_of(b) != std::string::npos;
    };
    for (const auto& [a, letters_a] : ours)
      for (const auto& [b, letters_b] : ours) {
        INFO(a << " / " << b);
        CHECK(share(letters_a, letters_b) == share(theirs.at(a), theirs.at(b)));
      }
    // stats orders the groups as report orders its rows, so the letters are the same names.
    CHECK(ours == theirs);
    std::vector<std::string> report_order, stats_order;
    for (const auto& row : table["rows"]) report_order.push_back(row["label"]);
    for (const auto& group : analysis["groups"])
      if (group["factor"] == "group") stats_order.push_back(group["level"]);
    CHECK(stats_order == report_order);
  }
}

TEST_CASE("report's images/s and efficiency intervals equal R's on Table 2 (unit run)") {
  // scripts/reference/rate_intervals.R computes them from the epochs with R's qt.
  std::ifstream reference(test::data_dir() / "report" / "rate_intervals.txt");
  REQUIRE(reference);
  test::TempDir dir;
  const auto db = (dir / "t.db").string();
  fs::copy_file(test::data_dir() / "db" / "table2-quick.db", db);
  const auto report = test::invoke({"report", "--db", db, "--format", "json"});
  REQUIRE(report.status == 0);
  const auto table = nlohmann::json::parse(report.out);
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : table["rows"]) rows[row["label"].get<std::string>()] = row;
  std::string line;
  std::size_t checked = 0;
  while (std::getline(reference, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    for (std::size_t start = 0;;) {
      const auto bar = line.find('|', start);
      fields.push_back(line.substr(start, bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    REQUIRE(fields.size() == 5);
    INFO(fields[0]);
    REQUIRE(rows.count(fields[0]) == 1);
    const auto& row = rows[fields[0]];
    CHECK(row["images_per_second_ci"][0].get<double>() ==
          doctest::Approx(std::stod(fields[1])).epsilon(1e-12));
    CHECK(row["images_per_second_ci"][1].get<double>() ==
          doctest::Approx(std::stod(fields[2])).epsilon(1e-12));
    if (fields[3] == "NA") {
      CHECK(row["scaling_efficiency_ci"].is_null());  // the reference: 1 by definition
    } else {
      CHECK(row["scaling_efficiency_ci"][0].get<double>() ==
            doctest::Approx(std::stod(fields[3])).epsilon(1e-12));
      CHECK(row["scaling_efficiency_ci"][1].get<double>() ==
            doctest::Approx(std::stod(fields[4])).epsilon(1e-12));
    }
    ++checked;
  }
  CHECK(checked == 6);
}
