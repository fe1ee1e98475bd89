// The results database on the SQLite C API. Every value goes through a bound parameter; the only
// SQL built from text is the schema itself and PRAGMA user_version with our own constant.
#include "db/database.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <concepts>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "db/record_columns.hpp"
#include "db/schema.hpp"
#include "db/schema_guard.hpp"
#include "db/sqlite_statement.hpp"
#include "util/text.hpp"

#ifndef SCALEBENCH_DB_VERSION_STRING
#define SCALEBENCH_DB_VERSION_STRING "unknown"
#endif

namespace scalebench::db {

using namespace detail;

// ---- run status ----------------------------------------------------------------------------

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::Ok:
      return "ok";
    case RunStatus::Failed:
      return "failed";
    case RunStatus::Timeout:
      return "timeout";
    case RunStatus::Incomplete:
      return "incomplete";
    case RunStatus::Interrupted:
      return "interrupted";
  }
  // Not one of the enumerators: the schema's CHECK refuses it when stored.
  return "invalid";
}

RunStatus parse_run_status(std::string_view text) {
  for (auto status : {RunStatus::Ok, RunStatus::Failed, RunStatus::Timeout, RunStatus::Incomplete,
                      RunStatus::Interrupted}) {
    if (to_string(status) == text) return status;
  }
  throw DatabaseError(fmt::format(
      "runs.status \"{}\" is none of ok, failed, timeout, incomplete, interrupted", text));
}

namespace {

// Generous: another process may be storing a run of millions of lines. A write still busy after
// this fails, and the runner retries and then writes a side file (docs/database.md), so a stuck
// writer costs time, never a measured run.
constexpr int kBusyTimeoutMs = 60'000;
// How long a reader waits for the schema of a file that is being created.
constexpr auto kSchemaWait = std::chrono::seconds(5);

// An empty file whose schema may be on its way: modified in the last kSchemaWait, or with a
// write-ahead log beside it (a writer is in its first transaction).
bool schema_may_be_coming(const std::string& path) {
  std::error_code error;
  if (std::filesystem::exists(path + "-wal", error)) return true;
  const auto modified = std::filesystem::last_write_time(path, error);
  if (error) return false;
  const auto age = std::filesystem::file_time_type::clock::now() - modified;
  return age < kSchemaWait && age > -kSchemaWait;
}

// Key/value rows of an instance (run_id absent) or of one run; a key given twice keeps the last.
void insert_provenance(sqlite3* db, const std::string& path, std::int64_t experiment_id,
                       std::optional<std::int64_t> run_id, const Provenance& entries) {
  if (entries.empty()) return;
  Statement st(db, path,
               "INSERT OR REPLACE INTO provenance (experiment_id, run_id, key, value) "
               "VALUES (?1, ?2, ?3, ?4)",
               "insert provenance");
  for (const auto& [key, value] : entries) {
    st.bind(1, experiment_id);
    st.bind(2, run_id);
    st.bind(3, key);
    st.bind(4, value);
    st.run();
  }
}

// A run's levels, the built-in factors (condition, launcher, np) first.
void insert_run_factors(sqlite3* db, const std::string& path, std::int64_t run_id,
                        const RunRecord& r) {
  Statement factor(db, path, "INSERT INTO run_factors (run_id, factor, level) VALUES (?1, ?2, ?3)",
                   "insert a run's factor level");
  const auto add = [&](const std::string& name, const std::string& level) {
    factor.bind(1, run_id);
    factor.bind(2, name);
    factor.bind(3, level);
    factor.run();
  };
  add("condition", r.condition);
  add("launcher", r.launcher);
  add("np", std::to_string(r.np));
  for (const auto& [name, level] : r.factors) {
    for (const char* built_in : kBuiltInFactors)
      if (name == built_in)
        throw DatabaseError(
            fmt::format("{}: a run's factor may not be named {} (built in)", path, name));
    add(name, level);
  }
  // A factor name the views do not have yet gets its column (normally insert_experiment has
  // made it from the instance's factor list already; then this returns at once).
  if (!r.factors.empty()) refresh_level_views(db, path);
}

// The run_id fields of the epoch, line and allreduce records are ignored: they belong to the run
// being inserted.
void insert_epochs(sqlite3* db, const std::string& path, std::int64_t run_id,
                   const std::vector<EpochRecord>& epochs) {
  if (epochs.empty()) return;
  Statement ep(db, path, insert_sql("epochs", {"run_id"}, kEpochColumns), "insert an epoch");
  for (const EpochRecord& e : epochs) {
    ep.bind(1, run_id);
    bind_columns(ep, 2, e, kEpochColumns);
    ep.run();
  }
  Statement re(db, path, insert_sql("epoch_rank_ends", {"run_id", "epoch"}, kRankEndColumns),
               "insert a rank's epoch end");
  for (const EpochRecord& e : epochs)
    for (const RankEnd& end : e.rank_ends) {
      re.bind(1, run_id);
      re.bind(2, e.epoch);
      bind_columns(re, 3, end, kRankEndColumns);
      re.run();
    }
}

void insert_lines(sqlite3* db, const std::string& path, std::int64_t run_id,
                  const std::vector<LineRecord>& lines) {
  if (lines.empty()) return;
  Statement ln(db, path, insert_sql("lines", {"run_id"}, kLineColumns), "insert an output line");
  for (const LineRecord& l : lines) {
    ln.bind(1, run_id);
    bind_columns(ln, 2, l, kLineColumns);
    ln.run();
  }
}

// Another connection's stage (a side file's): its staged lines copied row by row into `db`'s
// lines, their offsets shifted (bounded memory all the same).
void copy_staged_lines(sqlite3* db, const std::string& path, std::int64_t run_id, sqlite3* stage,
                       double offset_shift_seconds) {
  const std::string stage_path =
      sqlite3_db_filename(stage, "main") ? sqlite3_db_filename(stage, "main") : "";
  Statement read(
      stage, stage_path,
      fmt::format("SELECT {} FROM temp.staged_lines ORDER BY seq", column_names({}, kLineColumns)),
      "read staged output lines");
  Statement ln(db, path, insert_sql("lines", {"run_id"}, kLineColumns), "insert an output line");
  while (read.step()) {
    LineRecord line;
    read_columns(read, 0, line, kLineColumns);
    line.offset_seconds += offset_shift_seconds;
    ln.bind(1, run_id);
    bind_columns(ln, 2, line, kLineColumns);
    ln.run();
  }
}

void insert_allreduce(sqlite3* db, const std::string& path, std::int64_t run_id,
                      const std::vector<AllreduceRecord>& results) {
  if (results.empty()) return;
  Statement ar(db, path, insert_sql("allreduce_results", {"run_id"}, kAllreduceColumns),
               "insert an allreduce result");
  for (const AllreduceRecord& a : results) {
    ar.bind(1, run_id);
    bind_columns(ar, 2, a, kAllreduceColumns);
    ar.run();
  }
}

// A WAL database can be read only through its -shm file, which a reader creates if it can. In a
// directory we cannot write (an archived or shared results directory) with no writer around to
// have made one, the file is opened immutable instead: no locks and no -shm. No writer can be
// active then, since a writer needs the -wal file, and there is none.
bool needs_immutable_open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path + "-wal", ec) || fs::exists(path + "-shm", ec)) return false;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  return ::access(dir.c_str(), W_OK) != 0;
}

std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '/' || c == '.' || c == '_' || c == '-' || c == '~') {
      uri += c;
    } else {
      uri += fmt::format("%{:02X}", u);
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

std::string spec_hash(std::string_view spec_json) {
  // FNV-1a, 64 bits (Fowler, Noll, Vo): an identifier of the normalised spec, not a security hash;
  // pooling compares the specs themselves as well.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : spec_json) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("fnv1a64:{:016x}", hash);
}

// ---- lifetime ----------------------------------------------------------------------------------

Database::Database(sqlite3* handle, std::string path) : handle_(handle), path_(std::move(path)) {}

Database::~Database() { sqlite3_close_v2(handle_); }

Database::Database(Database&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database Database::open(const std::string& path, OpenMode mode) {
  namespace fs = std::filesystem;
  check_database_path(path);
  const bool read_only = mode == OpenMode::ReadOnly;
  std::error_code ec;
  if (read_only) {
    if (!fs::exists(path, ec)) {
      throw DatabaseError(fmt::format(
          "{}: opening read-only: no such file (results are written by `scalebench run`)", path));
    }
  } else if (const fs::path parent = fs::path(path).parent_path(); !parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec) {
      throw DatabaseError(
          fmt::format("{}: creating directory {}: {}", path, parent.string(), ec.message()));
    }
  }

  sqlite3* handle = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::string target = path;
  if (read_only && needs_immutable_open(path)) {
    target = immutable_uri(path);
    flags |= SQLITE_OPEN_URI;
  }
  const int rc = sqlite3_open_v2(target.c_str(), &handle, flags, nullptr);
  Database db(handle, path);  // owns the handle from here on, even a failed one
  if (rc != SQLITE_OK) fail(handle, path, read_only ? "opening read-only" : "opening");
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, kBusyTimeoutMs);
  harden_connection(handle, path);
  exec(handle, path, "PRAGMA foreign_keys = ON", "enabling foreign keys");

  const int found_version = read_user_version(handle, path);
  const SchemaState state = classify_schema(handle, path, found_version);
  // Before anything is written: a file with objects scalebench did not make is not written to.
  if (!read_only && state != SchemaState::Empty) check_schema_objects(handle, path, found_version);
  if (read_only) {
    if (state == SchemaState::Empty && schema_may_be_coming(path)) {
      // `scalebench run` creates the file, then its schema in a transaction a moment later: a
      // reader in between waits for it rather than calling the file not a database.
      SchemaState now = state;
      const auto give_up = std::chrono::steady_clock::now() + kSchemaWait;
      while (now == SchemaState::Empty && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        now = classify_schema(handle, path, read_user_version(handle, path));
      }
      if (now != SchemaState::Empty) return open(path, mode);  // as any complete file
    }
    if (state == SchemaState::Empty) {
      throw DatabaseError(fmt::format(
          "{}: not a scalebench database: the file holds no tables (results are written by "
          "`scalebench run`)",
          path));
    }
    if (state == SchemaState::Older) {
      // A database from an earlier release: migrate it once (one transaction; a failed migration
      // leaves it as it was), then read it like any other. Without write access, say how.
      if (::access(path.c_str(), W_OK) == 0) {
        Database migrated = open(path, OpenMode::ReadWrite);
        exec(migrated.handle_, path, "PRAGMA query_only = ON", "entering query-only mode");
        return migrated;
      }
      throw DatabaseError(fmt::format(
          "{}: schema version {} is older than this scalebench's ({}) and the file is not "
          "writable, so it cannot be migrated; copy it somewhere writable first",
          path, read_user_version(handle, path), kSchemaVersion));
    }
    exec(handle, path, "PRAGMA query_only = ON", "entering query-only mode");
    return db;
  }

  // WAL lets readers (reports, `scalebench query`) run while a matrix is being written. It
  // cannot change inside a transaction, and is persistent in the file.
  {
    Statement wal(handle, path, "PRAGMA journal_mode = WAL", "switch to WAL journal mode");
    wal.step();
  }
  if (state != SchemaState::Current) {
    // Check again under the write lock: another process may have created it meanwhile.
    Transaction tx(handle, path, "create the schema");
    const int version = read_user_version(handle, path);
    switch (classify_schema(handle, path, version)) {
      case SchemaState::Empty:
        create_schema(handle, path);
        break;
      case SchemaState::Older:
        migrate_schema(handle, path, version);
        break;
      case SchemaState::Current:
        break;
    }
    tx.commit();
  }
  // Staged lines live in the connection's TEMP database, on disk, not in memory.
  exec(handle, path, "PRAGMA temp_store = FILE", "keeping temporary tables on disk");
  exec(handle, path, schema::kCreateStagedLines, "create the line staging table");
  return db;
}

void Database::set_busy_timeout(int milliseconds) { sqlite3_busy_timeout(handle_, milliseconds); }

int Database::schema_version() const { return read_user_version(handle_, path_); }

bool Database::hardened() const {
  int defensive = 0;
  int trusted = 1;
  return sqlite3_db_config(handle_, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive) == SQLITE_OK &&
         sqlite3_db_config(handle_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &trusted) == SQLITE_OK &&
         defensive == 1 && trusted == 0;
}

// ---- writing -----------------------------------------------------------------------------------

Database::Batch::Batch(sqlite3* handle, const std::string& path) : handle_(handle), path_(&path) {
  exec(handle_, *path_, "BEGIN IMMEDIATE", "starting a batch of writes");
}

Database::Batch::Batch(Batch&& other) noexcept
    : handle_(other.handle_), path_(other.path_), open_(other.open_) {
  other.open_ = false;
}

Database::Batch::~Batch() {
  if (open_ && sqlite3_get_autocommit(handle_) == 0)
    sqlite3_exec(handle_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Database::Batch::commit() {
  exec(handle_, *path_, "COMMIT", "committing a batch of writes");
  open_ = false;
}

Database::Batch Database::begin_batch() { return Batch(handle_, path_); }

std::int64_t Database::insert_experiment(const ExperimentRecord& e) {
  Transaction tx(handle_, path_, "insert an experiment");
  Statement st(handle_, path_, insert_sql("experiments", {}, kExperimentColumns),
               "insert an experiment");
  bind_columns(st, 1, e, kExperimentColumns);
  st.run();
  const std::int64_t id = sqlite3_last_insert_rowid(handle_);
  insert_provenance(handle_, path_, id, std::nullopt, e.provenance);
  refresh_level_views(handle_, path_);
  tx.commit();
  return id;
}

void Database::end_experiment(std::int64_t id, const std::string& ended_at,
                              const std::string& reason) {
  Statement st(handle_, path_,
               "UPDATE experiments SET ended_at = ?2, end_reason = ?3 WHERE id = ?1",
               "record the end of an experiment instance");
  st.bind(1, id);
  st.bind(2, ended_at);
  st.bind(3, reason);
  st.run();
}

void Database::reopen_experiment(std::int64_t id) {
  Statement st(handle_, path_,
               "UPDATE experiments SET ended_at = NULL, end_reason = NULL WHERE id = ?1",
               "reopen an experiment instance");
  st.bind(1, id);
  st.run();
}

// ---- staged lines ------------------------------------------------------------------------------

void Database::stage_line(const LineRecord& line) {
  stage_buffer_.push_back(line);
  if (stage_buffer_.size() >= kStageBatch) flush_staged_lines();
}

void Database::flush_staged_lines() const {
  if (stage_buffer_.empty()) return;
  // One transaction per batch; it writes only the TEMP database, so it takes no lock on the
  // results file and never waits for another process.
  exec(handle_, path_, "BEGIN", "start staging output lines");
  try {
    Statement ins(handle_, path_,
                  insert_sql("temp.staged_lines", {}, kLineColumns, "INSERT OR REPLACE"),
                  "stage an output line");
    for (const LineRecord& l : stage_buffer_) {
      bind_columns(ins, 1, l, kLineColumns);
      ins.run();
    }
  } catch (...) {
    sqlite3_exec(handle_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  exec(handle_, path_, "COMMIT", "stage output lines");
  stage_buffer_.clear();
}

std::int64_t Database::staged_line_count() const {
  flush_staged_lines();
  Statement st(handle_, path_, "SELECT count(*) FROM temp.staged_lines", "count staged lines");
  st.step();
  return st.int64(0);
}

void Database::discard_staged_lines() {
  stage_buffer_.clear();
  exec(handle_, path_, "DELETE FROM temp.staged_lines", "discard staged lines");
}

std::int64_t Database::insert_run(const RunBundle& bundle) {
  const std::int64_t run_id = insert_run_impl(bundle, handle_);
  discard_staged_lines();
  return run_id;
}

std::int64_t Database::insert_run_from_stage(const RunBundle& bundle, const Database& stage) {
  stage.flush_staged_lines();
  return insert_run_impl(bundle, stage.handle_);
}

std::int64_t Database::insert_run_impl(const RunBundle& bundle, sqlite3* stage) {
  flush_staged_lines();
  const RunRecord& r = bundle.run;
  Transaction tx(handle_, path_, "insert a run");
  Statement run(handle_, path_, insert_sql("runs", {}, kRunColumns), "insert a run");
  bind_columns(run, 1, r, kRunColumns);
  run.run();
  const std::int64_t run_id = sqlite3_last_insert_rowid(handle_);
  insert_provenance(handle_, path_, r.experiment_id, run_id, r.provenance);
  insert_run_factors(handle_, path_, run_id, r);
  insert_epochs(handle_, path_, run_id, bundle.epochs);
  insert_lines(handle_, path_, run_id, bundle.lines);
  if (stage == handle_) {
    Statement staged(
        handle_, path_,
        "INSERT INTO lines (run_id, seq, offset_seconds, stream, rank, text) "
        "SELECT ?1, seq, offset_seconds + ?2, stream, rank, text FROM temp.staged_lines",
        "move staged output lines");
    staged.bind(1, run_id);
    staged.bind(2, bundle.staged_offset_shift_seconds);
    staged.run();
  } else {
    copy_staged_lines(handle_, path_, run_id, stage, bundle.staged_offset_shift_seconds);
  }
  insert_allreduce(handle_, path_, run_id, bundle.allreduce);
  tx.commit();
  return run_id;
}

}  // namespace scalebench::db
