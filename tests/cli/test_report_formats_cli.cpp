// report --format latex|html as a user runs it, on the committed Table 2 quick database: the
// HTML page carries the real gnuplot figure inline, --by works in both, --unit is named.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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
  CHECK(latex_by.out.find("\\textbf{model = vgg16}") != std::string::npos);
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
