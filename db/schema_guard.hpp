// The schema's guards (db/schema_guard.cpp): what a file must be before it is opened, the state
// and objects of its schema, and the migrations to the current version. Internal to db/.
#pragma once

#include <sqlite3.h>

#include <string>

namespace scalebench::db::detail {

// PRAGMA user_version: the first read of a file (a file that is not SQLite fails here).
int read_user_version(sqlite3* db, const std::string& path);

enum class SchemaState { Current, Empty, Older };
// Refuses files that are not ours or too new, before anything is written to them.
SchemaState classify_schema(sqlite3* db, const std::string& path, int version);

// A new file's schema (version 1, then every migration), and an older file's migration to the
// current version inside the caller's transaction.
void create_schema(sqlite3* db, const std::string& path);
void migrate_schema(sqlite3* db, const std::string& path, int from);

// Recreates epoch_levels and allreduce_levels with one column per factor name the database holds.
void refresh_level_views(sqlite3* db, const std::string& path);
// The same after a migration changed the columns of epoch_times or allreduce_times.
void reset_level_views(sqlite3* db, const std::string& path);

// `--db` must name a regular file or nothing yet (FIFOs, devices, directories refused).
void check_database_path(const std::string& path);
// Defensive mode on, trusted_schema off.
void harden_connection(sqlite3* db, const std::string& path);
// Refuses a schema holding objects scalebench's schema at `version` does not have, naming them.
void check_schema_objects(sqlite3* db, const std::string& path, int version);

}  // namespace scalebench::db::detail
