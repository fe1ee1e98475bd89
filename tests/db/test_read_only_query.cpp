// Tests for db/read_only_query.cpp: Database::query_read_only renders values, refuses writes and
// impure functions, and stops at its time, row and memory limits.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db_support.hpp"
#include "test_support.hpp"

namespace db = scalebench::db;
using scalebench::test::error_of;
using scalebench::test::scalar;
using scalebench::test::TempDir;

namespace {

// The limit a query stopped at, and its message; fails the test if it did not stop at one.
std::pair<db::QueryLimitError::Limit, std::string> limit_hit(const db::Database& d,
                                                             const std::string& sql,
                                                             const db::QueryLimits& limits) {
  try {
    d.query_read_only(sql, limits);
  } catch (const db::QueryLimitError& e) {
    return {e.limit(), e.what()};
  } catch (const db::DatabaseError& e) {
    FAIL("another error than a limit: ", e.what());
  }
  FAIL("no limit reached: ", sql);
  return {};
}

constexpr const char* kEndless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) ";

}  // namespace

TEST_CASE("query_read_only renders values as text") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto r = d.query_read_only(
      "SELECT 42 AS i, 0.1 AS r, 2.5e-7 AS small, 1.0 AS whole, 'héllo' AS t, NULL AS n, "
      "x'00ff' AS b, zeroblob(100) AS big");
  REQUIRE(r.columns == std::vector<std::string>{"i", "r", "small", "whole", "t", "n", "b", "big"});
  REQUIRE(r.rows.size() == 1);
  const auto& row = r.rows[0];
  CHECK(row[0] == "42");
  CHECK(row[1] == "0.1");
  CHECK(std::stod(*row[2]) == 2.5e-7);
  CHECK(std::stod(*row[3]) == 1.0);
  CHECK(row[4] == "héllo");
  CHECK_FALSE(row[5].has_value());
  CHECK(row[6] == "X'00FF'");
  CHECK(row[7] == "<blob 100 bytes>");

  const auto empty = d.query_read_only("SELECT * FROM runs");
  CHECK(empty.rows.empty());
  CHECK(empty.columns.size() == 21);

  // Reading helpers stay allowed: table-valued pragmas, schema pragmas, CTEs, trailing comment.
  CHECK(d.query_read_only("PRAGMA table_info(runs)").rows.size() == 21);
  CHECK(d.query_read_only("SELECT name FROM pragma_table_info('epochs')").rows.size() == 11);
  CHECK(scalar(d,
               "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) "
               "SELECT sum(x) FROM c;  -- done") == "15");
}

TEST_CASE("query_read_only reports SQL errors with SQLite's message and the path") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const std::string syntax = error_of([&] { d.query_read_only("SELEC * FROM runs"); });
  CHECK(syntax.find(d.path() + ": ") == 0);
  CHECK(syntax.find("near \"SELEC\": syntax error") != std::string::npos);
  const std::string table = error_of([&] { d.query_read_only("SELECT * FROM missing_table"); });
  CHECK(table.find("no such table: missing_table") != std::string::npos);
  CHECK_THROWS_AS(d.query_read_only("SELEC 1"), db::DatabaseError);
  try {
    d.query_read_only("SELEC 1");
  } catch (const db::ReadOnlyViolation&) {
    FAIL("a syntax error is not a read-only violation");
  } catch (const db::DatabaseError&) {
  }
}

TEST_CASE("query_read_only refuses functions outside the allow-list, naming them") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  // Registered in Debian's libsqlite3 and refused by the authorizer, not merely unknown.
  for (const std::string name :
       {"fts3_tokenizer", "load_extension", "sqlite_compileoption_get", "sqlite_compileoption_used",
        "changes", "total_changes", "last_insert_rowid"}) {
    CAPTURE(name);
    const std::string args = name == "fts3_tokenizer"              ? "'simple'"
                             : name == "load_extension"            ? "'/tmp/x.so'"
                             : name == "sqlite_compileoption_get"  ? "0"
                             : name == "sqlite_compileoption_used" ? "'THREADSAFE'"
                                                                   : "";
    const std::string sql = "SELECT " + name + "(" + args + ")";
    CHECK_THROWS_AS(d.query_read_only(sql), db::ReadOnlyViolation);
    const std::string message = error_of([&] { d.query_read_only(sql); });
    CHECK(message.find("function " + name + "() is not allowed") != std::string::npos);
    // Also inside a subquery, a CTE and a case expression, and written in capitals.
    CHECK_THROWS_AS(d.query_read_only("SELECT (SELECT " + name + "(" + args + "))"),
                    db::ReadOnlyViolation);
  }
  CHECK_THROWS_AS(
      d.query_read_only("WITH t AS (SELECT FTS3_TOKENIZER('simple') AS p) SELECT hex(p) FROM t"),
      db::ReadOnlyViolation);
  CHECK_THROWS_AS(d.query_read_only("SELECT CASE WHEN 1 THEN fts3_tokenizer('porter') END"),
                  db::ReadOnlyViolation);
  // Shell-only functions are not even registered in the library.
  CHECK_THROWS_AS(d.query_read_only("SELECT readfile('/etc/passwd')"), db::DatabaseError);
  CHECK_THROWS_AS(d.query_read_only("SELECT writefile('/tmp/scalebench-x', 'x')"),
                  db::DatabaseError);

  // The pure ones stay: core, aggregate, window, date and time, math, JSON, LIKE and GLOB.
  CHECK(scalar(d, "SELECT printf('%05.2f', abs(-2.25)) || upper('x') || length('abc')") ==
        "02.25X3");
  CHECK(scalar(d,
               "SELECT group_concat(r) FROM (SELECT row_number() OVER (ORDER BY v DESC) AS r "
               "FROM (SELECT 1 AS v UNION ALL SELECT 2))") == "1,2");
  CHECK(scalar(d, "SELECT strftime('%Y', '2024-05-01') || date('2024-05-01', '+1 day')") ==
        "20242024-05-02");
  CHECK(scalar(d, "SELECT json_extract('{\"a\": [1, 2]}', '$.a[1]') + ('{\"b\": 3}' ->> 'b')") ==
        "5");
  CHECK(scalar(d, "SELECT count(*) FROM json_each('[1, 2, 3]')") == "3");
  CHECK(scalar(d, "SELECT 'abc' LIKE 'a%' AND 'abc' GLOB 'a*' AND likely(1)") == "1");
  CHECK(scalar(d, "SELECT CAST(sqrt(16) + pow(2, 3) + ln(1) + floor(0.5) AS INTEGER)") == "12");
  CHECK(scalar(d, "SELECT length(randomblob(16)) + length(zeroblob(4))") == "20");
}

TEST_CASE("query_read_only stops an endless query at the time limit") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  db::QueryLimits limits;
  limits.timeout_seconds = 0.3;
  // count(*) yields no row until the end, which never comes: only the clock can stop it.
  const auto start = std::chrono::steady_clock::now();
  const auto [limit, message] =
      limit_hit(d, std::string(kEndless) + "SELECT count(*) FROM c", limits);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(limit == db::QueryLimitError::Limit::Time);
  CHECK(message == "query: stopped at the time limit of 0.3 s");
  CHECK(seconds < 20);  // generous: a loaded machine, but not "never"
  // The connection is usable afterwards, without the limit's handler.
  CHECK(scalar(d, "SELECT 1") == "1");
}

TEST_CASE("query_read_only stops at the row limit, the default one included") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  db::QueryLimits limits;
  limits.max_rows = 1000;
  const auto [limit, message] = limit_hit(d, std::string(kEndless) + "SELECT x FROM c", limits);
  CHECK(limit == db::QueryLimitError::Limit::Rows);
  CHECK(message.find("more than 1000 rows") != std::string::npos);
  CHECK(message.find("add a LIMIT clause") != std::string::npos);
  // Exactly max_rows rows is allowed.
  CHECK(
      d.query_read_only(std::string(kEndless) + "SELECT x FROM c LIMIT 1000", limits).rows.size() ==
      1000);

  // The reproducer with the defaults: it ends, with an error, instead of never.
  const auto [default_limit, default_message] =
      limit_hit(d, std::string(kEndless) + "SELECT x FROM c", db::QueryLimits{});
  CHECK(default_limit == db::QueryLimitError::Limit::Rows);
  CHECK(default_message.find("more than 1000000 rows") != std::string::npos);
}

TEST_CASE("query_read_only stops at the memory limit: big values, SQLite's heap, the result") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const sqlite3_int64 heap_limit_before = sqlite3_hard_heap_limit64(-1);
  db::QueryLimits limits;
  limits.max_memory_bytes = std::size_t{4} << 20;  // 4 MiB
  limits.timeout_seconds = 20;  // a query the memory limit misses fails as Time, not slowly

  std::vector<std::string> queries{"SELECT length(zeroblob(8 * 1024 * 1024))",
                                   "SELECT length(randomblob(100000000))",
                                   "SELECT length(printf('%.*c', 10000000, 'x'))"};
  // SQLite's heap limit on a growing aggregate is checked without sanitizers, in
  // tests/memory/test_memory_bounds.cpp (AddressSanitizer's allocator hides it).
  for (const std::string& sql : queries) {
    CAPTURE(sql);
    const auto [limit, message] = limit_hit(d, sql, limits);
    CHECK(limit == db::QueryLimitError::Limit::Memory);
    CHECK(message.find("memory limit of 4 MiB") != std::string::npos);
  }
  // Values each under the length limit, together over it: SQLite's heap limit stops them.
  {
    const auto [limit, message] =
        limit_hit(d,
                  "SELECT randomblob(3000000), randomblob(3000000), randomblob(3000000), "
                  "randomblob(3000000)",
                  limits);
    CHECK(limit == db::QueryLimitError::Limit::Memory);
    CHECK(message.find("SQLite's working memory") != std::string::npos);
  }
  // Many small rows: the result held in memory counts.
  {
    db::QueryLimits rows_fit = limits;
    rows_fit.max_rows = 100'000'000;
    const auto [limit, message] = limit_hit(
        d, std::string(kEndless) + "SELECT printf('%.1000c', 'x') FROM c LIMIT 100000", rows_fit);
    CHECK(limit == db::QueryLimitError::Limit::Memory);
    // The rows and SQLite's heap share one allowance: either check may be the one that stops.
    CHECK(message.find("the rows") != std::string::npos);
  }
  // Everything is put back: the process-wide heap limit and the connection's length limit.
  CHECK(sqlite3_hard_heap_limit64(-1) == heap_limit_before);
  CHECK(scalar(d, "SELECT length(zeroblob(8 * 1024 * 1024))") == "8388608");
}
