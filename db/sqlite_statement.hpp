// What the database's translation units share of the SQLite C API: the error for a failed call,
// exec, and the RAII statement and transaction. Internal to db/ (database.cpp writes,
// database_read.cpp reads).
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "db/database.hpp"
#include "util/text.hpp"

namespace scalebench::db::detail {

[[noreturn]] inline void fail(sqlite3* db, const std::string& path, std::string_view what) {
  const int code = sqlite3_errcode(db) & 0xff;
  auto message = fmt::format("{}: {}: {}", path, what, sqlite3_errmsg(db));
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) throw DatabaseBusy(std::move(message));
  throw DatabaseError(std::move(message));
}

inline void exec(sqlite3* db, const std::string& path, const char* sql, std::string_view what) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, path, what);
}

// ---- RAII statement ----------------------------------------------------------------------------

class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, std::string_view sql, std::string_view what)
      : db_(db), path_(path), what_(what) {
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
        SQLITE_OK) {
      fail(db_, path_, fmt::format("preparing to {}", what_));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  template <std::integral T>
  void bind(int index, T value) {
    check(sqlite3_bind_int64(stmt_, index, static_cast<sqlite3_int64>(value)));
  }
  void bind(int index, double value) { check(sqlite3_bind_double(stmt_, index, value)); }
  void bind(int index, std::string_view value) {
    if (util::is_valid_utf8(value)) {
      check(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                SQLITE_UTF8));
    } else {
      const std::string repaired = util::repair_utf8(value);  // the caller sanitises: last defence
      check(sqlite3_bind_text64(stmt_, index, repaired.data(), repaired.size(), SQLITE_TRANSIENT,
                                SQLITE_UTF8));
    }
  }
  void bind(int index, const std::string& value) { bind(index, std::string_view(value)); }
  template <typename T>
  void bind(int index, const std::optional<T>& value) {
    if (value) {
      bind(index, *value);
    } else {
      check(sqlite3_bind_null(stmt_, index));
    }
  }

  // True while there is a row to read.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, path_, what_);
  }
  // Runs a statement that returns no rows.
  void run() {
    step();
    reset();
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  int integer(int col) const { return static_cast<int>(sqlite3_column_int64(stmt_, col)); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (p == nullptr) return {};
    return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  std::optional<int> optional_int(int col) const {
    if (is_null(col)) return std::nullopt;
    return integer(col);
  }
  std::optional<long long> optional_int64(int col) const {
    if (is_null(col)) return std::nullopt;
    return static_cast<long long>(int64(col));
  }
  std::optional<double> optional_real(int col) const {
    if (is_null(col)) return std::nullopt;
    return real(col);
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail(db_, path_, fmt::format("binding a parameter to {}", what_));
  }

  sqlite3* db_;
  const std::string& path_;
  std::string what_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE on construction (takes the write lock now, so a busy database fails here and
// not half-way); ROLLBACK on destruction unless committed. Inside a transaction already open on
// the connection (a Database::Batch) it is a SAVEPOINT of it: its writes are undone alone on
// failure, and stored only when the outer transaction commits.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path, std::string_view what)
      : db_(db), path_(path), what_(what), nested_(sqlite3_get_autocommit(db) == 0) {
    exec(db_, path_, nested_ ? "SAVEPOINT scalebench_write" : "BEGIN IMMEDIATE",
         fmt::format("starting a transaction to {}", what_));
  }
  ~Transaction() {
    if (committed_ || sqlite3_get_autocommit(db_) != 0) return;
    if (nested_)
      sqlite3_exec(db_, "ROLLBACK TO scalebench_write; RELEASE scalebench_write", nullptr, nullptr,
                   nullptr);
    else
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit() {
    exec(db_, path_, nested_ ? "RELEASE scalebench_write" : "COMMIT",
         fmt::format("committing the transaction to {}", what_));
    committed_ = true;
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  std::string what_;
  bool nested_;
  bool committed_ = false;
};

}  // namespace scalebench::db::detail
