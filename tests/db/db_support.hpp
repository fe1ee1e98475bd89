// What the db tests share: one value of a query, and the message of a DatabaseError.
#pragma once

#include <doctest/doctest.h>

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

}  // namespace scalebench::test
