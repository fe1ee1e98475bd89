#include <doctest/doctest.h>

#include "report/data/csv_table.hpp"

using namespace scalebench::report;

TEST_CASE("CSV: quoted fields, doubled quotes, CRLF, blank lines") {
  const auto table =
      parse_csv("a,\"b, c\",d\r\n1,\"x \"\"y\"\"\",  3 \r\n\r\n4,\"multi\nline\",6\n", "t.csv");
  CHECK(table.header == std::vector<std::string>{"a", "b, c", "d"});
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0] == std::vector<std::string>{"1", "x \"y\"", "3"});
  CHECK(table.rows[1][1] == "multi\nline");
  CHECK(table.row_lines == std::vector<std::size_t>{2, 4});
  CHECK(table.numeric_column("a") == std::vector<double>{1, 4});
}

TEST_CASE("CSV errors name the file, the line and the column") {
  CHECK_THROWS_WITH_AS(parse_csv("a,b\n1\n", "t.csv"), "t.csv:2: 1 fields, but the header has 2",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_csv("a\n\"open\n", "t.csv"), "t.csv:2: unterminated quoted field",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_csv("", "t.csv"), "t.csv: empty CSV file (expected a header line)",
                       InputError);
  const auto table = parse_csv("y,g\n1.5,a\nfast,b\n", "t.csv");
  CHECK_THROWS_WITH_AS(table.numeric_column("y"),
                       "t.csv:3: column \"y\": expected a finite number, got \"fast\"", InputError);
  CHECK_THROWS_WITH_AS(table.column("gg"),
                       "t.csv: no column \"gg\" (did you mean \"g\"?); columns: y, g", InputError);
  CHECK_THROWS_AS(parse_csv("y\ninf\n", "t.csv").numeric_column("y"), InputError);
}
