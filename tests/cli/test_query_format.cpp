// Printing query results (cli/query_format.hpp): what reaches a terminal is escaped.
#include <doctest/doctest.h>

#include <string>

#include "cli/query_format.hpp"
#include "db/database.hpp"
#include "test_support.hpp"

using namespace scalebench;
using test::has_raw_control;
using namespace scalebench::cli;

namespace {}  // namespace

// ---- escaping
// ------------------------------------------------------------------------------------

TEST_CASE("escape_controls shows C0, DEL, C1, bidi overrides and broken UTF-8 as escapes") {
  CHECK(escape_controls("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(escape_controls(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(escape_controls("tab\tline\nret\r\x07\x7f") == "tab\\x09line\\x0aret\\x0d\\x07\\x7f");
  CHECK(escape_controls("\xC2\x9B"
                        "2J") == "\\u009b2J");                     // C1 CSI
  CHECK(escape_controls("x\xE2\x80\xAEy") == "x\\u202ey");         // RIGHT-TO-LEFT OVERRIDE
  CHECK(escape_controls("\xFF\xC2") == "\\xff\\xc2");              // not UTF-8
  CHECK(escape_controls("héllo ✓ C:\\dir") == "héllo ✓ C:\\dir");  // kept as is
}

TEST_CASE("format_aligned escapes control characters: format_csv only when asked") {
  db::QueryResult result;
  result.columns = {"text", "n"};
  result.rows = {{std::string("\x1b]0;pwned\x07 ok\0!", 15), "1"}, {std::nullopt, "22"}};
  const std::string table = format_aligned(result);
  CHECK(table ==
        "text                      n\n"
        "------------------------  --\n"
        "\\x1b]0;pwned\\x07 ok\\x00!  1\n"
        "NULL                      22\n"
        "(2 rows)\n");
  CHECK_FALSE(has_raw_control(table));
  CHECK(format_csv(result) == "text,n\r\n" + *result.rows[0][0] + ",1\r\n,22\r\n");
  CHECK(format_csv(result, true) == "text,n\r\n\\x1b]0;pwned\\x07 ok\\x00!,1\r\n,22\r\n");
}
