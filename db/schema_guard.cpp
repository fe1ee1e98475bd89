// The schema's guards: what a file must be before scalebench opens it, what its schema holds,
// and the migrations that bring an older file to the current version (docs/database.md).
#include "db/schema_guard.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "db/schema.hpp"
#include "db/sqlite_statement.hpp"

namespace scalebench::db::detail {

namespace fs = std::filesystem;

// ---- schema checks -----------------------------------------------------------------------------

int read_user_version(sqlite3* db, const std::string& path) {
  // The first read of the file: a file that is not SQLite at all fails here with
  // "file is not a database".
  Statement st(db, path, "PRAGMA user_version", "check that this is a scalebench database");
  st.step();
  return st.integer(0);
}

std::int64_t count_schema_objects(sqlite3* db, const std::string& path) {
  Statement st(db, path, "SELECT count(*) FROM sqlite_master",
               "check that this is a scalebench database");
  st.step();
  return st.int64(0);
}

bool has_scalebench_meta(sqlite3* db, const std::string& path) {
  Statement tables(db, path,
                   "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
                   "check that this is a scalebench database");
  tables.step();
  if (tables.int64(0) == 0) return false;
  Statement st(db, path, "SELECT count(*) FROM meta WHERE key = 'schema_version'",
               "check that this is a scalebench database");
  st.step();
  return st.int64(0) > 0;
}

// Refuses files that are not ours or too new, before anything is written to them.
SchemaState classify_schema(sqlite3* db, const std::string& path, int version) {
  if (version > kSchemaVersion) {
    throw DatabaseError(
        fmt::format("{}: schema version {} is newer than this scalebench supports (up to {}); "
                    "read it with a newer scalebench",
                    path, version, kSchemaVersion));
  }
  if (version <= 0) {
    if (count_schema_objects(db, path) > 0) {
      throw DatabaseError(fmt::format(
          "{}: not a scalebench database: it holds tables but no scalebench schema version "
          "(PRAGMA user_version is {}); give --db a new file name",
          path, version));
    }
    return SchemaState::Empty;
  }
  if (!has_scalebench_meta(db, path)) {
    throw DatabaseError(fmt::format(
        "{}: not a scalebench database: PRAGMA user_version is {} but there is no scalebench "
        "`meta` table",
        path, version));
  }
  return version < kSchemaVersion ? SchemaState::Older : SchemaState::Current;
}

void set_meta(sqlite3* db, const std::string& path, std::string_view key, std::string_view value) {
  Statement st(db, path, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
               "write the meta table");
  st.bind(1, key);
  st.bind(2, value);
  st.run();
}

void set_user_version(sqlite3* db, const std::string& path, int version) {
  // PRAGMA takes no bound parameters; the value is our own integer constant.
  const std::string sql = fmt::format("PRAGMA user_version = {}", version);
  exec(db, path, sql.c_str(), "set the schema version");
}

std::string quoted_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string quoted_literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Recreates epoch_levels and allreduce_levels with one column per factor name the database
// holds (in the instances' factor lists or in run_factors), when that set changed.
void refresh_level_views(sqlite3* db, const std::string& path) {
  std::vector<std::string> names;
  {
    Statement st(db, path,
                 "SELECT json_extract(j.value, '$.name') FROM experiments AS e, "
                 "json_each(e.factors_json) AS j UNION SELECT factor FROM run_factors WHERE factor "
                 "NOT IN ('condition', 'launcher', 'np') ORDER BY 1",
                 "read the factor names");
    while (st.step())
      if (!st.is_null(0)) names.push_back(st.text(0));
  }
  const auto lowered = [](std::string text) {
    for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  // Each factor's column in a view over `base`: its name, or level_<name> (then level_<name>_2,
  // ...) where that is taken, case-insensitively as SQLite compares names: by a column of the
  // view (transport in allreduce_times), by a factor named level_transport, or by another
  // experiment's factor equal but for case (Model and model: one column, half NULL, before).
  const auto columns_of = [&](const char* base) {
    std::vector<std::string> taken;
    {
      Statement st(db, path, fmt::format("SELECT lower(name) FROM pragma_table_info('{}')", base),
                   "read the columns of a view");
      while (st.step()) taken.push_back(st.text(0));
    }
    std::vector<std::string> chosen;
    std::vector<std::string> used;
    for (const auto& factor : names) {
      std::string column = factor;
      const bool own_name_free =
          std::find(taken.begin(), taken.end(), lowered(factor)) == taken.end() &&
          std::find(used.begin(), used.end(), lowered(factor)) == used.end();
      if (!own_name_free) {
        column = "level_" + factor;
        for (int k = 2; std::find(taken.begin(), taken.end(), lowered(column)) != taken.end() ||
                        std::find(used.begin(), used.end(), lowered(column)) != used.end();
             ++k)
          column = fmt::format("level_{}_{}", factor, k);
      }
      used.push_back(lowered(column));
      chosen.push_back(column);
    }
    return chosen;
  };
  std::vector<std::string> current;
  {
    Statement st(db, path,
                 "SELECT name FROM pragma_table_info('epoch_levels') WHERE name NOT IN (SELECT "
                 "name FROM pragma_table_info('epoch_times'))",
                 "read the columns of epoch_levels");
    while (st.step()) current.push_back(st.text(0));
  }
  if (current == columns_of("epoch_times")) return;
  const auto view = [&](const char* name, const char* base) {
    const auto chosen = columns_of(base);
    std::string columns;
    for (std::size_t i = 0; i < names.size(); ++i)
      columns += fmt::format(
          ", (SELECT level FROM run_factors AS f WHERE f.run_id = t.run_id AND f.factor = {}) AS "
          "{}",
          quoted_literal(names[i]), quoted_identifier(chosen[i]));
    return fmt::format("DROP VIEW IF EXISTS {0}; CREATE VIEW {0} AS SELECT t.*{1} FROM {2} AS t;",
                       name, columns, base);
  };
  exec(db, path, view("epoch_levels", "epoch_times").c_str(), "recreate the view epoch_levels");
  exec(db, path, view("allreduce_levels", "allreduce_times").c_str(),
       "recreate the view allreduce_levels");
}

// The level views made again on top of epoch_times and allreduce_times after a migration changed
// their columns.
void reset_level_views(sqlite3* db, const std::string& path) {
  exec(db, path,
       "DROP VIEW epoch_levels; DROP VIEW allreduce_levels; "
       "CREATE VIEW epoch_levels AS SELECT * FROM epoch_times; "
       "CREATE VIEW allreduce_levels AS SELECT * FROM allreduce_times;",
       "reset the level views");
  refresh_level_views(db, path);
}

// One step of the schema's history: from `version` to version + 1. Both a new file (created as
// version 1) and an older one go through these, so they end up with the same schema.
void apply_migration(sqlite3* db, const std::string& path, int version) {
  switch (version) {
    case 1:
      exec(db, path, schema::kMigrateV1ToV2, "migrate the schema from version 1 to 2");
      break;
    case 2: {
      exec(db, path, schema::kMigrateV2ToV3, "migrate the schema from version 2 to 3");
      // Instances stored before version 3 get their spec's hash, and the end of their last run
      // as their end (how they ended was not recorded: end_reason stays NULL).
      std::vector<std::pair<std::int64_t, std::string>> specs;
      {
        Statement read(db, path, "SELECT id, spec_json FROM experiments", "read stored specs");
        while (read.step()) specs.emplace_back(read.int64(0), read.text(1));
      }
      Statement hash(db, path, "UPDATE experiments SET spec_hash = ?2 WHERE id = ?1",
                     "store the hash of a stored spec");
      for (const auto& [id, spec] : specs) {
        hash.bind(1, id);
        hash.bind(2, spec_hash(spec));
        hash.run();
      }
      exec(db, path,
           "UPDATE experiments SET ended_at = coalesce((SELECT max(ended_at) FROM runs WHERE "
           "runs.experiment_id = experiments.id), started_at)",
           "record the end of stored instances");
      break;
    }
    case 3:
      exec(db, path, schema::kMigrateV3ToV4, "migrate the schema from version 3 to 4");
      break;
    case 4:
      exec(db, path, schema::kMigrateV4ToV5, "migrate the schema from version 4 to 5");
      break;
    case 5:
      exec(db, path, schema::kMigrateV5ToV6, "migrate the schema from version 5 to 6");
      reset_level_views(db, path);  // epoch_times gained a column
      break;
    case 6:
      exec(db, path, schema::kMigrateV6ToV7, "migrate the schema from version 6 to 7");
      break;
    case 7:
      exec(db, path, schema::kMigrateV7ToV8, "migrate the schema from version 7 to 8");
      reset_level_views(db, path);  // epoch_times gained a column
      break;
    default:
      throw DatabaseError(
          fmt::format("{}: no migration from schema version {} to {}", path, version, version + 1));
  }
}

void create_schema(sqlite3* db, const std::string& path) {
  exec(db, path, schema::kCreateV1, "create the schema");
  for (int version = 1; version < kSchemaVersion; ++version) apply_migration(db, path, version);
  set_meta(db, path, "schema_version", std::to_string(kSchemaVersion));
  set_meta(db, path, "created_by", "scalebench " SCALEBENCH_DB_VERSION_STRING);
  Statement st(db, path,
               "INSERT INTO meta (key, value) "
               "VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
               "write the meta table");
  st.run();
  set_user_version(db, path, kSchemaVersion);
}

// Brings an older scalebench schema up to kSchemaVersion, one version at a time, inside the
// caller's transaction (a failed migration leaves the file as it was).
void migrate_schema(sqlite3* db, const std::string& path, int from) {
  for (int version = from; version < kSchemaVersion; ++version) apply_migration(db, path, version);
  set_meta(db, path, "schema_version", std::to_string(kSchemaVersion));
  set_user_version(db, path, kSchemaVersion);
}

// `--db` must name a file: SQLite would take "" and ":memory:" for private in-memory databases
// (a whole matrix measured and nothing stored), and this build reads "file:" names as URIs.
void check_database_path(const std::string& path) {
  if (path.empty()) throw DatabaseError("database path is empty: give --db a file name");
  if (path == ":memory:" || path.rfind("file:", 0) == 0) {
    throw DatabaseError(fmt::format(
        "{}: not a file name: the results database must be a file (write ./{} for a file of "
        "that name)",
        path, path));
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw DatabaseError(fmt::format(
        "{}: is a directory: give --db a file name, such as {}/scalebench.db", path, path));
  }
  // A regular file or nothing: SQLite would block forever opening a FIFO read-only (until a
  // writer comes), and read or write a device. A link is judged by what it names.
  const auto status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) {
    if (fs::is_symlink(fs::symlink_status(path, ec)))
      throw DatabaseError(fmt::format(
          "{}: is a symbolic link to nothing: give --db a regular file or a new name", path));
    return;
  }
  if (status.type() == fs::file_type::regular) return;
  const char* kind = "not a regular file";
  switch (status.type()) {
    case fs::file_type::fifo:
      kind = "a FIFO (named pipe)";
      break;
    case fs::file_type::character:
      kind = "a character device";
      break;
    case fs::file_type::block:
      kind = "a block device";
      break;
    case fs::file_type::socket:
      kind = "a socket";
      break;
    default:
      break;
  }
  throw DatabaseError(fmt::format(
      "{}: is {}, not a regular file: give --db a regular file or a new name", path, kind));
}

// Defensive settings on every connection: no writes to the schema through PRAGMA
// writable_schema or shadow tables, and the schema's views and triggers may not call functions
// with side effects (a planted view cannot run anything but SQLite's innocuous functions).
void harden_connection(sqlite3* db, const std::string& path) {
  int on = 0;
  if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &on) != SQLITE_OK || on != 1)
    fail(db, path, "turning on defensive mode");
  int trusted = 1;
  if (sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &trusted) != SQLITE_OK ||
      trusted != 0)
    fail(db, path, "turning off trusted_schema");
  exec(db, path, "PRAGMA trusted_schema = OFF", "turning off trusted_schema");
}

// The (type, name) of every object of the schema at `version` as scalebench makes it: the
// version 1 schema and the migrations up to `version`, built in a private in-memory database,
// so that the list follows schema.hpp as the schema grows.
std::set<std::pair<std::string, std::string>> schema_objects(sqlite3* db, const std::string& path) {
  std::set<std::pair<std::string, std::string>> out;
  Statement st(db, path, "SELECT type, name FROM sqlite_schema", "list the schema's objects");
  while (st.step()) out.emplace(st.text(0), st.text(1));
  return out;
}

const std::set<std::pair<std::string, std::string>>& expected_schema_objects(int version) {
  static std::map<int, std::set<std::pair<std::string, std::string>>> cache;
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  if (const auto it = cache.find(version); it != cache.end()) return it->second;
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
  const std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)> memory(raw, &sqlite3_close_v2);
  const std::string where = "(the expected schema, in memory)";
  if (rc != SQLITE_OK) fail(raw, where, "opening");
  exec(raw, where, schema::kCreateV1, "create the schema");
  for (int v = 1; v < version; ++v) apply_migration(raw, where, v);
  return cache[version] = schema_objects(raw, where);
}

// A file scalebench writes to holds only what scalebench made: a planted trigger would run on
// every insert (`DELETE FROM lines`), a planted view or table could be taken for ours.
void check_schema_objects(sqlite3* db, const std::string& path, int version) {
  const auto& expected = expected_schema_objects(version);
  std::vector<std::string> foreign;
  for (const auto& [type, name] : schema_objects(db, path)) {
    if (expected.contains({type, name})) continue;
    // SQLite's own statistics (ANALYZE) change no result.
    if (type == "table" && name.starts_with("sqlite_stat")) continue;
    std::string shown;
    for (const char c : name.substr(0, 100))
      shown += static_cast<unsigned char>(c) < 0x20 || c == 0x7f
                   ? fmt::format("\\x{:02X}", static_cast<unsigned char>(c))
                   : std::string(1, c);
    foreign.push_back(fmt::format("{} \"{}\"", type, shown));
  }
  if (foreign.empty()) return;
  throw DatabaseError(fmt::format(
      "{}: the schema holds {} that scalebench did not create: {}; scalebench does not write to "
      "such a file (a trigger would run on every run stored). Drop {} or give --db a new file",
      path, foreign.size() == 1 ? "an object" : "objects", fmt::join(foreign, ", "),
      foreign.size() == 1 ? "it" : "them"));
}

}  // namespace scalebench::db::detail
