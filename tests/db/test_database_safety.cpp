// Issue 23, item 6 d and e: `--db` is a regular file or absent (FIFOs, devices and directories are
// refused before SQLite opens them); every connection is defensive with trusted_schema off; a
// file whose schema holds objects scalebench did not create is not written to.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "db/database.hpp"
#include "db_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
using scalebench::test::error_of;

namespace {

// Runs `sql` on the file with SQLite directly, as another program could.
void plant(const std::string& path, const char* sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(raw, sql, nullptr, nullptr, &message);
  INFO((message != nullptr ? message : ""));
  sqlite3_free(message);
  sqlite3_close(raw);
  REQUIRE(rc == SQLITE_OK);
}

std::string run_count(const std::string& path) {
  auto database = db::Database::open(path, db::OpenMode::ReadOnly);
  return test::scalar(database, "SELECT count(*) FROM lines");
}

}  // namespace

TEST_CASE("--db that is a FIFO, a device or a link to one is refused before SQLite opens it") {
  test::TempDir dir;
  const auto fifo = (dir / "results.db").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A writer held open, so that the check before this change fails instead of blocking forever
  // (a read-only open of a FIFO waits for a writer).
  const int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  REQUIRE(writer >= 0);
  for (const auto mode : {db::OpenMode::ReadOnly, db::OpenMode::ReadWrite}) {
    const auto error = error_of([&] { db::Database::open(fifo, mode); });
    CHECK(error == fifo +
                       ": is a FIFO (named pipe), not a regular file: give --db a regular file "
                       "or a new name");
  }
  ::close(writer);

  CHECK(error_of([] { db::Database::open("/dev/null", db::OpenMode::ReadOnly); }) ==
        "/dev/null: is a character device, not a regular file: give --db a regular file or a new "
        "name");
  const auto link = (dir / "link.db").string();
  std::filesystem::create_symlink("/dev/null", link);
  CHECK(error_of([&] { db::Database::open(link); }).find("is a character device") !=
        std::string::npos);
  const auto dangling = (dir / "dangling.db").string();
  std::filesystem::create_symlink(dir / "nowhere" / "x.db", dangling);
  CHECK(error_of([&] { db::Database::open(dangling); }).find("symbolic link to nothing") !=
        std::string::npos);
  CHECK(error_of([&] { db::Database::open(dir.path().string()); }).find("is a directory") !=
        std::string::npos);

  // A regular file, new or existing, and a link to one, open as before.
  const auto file = (dir / "ok.db").string();
  CHECK(error_of([&] { db::Database::open(file); }) == "<no error>");
  const auto to_file = (dir / "to-ok.db").string();
  std::filesystem::create_symlink(file, to_file);
  CHECK(error_of([&] { db::Database::open(to_file, db::OpenMode::ReadOnly); }) == "<no error>");
}

TEST_CASE("every connection is defensive with trusted_schema off, read-only ones included") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  {
    auto database = db::Database::open(path);
    CHECK(database.hardened());
  }
  auto read_only = db::Database::open(path, db::OpenMode::ReadOnly);
  CHECK(read_only.hardened());
  // The user's query path keeps them (and cannot turn them off).
  CHECK(test::scalar(read_only, "SELECT count(*) FROM runs") == "0");
  CHECK(read_only.hardened());
}

TEST_CASE("a database with a planted trigger, view or table is refused for writing, naming them") {
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  { db::Database::open(path); }
  // Reopening scalebench's own file is fine.
  CHECK(error_of([&] { db::Database::open(path); }) == "<no error>");

  plant(path, "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM lines; END");
  CHECK(error_of([&] { db::Database::open(path); }) ==
        path +
            ": the schema holds an object that scalebench did not create: trigger \"t\"; "
            "scalebench does not write to such a file (a trigger would run on every run stored). "
            "Drop it or give --db a new file");

  plant(path,
        "CREATE VIEW extra AS SELECT 1; CREATE TABLE mine (x); CREATE INDEX mine_x ON mine (x)");
  const auto error = error_of([&] { db::Database::open(path); });
  CHECK(error.find("objects that scalebench did not create") != std::string::npos);
  CHECK(error.find("trigger \"t\"") != std::string::npos);
  CHECK(error.find("view \"extra\"") != std::string::npos);
  CHECK(error.find("table \"mine\"") != std::string::npos);
  CHECK(error.find("index \"mine_x\"") != std::string::npos);

  // Reading stays possible (nothing is written; triggers fire only on writes).
  CHECK(run_count(path) == "0");

  // Dropped again, the file is written to as before; SQLite's own statistics are no objection.
  plant(path, "DROP TRIGGER t; DROP VIEW extra; DROP TABLE mine; ANALYZE");
  CHECK(error_of([&] { db::Database::open(path); }) == "<no error>");
}

TEST_CASE("a reader opening the file while `run` creates its schema waits for the schema") {
  // The file exists (sqlite3_open made it) a moment before its schema: a report started then
  // said "not a scalebench database".
  test::TempDir dir;
  const auto path = (dir / "r.db").string();
  std::ofstream(path).close();  // the writer's first step: the empty file
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    db::Database::open(path);
  });
  std::string error;
  try {
    const auto reader = db::Database::open(path, db::OpenMode::ReadOnly);
    CHECK(reader.schema_version() == db::kSchemaVersion);
  } catch (const db::DatabaseError& e) {
    error = e.what();
  }
  writer.join();
  CHECK(error.empty());
  // An empty file nobody is writing (old, no log beside it) is refused at once.
  const auto stale = (dir / "stale.db").string();
  std::ofstream(stale).close();
  std::filesystem::last_write_time(
      stale, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(db::Database::open(stale, db::OpenMode::ReadOnly),
                       doctest::Contains("not a scalebench database"), db::DatabaseError);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(4));
}
