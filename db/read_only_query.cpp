// Database::query_read_only: users' own SQL (`scalebench query`) on the results database.
// The query may read anything and change nothing, may call only pure SQL functions, and is
// bounded in time, rows and memory (docs/database.md, "Ad-hoc queries").
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <iterator>
#include <memory>
#include <string_view>

#include "db/database.hpp"
#include "util/text.hpp"

namespace scalebench::db {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& path, std::string_view what) {
  throw DatabaseError(fmt::format("{}: {}: {}", path, what, sqlite3_errmsg(db)));
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

template <std::size_t N>
bool is_one_of(const char* name, const std::string_view (&names)[N]) {
  if (name == nullptr) return false;
  return std::any_of(std::begin(names), std::end(names),
                     [&](std::string_view allowed) { return equals_ignoring_case(name, allowed); });
}

// PRAGMAs a query may run: ones whose argument names a table or index, and settings read
// without an argument. Everything else (including every assignment) is refused. (`PRAGMA
// journal_mode` reads, but sqlite3_stmt_readonly counts it as a write, so it is not here.)
bool is_reading_pragma(const char* name, const char* argument) {
  static constexpr std::string_view kWithArgument[] = {
      "table_info",  "table_xinfo",      "table_list",        "index_list",      "index_info",
      "index_xinfo", "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check"};
  static constexpr std::string_view kWithoutArgument[] = {
      "user_version",  "schema_version", "application_id", "data_version",
      "foreign_keys",  "page_size",      "page_count",     "freelist_count",
      "encoding",      "database_list",  "collation_list", "compile_options",
      "function_list", "module_list",    "pragma_list",    "query_only"};
  if (is_one_of(name, kWithArgument)) return true;
  return argument == nullptr && is_one_of(name, kWithoutArgument);
}

// The functions a query may call: those that compute only on their arguments (SQLite 3.40's core
// scalar, aggregate, window, date and time, math and JSON functions, and a few pure ones of later
// versions). Everything else is refused, whatever a build or a loaded extension adds:
// fts3_tokenizer (returns a pointer; its two-argument form installs one), load_extension,
// readfile/writefile and the other shell functions, sqlite_compileoption_* (build details,
// already in PRAGMA compile_options), changes/last_insert_rowid (connection state, not data),
// fts5/rtree helpers (the schema has no such tables). randomblob and zeroblob stay: the length
// limit caps what they build.
bool is_pure_function(const char* name) {
  static constexpr std::string_view kAllowed[] = {
      // core scalar
      "abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif",
      "instr", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min", "nullif",
      "octet_length", "printf", "quote", "random", "randomblob", "replace", "round", "rtrim",
      "sign", "soundex", "sqlite_version", "sqlite_source_id", "substr", "substring", "trim",
      "typeof", "subtype", "unhex", "unicode", "unlikely", "upper", "zeroblob",
      // aggregate
      "avg", "count", "group_concat", "string_agg", "sum", "total", "median",
      // window
      "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
      "first_value", "last_value", "nth_value",
      // date and time
      "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff", "current_date",
      "current_time", "current_timestamp",
      // math
      "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh",
      "degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power",
      "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
      // JSON (json1; jsonb_* and the rest are 3.45+)
      "json", "json_array", "json_array_length", "json_extract", "json_insert", "json_object",
      "json_patch", "json_remove", "json_replace", "json_set", "json_type", "json_valid",
      "json_quote", "json_group_array", "json_group_object", "json_error_position", "json_pretty",
      "jsonb", "jsonb_array", "jsonb_extract", "jsonb_insert", "jsonb_object", "jsonb_patch",
      "jsonb_remove", "jsonb_replace", "jsonb_set", "jsonb_group_array", "jsonb_group_object", "->",
      "->>",
      // table-valued JSON functions, should a version report them as functions
      "json_each", "json_tree"};
  return is_one_of(name, kAllowed);
}

std::string describe_action(int action, const char* arg1, const char* arg2) {
  const std::string a1 = arg1 != nullptr ? arg1 : "";
  switch (action) {
    case SQLITE_INSERT:
      return fmt::format("INSERT into {}", a1);
    case SQLITE_UPDATE:
      return fmt::format("UPDATE of {}", a1);
    case SQLITE_DELETE:
      return fmt::format("DELETE from {}", a1);
    case SQLITE_ATTACH:
      return "ATTACH";
    case SQLITE_DETACH:
      return "DETACH";
    case SQLITE_TRANSACTION:
      return "transaction control";
    case SQLITE_SAVEPOINT:
      return "SAVEPOINT";
    case SQLITE_PRAGMA:
      return arg2 != nullptr ? fmt::format("PRAGMA {} = {}", a1, arg2)
                             : fmt::format("PRAGMA {}", a1);
    case SQLITE_ALTER_TABLE:
      return "ALTER TABLE";
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_TEMP_INDEX:
    case SQLITE_DROP_TEMP_TABLE:
    case SQLITE_DROP_TEMP_TRIGGER:
    case SQLITE_DROP_TEMP_VIEW:
    case SQLITE_DROP_TRIGGER:
    case SQLITE_DROP_VIEW:
    case SQLITE_DROP_VTABLE:
      return fmt::format("DROP of {}", a1);
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_TEMP_INDEX:
    case SQLITE_CREATE_TEMP_TABLE:
    case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_CREATE_TEMP_VIEW:
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_VTABLE:
      return fmt::format("CREATE of {}", a1);
    default:
      return "a statement that writes";
  }
}

struct AuthorizerState {
  std::string denied;           // the first refused action, for the error message
  std::string denied_function;  // set when that action was a call of a function
};

// Installed while query_read_only prepares and runs its statement: allows reading only.
int read_only_authorizer(void* user, int action, const char* arg1, const char* arg2,
                         const char* /*database*/, const char* /*trigger*/) {
  auto* state = static_cast<AuthorizerState*>(user);
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:  // arg2 is the function's name
      if (is_pure_function(arg2)) return SQLITE_OK;
      if (state->denied.empty()) {
        state->denied_function = arg2 != nullptr ? arg2 : "?";
        state->denied = fmt::format("function {}", state->denied_function);
      }
      return SQLITE_DENY;
    case SQLITE_PRAGMA:
      if (is_reading_pragma(arg1, arg2)) return SQLITE_OK;
      break;
    case SQLITE_UPDATE:
      // The first use of a table-valued pragma (SELECT * FROM pragma_table_info('runs')) checks
      // an UPDATE of the schema table while it declares itself. A real UPDATE of it is refused
      // by SQLite itself ("may not be modified") unless writable_schema, a PRAGMA refused above.
      if (arg1 != nullptr && (equals_ignoring_case(arg1, "sqlite_master") ||
                              equals_ignoring_case(arg1, "sqlite_schema"))) {
        return SQLITE_OK;
      }
      break;
    default:
      break;
  }
  if (state->denied.empty()) state->denied = describe_action(action, arg1, arg2);
  return SQLITE_DENY;
}

// What the progress handler needs to stop a query at its deadline.
struct Deadline {
  std::chrono::steady_clock::time_point at;
  bool passed = false;
};

// Called every kProgressOps virtual-machine instructions; non-zero interrupts the statement.
int check_deadline(void* user) {
  auto* deadline = static_cast<Deadline*>(user);
  if (std::chrono::steady_clock::now() >= deadline->at) deadline->passed = true;
  return deadline->passed ? 1 : 0;
}

// A few microseconds of work between clock reads: cheap, and far finer than any time limit.
constexpr int kProgressOps = 10000;

// Query-only mode, the authorizer and the limits for as long as the query lives (destroyed
// after it), each put back as it was.
class ReadOnlyGuard {
 public:
  ReadOnlyGuard(sqlite3* db, const std::string& path, const QueryLimits& limits) : db_(db) {
    // A connection opened read-only is query-only for good; only a read-write one is toggled.
    toggled_ = sqlite3_db_readonly(db_, "main") == 0;
    if (toggled_ &&
        sqlite3_exec(db_, "PRAGMA query_only = ON", nullptr, nullptr, nullptr) != SQLITE_OK) {
      fail(db_, path, "enter query-only mode");
    }
    // Database::open set these; a user's query runs only on a connection that has them (the
    // schema's views may call no function with side effects, the schema cannot be written).
    int defensive = 0;
    int trusted = 1;
    if (sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, &defensive) != SQLITE_OK ||
        defensive != 1 ||
        sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &trusted) != SQLITE_OK ||
        trusted != 0) {
      fail(db_, path, "turn on defensive mode");
    }
    sqlite3_set_authorizer(db_, read_only_authorizer, &state_);

    const auto timeout = std::chrono::duration<double>(std::max(limits.timeout_seconds, 0.0));
    deadline_.at = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::min(timeout, std::chrono::duration<double>(1e9)));
    sqlite3_progress_handler(db_, kProgressOps, check_deadline, &deadline_);

    // No string or blob (randomblob(1e12), zeroblob, printf('%.*c', ...)) beyond the memory
    // limit; SQLite's own cap is 1e9 bytes.
    const auto length = static_cast<int>(std::min<std::size_t>(limits.max_memory_bytes, INT_MAX));
    old_length_ = sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, std::max(length, 1));
    // SQLite's heap is process-wide: the limit is what it uses now plus the query's allowance.
    // (Nothing else in scalebench queries while `scalebench query` runs.)
    old_soft_heap_ = sqlite3_soft_heap_limit64(-1);
    old_hard_heap_ = sqlite3_hard_heap_limit64(-1);
    allowance_ =
        static_cast<sqlite3_int64>(std::min<std::size_t>(limits.max_memory_bytes, LLONG_MAX / 2));
    base_ = sqlite3_memory_used();
    sqlite3_hard_heap_limit64(base_ + allowance_);
  }
  ~ReadOnlyGuard() {
    sqlite3_hard_heap_limit64(old_hard_heap_);
    sqlite3_soft_heap_limit64(old_soft_heap_);
    sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, old_length_);
    sqlite3_progress_handler(db_, 0, nullptr, nullptr);
    sqlite3_set_authorizer(db_, nullptr, nullptr);
    if (toggled_) sqlite3_exec(db_, "PRAGMA query_only = OFF", nullptr, nullptr, nullptr);
  }
  ReadOnlyGuard(const ReadOnlyGuard&) = delete;
  ReadOnlyGuard& operator=(const ReadOnlyGuard&) = delete;

  const AuthorizerState& denied() const { return state_; }
  bool deadline_passed() const { return deadline_.passed; }

  // The caller now holds `held` bytes of the result: SQLite may use only the rest of the
  // allowance (one bound for both). False when `held` alone is past it.
  bool charge(std::size_t held) {
    if (held > static_cast<std::size_t>(allowance_)) return false;
    // At least 1: a hard limit of 0 would mean none.
    sqlite3_hard_heap_limit64(
        base_ + std::max<sqlite3_int64>(allowance_ - static_cast<sqlite3_int64>(held), 1));
    return true;
  }

 private:
  sqlite3* db_;
  bool toggled_ = false;
  AuthorizerState state_;
  Deadline deadline_;
  int old_length_ = 0;
  sqlite3_int64 old_soft_heap_ = 0;
  sqlite3_int64 old_hard_heap_ = 0;
  sqlite3_int64 base_ = 0;       // SQLite's heap use before the query
  sqlite3_int64 allowance_ = 0;  // the memory limit, for SQLite and the caller together
};

struct StatementDeleter {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

[[noreturn]] void throw_violation(const AuthorizerState& state) {
  if (!state.denied_function.empty()) {
    throw ReadOnlyViolation(fmt::format(
        "query: function {}() is not allowed: only pure SQL functions may be called (core, "
        "aggregate, window, date and time, math and JSON; docs/database.md)",
        state.denied_function));
  }
  throw ReadOnlyViolation(
      fmt::format("query: only read-only statements are allowed (got {})", state.denied));
}

[[noreturn]] void throw_violation(std::string_view what) {
  throw_violation(AuthorizerState{std::string(what), {}});
}

std::string format_bytes(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0)
    return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

[[noreturn]] void throw_time_limit(const QueryLimits& limits) {
  throw QueryLimitError(
      QueryLimitError::Limit::Time,
      fmt::format("query: stopped at the time limit of {} s", limits.timeout_seconds));
}

[[noreturn]] void throw_memory_limit(const QueryLimits& limits, std::string_view what) {
  throw QueryLimitError(QueryLimitError::Limit::Memory,
                        fmt::format("query: stopped at the memory limit of {} ({})",
                                    format_bytes(limits.max_memory_bytes), what));
}

// Why sqlite3_prepare or sqlite3_step failed with `rc`, as the error it deserves.
[[noreturn]] void throw_failure(sqlite3* db, const std::string& path, const ReadOnlyGuard& guard,
                                const QueryLimits& limits, int rc, std::string_view what) {
  // A refusal by the authorizer surfaces as SQLITE_AUTH, or as SQLITE_ERROR from inside a
  // virtual table; either way the authorizer remembers what it refused.
  if (!guard.denied().denied.empty()) throw_violation(guard.denied());
  if (guard.deadline_passed() || (rc & 0xFF) == SQLITE_INTERRUPT) throw_time_limit(limits);
  if ((rc & 0xFF) == SQLITE_NOMEM) throw_memory_limit(limits, "SQLite's working memory");
  if ((rc & 0xFF) == SQLITE_TOOBIG) throw_memory_limit(limits, "a string or blob that large");
  fail(db, path, what);
}

using util::trim;

std::optional<std::string> render_value(sqlite3_stmt* stmt, int col) {
  switch (sqlite3_column_type(stmt, col)) {
    case SQLITE_NULL:
      return std::nullopt;
    case SQLITE_INTEGER:
      return std::to_string(sqlite3_column_int64(stmt, col));
    case SQLITE_FLOAT:
      return fmt::format("{}", sqlite3_column_double(stmt, col));  // shortest round-trip form
    case SQLITE_BLOB: {
      const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt, col));
      const auto* bytes = static_cast<const unsigned char*>(sqlite3_column_blob(stmt, col));
      if (size > 32 || bytes == nullptr) return fmt::format("<blob {} bytes>", size);
      std::string hex = "X'";
      for (std::size_t i = 0; i < size; ++i) hex += fmt::format("{:02X}", bytes[i]);
      return hex + "'";
    }
    default: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
      if (p == nullptr) return std::string();
      return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt, col)));
    }
  }
}

}  // namespace

// Three defences against writes, each enough on its own for ordinary SQL: an authorizer that
// permits only reads and pure functions (it also refuses ATTACH, transactions and setting
// PRAGMAs, which sqlite3_stmt_readonly lets through), sqlite3_stmt_readonly, and query_only mode
// on the connection while the query runs.
void Database::query_read_only(const std::string& sql, const QueryLimits& limits,
                               const QueryRowSink& sink) const {
  ReadOnlyGuard guard(handle_, path_, limits);

  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc =
      sqlite3_prepare_v2(handle_, sql.c_str(), static_cast<int>(sql.size()), &raw, &tail);
  StatementPtr stmt(raw);
  if (rc != SQLITE_OK) throw_failure(handle_, path_, guard, limits, rc, "preparing the query");
  if (!stmt) throw DatabaseError("query: no SQL statement given");

  // Anything after the first statement other than whitespace and comments is refused.
  if (tail != nullptr) {
    const std::string_view rest = trim(tail);
    if (!rest.empty()) {
      sqlite3_stmt* next = nullptr;
      const int next_rc =
          sqlite3_prepare_v2(handle_, rest.data(), static_cast<int>(rest.size()), &next, nullptr);
      StatementPtr next_stmt(next);
      if (next_rc != SQLITE_OK || next_stmt) {
        throw DatabaseError(fmt::format(
            "query: exactly one SQL statement is allowed; found more after the first: \"{}\"",
            rest.substr(0, 60)));
      }
    }
  }
  if (sqlite3_stmt_readonly(stmt.get()) == 0) throw_violation("a statement that writes");

  const int columns = sqlite3_column_count(stmt.get());
  std::vector<std::string> names;
  for (int c = 0; c < columns; ++c) {
    const char* name = sqlite3_column_name(stmt.get(), c);
    names.emplace_back(name != nullptr ? name : "");
  }
  if (sink.columns) sink.columns(names);
  std::size_t rows = 0;
  std::size_t held = 0;  // by the sink
  std::vector<std::optional<std::string>> row;
  while (true) {
    const int step_rc = sqlite3_step(stmt.get());
    if (step_rc == SQLITE_DONE) break;
    if ((step_rc & 0xFF) == SQLITE_NOMEM && held > 0 && !guard.deadline_passed()) {
      throw_memory_limit(limits, "the rows held for printing with SQLite's working memory");
    }
    if (step_rc != SQLITE_ROW) {
      throw_failure(handle_, path_, guard, limits, step_rc, "running the query");
    }
    if (rows >= limits.max_rows) {
      throw QueryLimitError(
          QueryLimitError::Limit::Rows,
          fmt::format("query: more than {} rows (the row limit); add a LIMIT clause or raise "
                      "the limit",
                      limits.max_rows));
    }
    ++rows;
    row.clear();
    row.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) row.push_back(render_value(stmt.get(), c));
    held = sink.row ? sink.row(row) : 0;
    if (!guard.charge(held)) throw_memory_limit(limits, "the rows of the result");
  }
}

namespace {

// Heap bytes a std::string of this capacity takes (libstdc++ keeps up to 15 characters inline;
// malloc adds 8 bytes of header and rounds to 16).
std::size_t string_heap_bytes(std::size_t capacity) {
  return capacity <= 15 ? 0 : (capacity + 1 + 8 + 15) / 16 * 16;
}

}  // namespace

QueryResult Database::query_read_only(const std::string& sql, const QueryLimits& limits) const {
  QueryResult result;
  // The result lives in our memory, not SQLite's: it counts against the same allowance. The
  // row vector may reallocate (old and new at once): three row headers each.
  std::size_t held_bytes = 0;
  QueryRowSink sink;
  sink.columns = [&](const std::vector<std::string>& columns) { result.columns = columns; };
  sink.row = [&](std::vector<std::optional<std::string>>& row) {
    held_bytes += 3 * sizeof(row) + 16 + row.size() * sizeof(std::optional<std::string>);
    for (const auto& value : row) held_bytes += value ? string_heap_bytes(value->capacity()) : 0;
    result.rows.push_back(std::move(row));
    return held_bytes;
  };
  query_read_only(sql, limits, sink);
  return result;
}

}  // namespace scalebench::db
