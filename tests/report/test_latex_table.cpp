// The LaTeX exporter's table pieces (report/export/latex_table.hpp): significant figures with the
// integer digits kept, thin-space thousands separators, prose with options in typewriter type and
// np in math, the cells at their column's format and under --digits, and the D column specs.
#include <doctest/doctest.h>

#include <string>

#include "report/analysis/report.hpp"
#include "report/export/column_format.hpp"
#include "report/export/exporters.hpp"
#include "report/export/latex_table.hpp"
#include "report/export/markup.hpp"

using namespace scalebench::report;

TEST_CASE("LaTeX numbers: significant figures, integer digits kept, thin spaces from 5 digits") {
  CHECK(latex::decimals_for(0.674, 3) == 3);
  CHECK(latex::decimals_for(1.934, 3) == 2);
  CHECK(latex::decimals_for(0.00552, 3) == 5);
  CHECK(latex::decimals_for(160938.08, 3) == 0);
  CHECK(latex::decimals_for(9.996, 3) == 1);  // rounds to 10.0, not 10.00
  CHECK(latex::decimals_for(0, 3) == 2);
  CHECK(latex::number(160938.08, 0) == "160\\,938");
  CHECK(latex::number(1234567.4, 0) == "1\\,234\\,567");
  CHECK(latex::number(-12345.6, 0) == "-12\\,346");
  CHECK(latex::number(1234.5, 1) == "1234.5");  // four integer digits stay together (siunitx)
  CHECK(latex::number(9.996, latex::decimals_for(9.996, 3)) == "10.0");
  CHECK(latex::number(-0.0001, 2) == "0.00");  // no negative zero
  CHECK(latex::text_number(-0.13, 2) == "$-$0.13");
  CHECK(latex::text_number(0.13, 2) == "0.13");
  CHECK(latex::p_value(0.43) == "0.43");
  CHECK(latex::p_value(0.0032) == "0.0032");
  CHECK(latex::p_value(3.2e-12) == "$3.20 \\times 10^{-12}$");
  CHECK(latex::p_value(0) == "$< 4.94 \\times 10^{-324}$");
}

TEST_CASE("LaTeX prose: options in typewriter type, np in math, no dashes made of hyphens") {
  const auto options = latex::prose("use --unit run or --skip-epochs 2");
  CHECK(options == "use \\texttt{-{}-unit} run or \\texttt{-{}-skip-epochs} 2");
  CHECK(latex::prose("hvd np=2 and np = 16; np alone") ==
        "hvd $\\mathit{np} = 2$ and $\\mathit{np} = 16$; $\\mathit{np}$ alone");
  CHECK(latex::prose("snp=2 npx") == "snp=2 npx");
  CHECK(latex::prose("(\"repetitions\" >= 3, <= 5)") == "(``repetitions'' $\\geq$ 3, $\\leq$ 5)");
  CHECK(latex::prose("a_b 50%") == "a\\_b 50\\%");
  // A name's double hyphen stays two hyphens (TeX would set an en dash), in tex() too.
  CHECK(tex("exp--1---x") == "exp-{}-1-{}-{}-x");
  CHECK(latex::prose("exp--1") == "exp-{}-1");
  // No other TeX ligature turns a name's characters into others: ?` !` (inverted marks), `` ''
  // and ,, (double quotes), a backtick (an opening quote).
  CHECK(tex("a ?`x !`y ``q'' ,,z") ==
        "a ?\\textasciigrave{}x !\\textasciigrave{}y \\textasciigrave{}\\textasciigrave{}q'{}' "
        ",{},z");
}

TEST_CASE("LaTeX cells: the column's format, --digits, intervals at the value's decimals") {
  ReportRow row;
  row.mean_epoch_seconds = 1.4936;
  row.mean_ci_lower = 0.1301;
  row.mean_ci_upper = 2.857;
  row.images_per_second = 160938.08;
  row.images_ci_lower = 150001.2;
  row.images_ci_upper = 170123.9;
  row.speedup_vs_base = 1.3012;
  row.speedup_ci_lower = 0.52;
  row.speedup_ci_upper = 3.224;
  row.scaling_efficiency = 0.6481;
  row.efficiency_ci_lower = -0.2611;
  row.efficiency_ci_upper = 1.611;
  row.sd_epoch_seconds = 0.15234;
  row.tukey_p_vs_base = 0.00321;
  const auto cell = [&](const char* key, std::optional<int> digits = std::nullopt) {
    return latex::report_cell(row, key, column_formats({&row}, ExporterOptions{digits}));
  };
  CHECK(cell("epoch_time").value == "1.49");
  CHECK(cell("epoch_time").aligned);
  CHECK(cell("epoch_time").interval == "[0.13, 2.86]");
  // Images/s at 4 significant figures, the interval rounded at the value's place.
  CHECK(cell("images_per_second").value == "160\\,900");
  CHECK(cell("images_per_second").interval == "[150\\,000, 170\\,100]");
  CHECK(cell("speedup").value == "1.30");
  CHECK(cell("efficiency").value == "64.8");
  CHECK(cell("efficiency").interval == "[$-$26.1, 161.1]");
  CHECK(cell("sd").value == "0.152");
  CHECK(cell("tukey").value == "0.0032");
  CHECK_FALSE(cell("tukey").aligned);
  CHECK(cell("epoch_time", 2).value == "1.5");
  CHECK(cell("epoch_time", 2).interval == "[0.1, 2.9]");
  CHECK(cell("images_per_second", 2).value == "160\\,900");
  CHECK(cell("images_per_second", 6).value == "160\\,938");
  CHECK(cell("speedup", 4).value == "1.301");
  CHECK(cell("efficiency", 2).value == "65");
  CHECK(cell("efficiency", 4).value == "64.81");
  row.sd_epoch_seconds.reset();
  CHECK(cell("sd").value == "N.A.");
  CHECK_FALSE(cell("sd").aligned);
}

TEST_CASE("LaTeX tabular: D columns sized to their numbers, text centred, intervals under values") {
  latex::Block block;
  block.headers = {latex::header("Avg. epoch time (s) [95% CI]"), "Letters"};
  block.text_align = {'r', 'c'};
  block.rows.push_back(
      std::vector<latex::Cell>{{"160\\,938.5", true, "[1, 2]", "ab"}, latex::text_cell("a")});
  block.rows.push_back(std::vector<latex::Cell>{latex::text_cell("N.A."), latex::text_cell("b")});
  block.rows.push_back(std::nullopt);
  const auto text = latex::tabular("Condition", {"one", "[two]", "three"}, {block}, "");
  CAPTURE(text);
  // 6 digits and a thin space (6.34 digits) before the point; 1 digit and two superscript
  // letters (3.7 digits) after.
  CHECK(text.find("\\begin{tabular}{@{}lD{.}{.}{7.4}c@{}}") == 0);
  CHECK(text.find("\\multicolumn{1}{c}{\\begin{tabular}[b]{@{}c@{}}Avg. epoch\\\\{}time "
                  "(s)\\\\{}[95\\% CI]\\end{tabular}}") != std::string::npos);
  CHECK(text.find("one & 160\\,938.5^{\\mathrm{ab}} & a \\\\\n & \\multicolumn{1}{c}{\\scriptsize "
                  "[1, 2]} & \\\\\n\\addlinespace[2pt]\n") != std::string::npos);
  CHECK(text.find("{}[two] & \\multicolumn{1}{c}{N.A.} & b \\\\") != std::string::npos);
  CHECK(text.find("three & \\multicolumn{1}{c}{---} & \\multicolumn{1}{c}{---} \\\\") !=
        std::string::npos);
}
