// One number of decimals per report column (report/export/column_format.hpp): the rule from the
// column's smallest value, throughput at four significant figures with grouped thousands, the
// --digits and --decimals settings and their precedence, and --decimals' errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "report/error.hpp"
#include "report/export/column_format.hpp"
#include "report/export/exporters.hpp"

using namespace scalebench::report;

namespace {

const std::string nb = std::string(kNarrowSpace);  // U+202F

std::string message_of(const std::vector<std::string>& arguments) {
  try {
    parse_decimals(arguments);
  } catch (const ReportError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("column decimals: 3 significant figures for the column's smallest value, bounded") {
  CHECK(column_decimals({1.27, 0.827}, 3, 0, 4) == 3);  // 1.270 over 0.827
  CHECK(column_decimals({29.77, 1.93}, 3, 0, 4) == 2);
  CHECK(column_decimals({120.4, 340.2}, 3, 0, 4) == 0);
  CHECK(column_decimals({0.152, 0.00552}, 3, 0, 4) == 4);   // 5 wanted, at most 4
  CHECK(column_decimals({0.0, -0.5, 12.0}, 3, 0, 4) == 3);  // zero sets nothing, signs ignored
  CHECK(column_decimals({9.996, 20.0}, 3, 0, 4) == 1);      // 9.996 rounds to 10.0
  CHECK(column_decimals({}, 3, 0, 4) == 2);
  CHECK(column_decimals({147.48, 1.5}, 3, 2, 2) == 2);  // a fixed column (speed-ups)
  CHECK(column_decimals({0.827}, 2, 0, 10) == 2);
}

TEST_CASE("column numbers: the column's decimals, images/s at 4 significant figures, groups") {
  const ColumnFormat time{3, 0, 1};
  CHECK(column_number(1.27, time, nb) == "1.270");
  CHECK(column_number(0.827, time, nb) == "0.827");
  CHECK(column_number(-0.0001, ColumnFormat{2, 0, 1}, nb) == "0.00");  // no negative zero
  CHECK(column_number(-0.13, ColumnFormat{2, 0, 1}, nb) == "-0.13");
  CHECK(column_number(0.6481, ColumnFormat{1, 0, 100}, nb) == "64.8");  // a percentage

  const ColumnFormat images{0, 4, 1};
  CHECK(column_number(269849.19, images, nb) == "269" + nb + "800");
  CHECK(column_number(269849.19, images, "\\,") == "269\\,800");
  // An interval's bounds are rounded at their value's place.
  CHECK(column_number(266453.1, images, nb, 269849.19) == "266" + nb + "500");
  CHECK(column_number(273289.4, images, nb, 269849.19) == "273" + nb + "300");
  CHECK(column_number(9876.5, images, nb, 12345.0) == "9880");
  CHECK(column_number(12345.6, images, nb) == "12" + nb + "350");
  CHECK(column_number(99996.0, images, nb) == "100" + nb + "000");  // the carry
  CHECK(column_number(1234.4, images, nb) == "1234");  // four integer digits stay together
  CHECK(column_number(147.48, images, nb) == "147");
  // Only digits before the point become zeros; the decimals stay the column's.
  CHECK(column_number(269849.19, ColumnFormat{1, 4, 1}, nb) == "269" + nb + "800.0");
  // No figure limit (--decimals images_per_second=N): every integer digit.
  CHECK(column_number(269849.19, ColumnFormat{0, 0, 1}, nb) == "269" + nb + "849");
  CHECK(column_number(-1234567.0, ColumnFormat{0, 0, 1}, "\\,") == "-1\\,234\\,567");
}

namespace {

std::vector<ReportRow> decimal_rows() {
  std::vector<ReportRow> rows(2);
  rows[0].mean_epoch_seconds = 1.27;
  rows[0].sd_epoch_seconds = 0.0213;
  rows[0].images_per_second = 269849.19;
  rows[0].speedup_vs_base = 1.0;
  rows[0].scaling_efficiency = 1.0;
  rows[1].mean_epoch_seconds = 0.827;
  rows[1].sd_epoch_seconds = 0.152;
  rows[1].images_per_second = 16.53;
  rows[1].speedup_vs_base = 1.536;
  rows[1].scaling_efficiency = 0.768;
  rows[1].mean_test_accuracy = 0.98712;
  return rows;
}

}  // namespace

TEST_CASE("column formats: the rule per column, --digits for all, --decimals before --digits") {
  const auto rows = decimal_rows();
  const std::vector<const ReportRow*> pointers = {&rows[0], &rows[1], nullptr};
  const auto rule = column_formats(pointers, {});
  CHECK(format_of(rule, "epoch_time").decimals == 3);
  CHECK(format_of(rule, "sd").decimals == 4);
  CHECK(format_of(rule, "images_per_second").decimals == 1);
  CHECK(format_of(rule, "images_per_second").max_figures == 4);
  CHECK(format_of(rule, "speedup").decimals == 2);
  CHECK(format_of(rule, "efficiency").decimals == 1);
  CHECK(format_of(rule, "efficiency").scale == 100);
  CHECK(format_of(rule, "test_accuracy").decimals == 1);

  const auto two = column_formats(pointers, {2});
  CHECK(format_of(two, "epoch_time").decimals == 2);  // 0.83, 1.27
  CHECK(format_of(two, "sd").decimals == 3);          // 0.021
  CHECK(format_of(two, "images_per_second").decimals == 0);
  CHECK(format_of(two, "images_per_second").max_figures == 4);
  CHECK(format_of(two, "speedup").decimals == 1);     // 1.0, 1.5
  CHECK(format_of(two, "efficiency").decimals == 0);  // 77, 100

  const auto set = column_formats(pointers, {2, {{"epoch_time", 1}, {"images_per_second", 0}}});
  CHECK(format_of(set, "epoch_time").decimals == 1);  // --decimals wins over --digits
  CHECK(format_of(set, "sd").decimals == 3);          // --digits for the others
  CHECK(format_of(set, "images_per_second").decimals == 0);
  CHECK(format_of(set, "images_per_second").max_figures == 0);  // every digit
}

TEST_CASE("--decimals COLUMN=N: parsed, and every mistake named") {
  CHECK(
      parse_decimals({"epoch_time=2", "images_per_second=0", "efficiency=10"}) ==
      std::map<std::string, int>{{"epoch_time", 2}, {"images_per_second", 0}, {"efficiency", 10}});
  CHECK(parse_decimals({}).empty());
  const std::string known =
      "columns with decimals: epoch_time, sd, images_per_second, speedup, efficiency, "
      "test_accuracy";
  CHECK(message_of({"epoch_tme=2"}) ==
        "--decimals 'epoch_tme=2': unknown column 'epoch_tme' (did you mean epoch_time?); " +
            known);
  CHECK(message_of({"images=2"}) == "--decimals 'images=2': unknown column 'images'; " + known);
  CHECK(message_of({"tukey=2"}) ==
        "--decimals 'tukey=2': the column tukey has no decimals to set (p-values print two "
        "significant figures, letters are text); " +
            known);
  CHECK(message_of({"sd"}) ==
        "--decimals 'sd': expected COLUMN=N, e.g. epoch_time=2 (columns: epoch_time, sd, "
        "images_per_second, speedup, efficiency, test_accuracy)");
  for (const auto* bad : {"sd=11", "sd=-1", "sd=x", "sd=", "sd=2.5", "sd= 2"})
    CHECK(message_of({bad}).find("N must be a whole number of decimals from 0 to 10") !=
          std::string::npos);
  CHECK(message_of({"sd=x"}) ==
        "--decimals 'sd=x': N must be a whole number of decimals from 0 to 10, not 'x'");
  CHECK(message_of({"sd=1", "sd=2"}) == "--decimals 'sd=2': the column sd is given twice");
  // The exporters check what they are given in code too.
  CHECK_THROWS_AS(make_exporter("markdown", {std::nullopt, {{"sd", 11}}}), ReportError);
  CHECK_THROWS_AS(make_exporter("html", {std::nullopt, {{"time", 1}}}), ReportError);
  CHECK_THROWS_AS(make_exporter("csv", {0}), ReportError);
}
