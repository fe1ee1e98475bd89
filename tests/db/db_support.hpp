// What the db tests share (and the cli tests, through cli_support.hpp): one value of a query, the
// message of a DatabaseError, and SQL run on a file directly.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <string>

#include "db/database.hpp"

namespace scalebench::test {

// The single value a query returns ("NULL" for SQL NULL).
inline std::string scalar(const db::Database& d, const std::string& sql) {
  const db::QueryResult r = d.query_read_only(sql);
  REQUIRE(r.rows.size() == 1);
  REQUIRE(r.rows[0].size() == 1);
  return r.rows[0][0].value_or("NULL");
}

// What f throws as a DatabaseError, or "<no error>".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const db::DatabaseError& e) {
    return e.what();
  }
  return "<no error>";
}

// Runs `sql` on the SQLite file at `path` through a connection of its own (to plant or change
// rows a test needs).
inline void execute_sql(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  INFO((message ? message : ""));
  sqlite3_free(message);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace scalebench::test
