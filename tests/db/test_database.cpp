// Tests for db/database.cpp: round trips, refusing foreign files, atomic inserts, read-only
// queries.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/schema.hpp"
#include "db_support.hpp"
#include "test_support.hpp"

namespace db = scalebench::db;
using scalebench::test::error_of;
using scalebench::test::scalar;
using scalebench::test::TempDir;

namespace {

db::ExperimentRecord make_experiment(const std::string& name) {
  db::ExperimentRecord e;
  e.name = name;
  e.source_path = "experiments/" + name + ".json";
  e.spec_json = R"({"name":")" + name + R"("})";
  e.started_at = "2024-05-01T12:00:00Z";
  e.host = "node01";
  e.cpu_count = 16;
  e.scalebench_version = "0.1.0";
  return e;
}

// A finished ok run with `epochs` epochs of 2.5 s (and optional fields present) and two lines.
db::RunBundle make_run(std::int64_t experiment_id, const std::string& experiment,
                       const std::string& condition, int np, int repetition, int epochs = 2) {
  db::RunBundle b;
  db::RunRecord& r = b.run;
  r.experiment_id = experiment_id;
  r.experiment = experiment;
  r.condition = condition;
  r.launcher = np == 1 ? "single" : "mpirun";
  r.np = np;
  r.repetition = repetition;
  r.command_line = "mpirun -np 2 'scalebench-train' model=mlp";
  r.status = db::RunStatus::Ok;
  r.exit_code = 0;
  r.started_at = "2024-05-01T12:00:01.000001Z";
  r.ended_at = "2024-05-01T12:00:09.500000Z";
  r.wall_seconds = 8.5;
  r.startup_seconds = 0.75;
  r.train_images = 60000;
  r.images_per_second = 24000.5;
  for (int i = 1; i <= epochs; ++i) {
    db::EpochRecord e;
    e.epoch = i;
    e.total_epochs = epochs;
    e.start_offset_seconds = 0.75 + 2.5 * (i - 1);
    e.duration_seconds = 2.5;
    e.trainer_seconds = 2.49;
    e.loss = 0.5 / i;
    e.accuracy = 0.8 + 0.01 * i;
    b.epochs.push_back(e);
  }
  db::LineRecord out;
  out.seq = 0;
  out.offset_seconds = 0.1;
  out.stream = "stdout";
  out.rank = 0;
  out.text = "scalebench-train model=mlp";
  b.lines.push_back(out);
  db::LineRecord err;
  err.seq = 1;
  err.offset_seconds = 0.2;
  err.stream = "stderr";
  err.text = "warning: untagged";  // rank absent
  b.lines.push_back(err);
  return b;
}

// Everything stored, as text, to compare before and after refused queries.
std::string snapshot(const db::Database& d) {
  std::string out;
  for (const char* table :
       {"meta", "experiments", "runs", "epochs", "lines", "allreduce_results"}) {
    const db::QueryResult r = d.query_read_only(std::string("SELECT * FROM ") + table);
    for (const auto& row : r.rows) {
      for (const auto& v : row) out += v.value_or("NULL") + "|";
      out += "\n";
    }
  }
  const db::QueryResult schema = d.query_read_only("SELECT type, name, sql FROM sqlite_master");
  for (const auto& row : schema.rows) {
    for (const auto& v : row) out += v.value_or("NULL") + "|";
    out += "\n";
  }
  return out + scalar(d, "PRAGMA user_version") + scalar(d, "PRAGMA foreign_keys");
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// Runs SQL on a database file through the raw C API, to build files the tool must refuse.
void raw_exec(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(path.string().c_str(), &handle) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(handle);
  REQUIRE_MESSAGE(rc == SQLITE_OK, message);
}

// The first column of the first row, read through the raw C API on a separate connection.
std::string raw_scalar(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(path.string().c_str(), &handle) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string value = "<error>";
  if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    value = text != nullptr ? text : "NULL";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  return value;
}

}  // namespace

TEST_CASE("a new database has the current schema, WAL mode and meta rows") {
  TempDir dir;
  const auto path = (dir / "nested/deeper/results.db").string();
  auto d = db::Database::open(path);
  CHECK(std::filesystem::exists(path));
  CHECK(d.path() == path);
  CHECK(d.schema_version() == db::kSchemaVersion);
  CHECK(raw_scalar(path, "PRAGMA journal_mode") == "wal");
  CHECK(scalar(d, "PRAGMA foreign_keys") == "1");
  CHECK(scalar(d, "SELECT value FROM meta WHERE key = 'schema_version'") ==
        std::to_string(db::kSchemaVersion));
  CHECK(scalar(d, "SELECT value FROM meta WHERE key = 'created_by'").rfind("scalebench ", 0) == 0);
  CHECK(scalar(d, "SELECT count(*) FROM meta WHERE key = 'created_at'") == "1");
  CHECK(scalar(d, "SELECT count(*) FROM sqlite_master WHERE name = 'epoch_times'") == "1");
  CHECK(d.experiments().empty());
  CHECK(d.runs().empty());
  CHECK_FALSE(d.latest_experiment().has_value());
}

TEST_CASE(
    "experiments, runs, epochs and lines round-trip, with optional fields present and absent") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const db::ExperimentRecord exp = make_experiment("scaling");
  const std::int64_t exp_id = d.insert_experiment(exp);
  CHECK(exp_id > 0);

  const db::RunBundle full = make_run(exp_id, "scaling", "mlp", 2, 1);
  const std::int64_t full_id = d.insert_run(full);

  // A failed run: killed by a signal, no optional measurements, an epoch without its end.
  db::RunBundle bare = make_run(exp_id, "scaling", "mlp", 4, 1, 1);
  bare.run.status = db::RunStatus::Failed;
  bare.run.exit_code.reset();
  bare.run.signal = 9;
  bare.run.error = "killed by signal 9 (SIGKILL)";
  bare.run.startup_seconds.reset();
  bare.run.train_images.reset();
  bare.run.images_per_second.reset();
  bare.epochs[0].duration_seconds.reset();
  bare.epochs[0].trainer_seconds.reset();
  bare.epochs[0].loss.reset();
  bare.epochs[0].accuracy.reset();
  const std::int64_t bare_id = d.insert_run(bare);
  CHECK(bare_id > full_id);

  const auto experiments = d.experiments();
  REQUIRE(experiments.size() == 1);
  CHECK(experiments[0].id == exp_id);
  CHECK(experiments[0].name == exp.name);
  CHECK(experiments[0].source_path == exp.source_path);
  CHECK(experiments[0].spec_json == exp.spec_json);
  CHECK(experiments[0].started_at == exp.started_at);
  CHECK(experiments[0].host == exp.host);
  CHECK(experiments[0].cpu_count == exp.cpu_count);
  CHECK(experiments[0].scalebench_version == exp.scalebench_version);
  CHECK(d.latest_experiment() == "scaling");

  const auto runs = d.runs();
  REQUIRE(runs.size() == 2);
  const db::RunRecord& a = runs[0];
  CHECK(a.id == full_id);
  CHECK(a.experiment_id == exp_id);
  CHECK(a.experiment == "scaling");
  CHECK(a.condition == "mlp");
  CHECK(a.launcher == "mpirun");
  CHECK(a.np == 2);
  CHECK(a.repetition == 1);
  CHECK(a.command_line == full.run.command_line);
  CHECK(a.status == db::RunStatus::Ok);
  CHECK(a.exit_code == 0);
  CHECK_FALSE(a.signal.has_value());
  CHECK(a.error.empty());
  CHECK(a.started_at == full.run.started_at);
  CHECK(a.ended_at == full.run.ended_at);
  CHECK(a.wall_seconds == 8.5);
  CHECK(a.startup_seconds == 0.75);
  CHECK(a.train_images == 60000);
  CHECK(a.images_per_second == 24000.5);

  const db::RunRecord& b = runs[1];
  CHECK(b.id == bare_id);
  CHECK(b.status == db::RunStatus::Failed);
  CHECK_FALSE(b.exit_code.has_value());
  CHECK(b.signal == 9);
  CHECK(b.error == bare.run.error);
  CHECK_FALSE(b.startup_seconds.has_value());
  CHECK_FALSE(b.train_images.has_value());
  CHECK_FALSE(b.images_per_second.has_value());

  const auto epochs = d.epochs(full_id);
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[0].run_id == full_id);
  CHECK(epochs[0].epoch == 1);
  CHECK(epochs[1].epoch == 2);
  CHECK(epochs[1].total_epochs == 2);
  CHECK(epochs[1].start_offset_seconds == 3.25);
  CHECK(epochs[1].duration_seconds == 2.5);
  CHECK(epochs[1].trainer_seconds == 2.49);
  CHECK(epochs[1].loss == 0.25);
  CHECK(epochs[1].accuracy == 0.8 + 0.01 * 2);
  const auto bare_epochs = d.epochs(bare_id);
  REQUIRE(bare_epochs.size() == 1);
  CHECK_FALSE(bare_epochs[0].duration_seconds.has_value());
  CHECK_FALSE(bare_epochs[0].trainer_seconds.has_value());
  CHECK_FALSE(bare_epochs[0].loss.has_value());
  CHECK_FALSE(bare_epochs[0].accuracy.has_value());

  const auto lines = d.lines(full_id);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].run_id == full_id);
  CHECK(lines[0].seq == 0);
  CHECK(lines[0].offset_seconds == 0.1);
  CHECK(lines[0].stream == "stdout");
  CHECK(lines[0].rank == 0);
  CHECK(lines[0].text == "scalebench-train model=mlp");
  CHECK(lines[1].stream == "stderr");
  CHECK_FALSE(lines[1].rank.has_value());
  CHECK(d.lines(12345).empty());
}

TEST_CASE("runs filter by experiment name and latest_experiment follows insertion") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto first = d.insert_experiment(make_experiment("first"));
  const auto second = d.insert_experiment(make_experiment("second"));
  d.insert_run(make_run(first, "first", "a", 1, 1));
  d.insert_run(make_run(second, "second", "a", 1, 1));
  d.insert_run(make_run(first, "first", "a", 1, 2));
  CHECK(d.runs().size() == 3);
  const auto runs = d.runs(std::string("first"));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].repetition == 1);
  CHECK(runs[1].repetition == 2);
  CHECK(d.runs(std::string("none")).empty());
  CHECK(d.latest_experiment() == "second");
}

TEST_CASE("epoch_samples keeps timed epochs of ok runs, in run then epoch order") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto exp = d.insert_experiment(make_experiment("e"));
  const auto other = d.insert_experiment(make_experiment("other"));
  const auto ok1 = d.insert_run(make_run(exp, "e", "mlp", 1, 1, 3));
  db::RunBundle failed = make_run(exp, "e", "mlp", 2, 1, 2);
  failed.run.status = db::RunStatus::Failed;
  d.insert_run(failed);
  db::RunBundle partial = make_run(exp, "e", "cnn", 2, 1, 2);
  partial.epochs[1].duration_seconds.reset();  // end of epoch 2 never seen
  partial.epochs[1].trainer_seconds.reset();
  const auto ok2 = d.insert_run(partial);
  d.insert_run(make_run(other, "other", "mlp", 1, 1, 2));

  const auto samples = d.epoch_samples(std::string("e"));
  REQUIRE(samples.size() == 4);
  CHECK(samples[0].run_id == ok1);
  CHECK(samples[0].epoch == 1);
  CHECK(samples[2].epoch == 3);
  CHECK(samples[3].run_id == ok2);
  CHECK(samples[3].epoch == 1);
  CHECK(samples[3].experiment == "e");
  CHECK(samples[3].condition == "cnn");
  CHECK(samples[3].launcher == "mpirun");
  CHECK(samples[3].np == 2);
  CHECK(samples[3].repetition == 1);
  CHECK(samples[3].duration_seconds == 2.5);
  CHECK(samples[3].trainer_seconds == 2.49);
  CHECK(samples[3].train_images == 60000);
  CHECK(d.epoch_samples().size() == 6);
  CHECK(d.epoch_samples(std::string("nope")).empty());

  // The documented view shows every epoch, with the run's status.
  CHECK(scalar(d, "SELECT count(*) FROM epoch_times WHERE experiment = 'e'") == "7");
  CHECK(scalar(d, "SELECT count(*) FROM epoch_times WHERE status = 'failed'") == "2");
}

TEST_CASE("insert_run is atomic: a failure half-way leaves no run, epoch or line") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto exp = d.insert_experiment(make_experiment("e"));
  d.insert_run(make_run(exp, "e", "mlp", 1, 1));

  db::RunBundle duplicate = make_run(exp, "e", "mlp", 2, 1, 3);
  duplicate.epochs[2].epoch = 2;  // violates PRIMARY KEY (run_id, epoch) after two good inserts
  const std::string message = error_of([&] { d.insert_run(duplicate); });
  CHECK(message.find(d.path()) == 0);
  CHECK(message.find("UNIQUE constraint failed") != std::string::npos);

  db::RunBundle bad_stream = make_run(exp, "e", "mlp", 2, 1);
  bad_stream.lines[1].stream = "stdin";
  CHECK_THROWS_AS(d.insert_run(bad_stream), db::DatabaseError);

  db::RunBundle bad_status = make_run(exp, "e", "mlp", 2, 1);
  bad_status.run.status = static_cast<db::RunStatus>(42);  // no enumerator: the CHECK refuses it
  CHECK_THROWS_AS(d.insert_run(bad_status), db::DatabaseError);
  CHECK(db::parse_run_status("interrupted") == db::RunStatus::Interrupted);
  CHECK_THROWS_WITH_AS(
      db::parse_run_status("great"),
      "runs.status \"great\" is none of ok, failed, timeout, incomplete, interrupted",
      db::DatabaseError);

  db::RunBundle no_experiment = make_run(999, "e", "mlp", 2, 1);
  CHECK_THROWS_AS(d.insert_run(no_experiment), db::DatabaseError);  // foreign key

  CHECK(d.runs().size() == 1);
  CHECK(scalar(d, "SELECT count(*) FROM runs") == "1");
  CHECK(scalar(d, "SELECT count(*) FROM epochs") == "2");
  CHECK(scalar(d, "SELECT count(*) FROM lines") == "2");

  // The connection is usable afterwards: no transaction was left open.
  CHECK(d.insert_run(make_run(exp, "e", "mlp", 2, 1)) > 0);
  CHECK(d.runs().size() == 2);
}

TEST_CASE("invalid UTF-8 and embedded NULs are stored without crashing") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto exp = d.insert_experiment(make_experiment("e"));
  db::RunBundle b = make_run(exp, "e", "mlp", 1, 1);
  using namespace std::string_literals;
  b.lines[0].text = "bad \xff\xfe byte, nul \0 here, \xe2\x82 cut"s;
  b.lines[1].text = "caf\xc3\xa9 \xe2\x82\xac";  // valid: kept as is
  const auto id = d.insert_run(b);
  const auto lines = d.lines(id);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text ==
        "bad \xef\xbf\xbd\xef\xbf\xbd byte, nul \0 here, \xef\xbf\xbd\xef\xbf\xbd cut"s);
  CHECK(lines[1].text == "caf\xc3\xa9 \xe2\x82\xac");
}

TEST_CASE("reopening keeps the data, read-write and read-only") {
  TempDir dir;
  const auto path = (dir / "r.db").string();
  std::int64_t run_id = 0;
  {
    auto d = db::Database::open(path);
    const auto exp = d.insert_experiment(make_experiment("kept"));
    run_id = d.insert_run(make_run(exp, "kept", "mlp", 2, 1));
  }
  {
    auto d = db::Database::open(path);
    CHECK(d.latest_experiment() == "kept");
    CHECK(d.epochs(run_id).size() == 2);
  }
  auto ro = db::Database::open(path, db::OpenMode::ReadOnly);
  CHECK(ro.schema_version() == db::kSchemaVersion);
  CHECK(ro.runs().size() == 1);
  CHECK(ro.lines(run_id).size() == 2);
  CHECK(scalar(ro, "SELECT count(*) FROM epoch_times") == "2");
  CHECK_THROWS_AS(ro.insert_experiment(make_experiment("x")), db::DatabaseError);

  db::Database moved = std::move(ro);  // the moved-to object owns the connection
  CHECK(moved.runs().size() == 1);
}

TEST_CASE("ReadOnly requires an existing scalebench database") {
  TempDir dir;
  const auto missing = (dir / "missing.db").string();
  const std::string message =
      error_of([&] { db::Database::open(missing, db::OpenMode::ReadOnly); });
  CHECK(message.find(missing) == 0);
  CHECK(message.find("no such file") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(missing));

  const auto empty = (dir / "empty.db").string();
  write_file(empty, "");
  CHECK(error_of([&] {
          db::Database::open(empty, db::OpenMode::ReadOnly);
        }).find("not a scalebench database") != std::string::npos);
}

TEST_CASE("files that are not scalebench databases are refused, naming the file") {
  TempDir dir;

  SUBCASE("a text file") {
    const auto path = (dir / "notes.txt").string();
    const std::string text = "these are my notes, not a database\n";
    write_file(path, text);
    for (auto mode : {db::OpenMode::ReadWrite, db::OpenMode::ReadOnly}) {
      const std::string message = error_of([&] { db::Database::open(path, mode); });
      CHECK(message.find(path + ": ") == 0);
      CHECK(message.find("file is not a database") != std::string::npos);
    }
    std::ifstream in(path);
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == text);  // untouched
  }

  SUBCASE("an SQLite database of something else") {
    const auto path = (dir / "other.db").string();
    raw_exec(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);");
    for (auto mode : {db::OpenMode::ReadWrite, db::OpenMode::ReadOnly}) {
      const std::string message = error_of([&] { db::Database::open(path, mode); });
      CHECK(message.find(path + ": ") == 0);
      CHECK(message.find("not a scalebench database") != std::string::npos);
    }
  }

  SUBCASE("an SQLite database with a user_version but no scalebench meta table") {
    const auto path = (dir / "versioned.db").string();
    raw_exec(path, "CREATE TABLE t (x); PRAGMA user_version = 1;");
    const std::string message = error_of([&] { db::Database::open(path); });
    CHECK(message.find(path + ": ") == 0);
    CHECK(message.find("not a scalebench database") != std::string::npos);
  }

  SUBCASE("a newer schema version") {
    const auto path = (dir / "future.db").string();
    { db::Database::open(path); }
    raw_exec(path, "PRAGMA user_version = " + std::to_string(db::kSchemaVersion + 1) + ";");
    for (auto mode : {db::OpenMode::ReadWrite, db::OpenMode::ReadOnly}) {
      const std::string message = error_of([&] { db::Database::open(path, mode); });
      CHECK(message.find(path + ": ") == 0);
      CHECK(message.find("newer") != std::string::npos);
    }
  }
}

TEST_CASE("query_read_only refuses anything that writes and leaves the database unchanged") {
  TempDir dir;
  const auto path = (dir / "r.db").string();
  auto d = db::Database::open(path);
  const auto exp = d.insert_experiment(make_experiment("e"));
  d.insert_run(make_run(exp, "e", "mlp", 2, 1));
  const std::string before = snapshot(d);
  const auto attached = dir / "attached.db";

  const std::vector<std::string> writes = {
      "INSERT INTO experiments (name) VALUES ('x')",
      "UPDATE runs SET status = 'failed'",
      "DELETE FROM lines",
      "DROP TABLE lines",
      "DROP VIEW epoch_times",
      "CREATE TABLE t (x)",
      "CREATE TEMP TABLE t (x)",
      "CREATE INDEX i ON lines (text)",
      "ALTER TABLE runs ADD COLUMN x",
      "PRAGMA user_version = 7",
      "PRAGMA journal_mode = DELETE",
      "PRAGMA journal_mode",
      "PRAGMA writable_schema = ON",
      "PRAGMA wal_checkpoint",
      "PRAGMA foreign_keys = OFF",
      "PRAGMA query_only = OFF",
      "ATTACH DATABASE '" + attached.string() + "' AS other",
      "BEGIN",
      "VACUUM",
      "REINDEX",
      "ANALYZE",
      "WITH x AS (SELECT 1) INSERT INTO meta SELECT 'k', 'v' FROM x",
      "REPLACE INTO meta VALUES ('schema_version', '99')",
  };
  for (const auto& sql : writes) {
    CAPTURE(sql);
    const std::string message = error_of([&] { d.query_read_only(sql); });
    CHECK_THROWS_AS(d.query_read_only(sql), db::ReadOnlyViolation);
    CHECK(message.find("only read-only statements are allowed") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(attached));

  // More than one statement, even when the first is harmless.
  for (const std::string sql :
       {"SELECT 1; DROP TABLE runs", "SELECT 1; SELECT 2", "SELECT 1; DELETE FROM lines;"}) {
    CAPTURE(sql);
    const std::string message = error_of([&] { d.query_read_only(sql); });
    CHECK(message.find("exactly one SQL statement") != std::string::npos);
  }
  CHECK(error_of([&] { d.query_read_only("  -- nothing\n"); }).find("no SQL statement") !=
        std::string::npos);

  CHECK(snapshot(d) == before);
  // Writes through the API still work afterwards: query-only mode was switched off again.
  CHECK(d.insert_run(make_run(exp, "e", "mlp", 4, 1)) > 0);
  CHECK(d.runs().size() == 2);

  // The read-only connection refuses the same way.
  auto ro = db::Database::open(path, db::OpenMode::ReadOnly);
  CHECK_THROWS_AS(ro.query_read_only("DELETE FROM runs"), db::ReadOnlyViolation);
  CHECK(ro.runs().size() == 2);
}

TEST_CASE("a reader sees committed runs while the writer keeps its connection open") {
  TempDir dir;
  const auto path = (dir / "r.db").string();
  auto writer = db::Database::open(path);
  auto second_writer = db::Database::open(path);  // schema creation is not repeated
  CHECK(second_writer.schema_version() == db::kSchemaVersion);
  auto reader = db::Database::open(path, db::OpenMode::ReadOnly);
  CHECK(reader.runs().empty());
  const auto exp = writer.insert_experiment(make_experiment("live"));
  writer.insert_run(make_run(exp, "live", "mlp", 1, 1));
  CHECK(reader.runs().size() == 1);
  CHECK(reader.latest_experiment() == "live");
  second_writer.insert_run(make_run(exp, "live", "mlp", 1, 2));
  CHECK(reader.epoch_samples(std::string("live")).size() == 4);
}

TEST_CASE("ReadWrite adopts an empty file and reports an unwritable location") {
  TempDir dir;
  const auto empty = (dir / "empty.db").string();
  write_file(empty, "");
  auto d = db::Database::open(empty);
  CHECK(d.schema_version() == db::kSchemaVersion);

  const auto blocker = dir / "file";
  write_file(blocker, "x");
  const auto below = (blocker / "sub/r.db").string();  // a directory cannot be made under a file
  const std::string message = error_of([&] { db::Database::open(below); });
  CHECK(message.find(below + ": ") == 0);
}

TEST_CASE("the example queries in docs/database.md run through query_read_only") {
  std::ifstream in(scalebench::test::source_dir() / "docs/database.md");
  REQUIRE(in);
  std::vector<std::string> queries;
  std::string line;
  std::string current;
  bool in_sql = false;
  while (std::getline(in, line)) {
    if (!in_sql && line == "```sql") {
      in_sql = true;
      current.clear();
    } else if (in_sql && line == "```") {
      in_sql = false;
      queries.push_back(current);
    } else if (in_sql) {
      current += line + "\n";
    }
  }
  REQUIRE(queries.size() >= 4);

  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  // An allreduce benchmark first (the examples on "the latest experiment" mean the training one).
  const auto bench = d.insert_experiment(make_experiment("allreduce-cpu"));
  db::RunBundle allreduce = make_run(bench, "allreduce-cpu", "mpi", 2, 1, 0);
  db::AllreduceRecord row;
  row.transport = "mpi";
  row.bytes = 8;
  row.count = 2;
  row.time_us = 0.8;
  row.algbw_gbs = row.busbw_gbs = 0.01;
  allreduce.allreduce.push_back(row);
  d.insert_run(allreduce);
  const auto exp = d.insert_experiment(make_experiment("scaling"));
  for (int np : {1, 2, 4}) {
    auto run = make_run(exp, "scaling", "mlp", np, 1);
    run.run.factors = {{"model", "mlp"}};  // a factor, for the examples on factors
    d.insert_run(run);
  }
  db::RunBundle failed = make_run(exp, "scaling", "mlp", 8, 1, 1);
  failed.run.status = db::RunStatus::Failed;
  d.insert_run(failed);
  for (const auto& sql : queries) {
    CAPTURE(sql);
    CHECK_FALSE(d.query_read_only(sql).rows.empty());
  }
}

// ---- schema version 2: the allreduce benchmark's rows ----------------------------------------

namespace {

db::AllreduceRecord make_allreduce_row(std::int64_t seq, long long bytes, double time_us) {
  db::AllreduceRecord a;
  a.seq = seq;
  a.transport = "mpi";
  a.bytes = bytes;
  a.count = bytes / 4;
  a.time_us = time_us;
  a.algbw_gbs = static_cast<double>(bytes) / 1e3 / time_us;
  a.busbw_gbs = a.algbw_gbs;  // np = 2
  a.wrong = 0;
  return a;
}

// The schema's text as SQLite keeps it, in a stable order.
std::string schema_text(const std::filesystem::path& path) {
  return raw_scalar(path,
                    "SELECT group_concat(type || ' ' || name || ': ' || ifnull(sql, ''), char(10)) "
                    "FROM (SELECT * FROM sqlite_master ORDER BY type, name)");
}

}  // namespace

TEST_CASE("allreduce rows round-trip with their run, in line order, and show in allreduce_times") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto exp_id = d.insert_experiment(make_experiment("ar"));
  db::RunBundle bundle = make_run(exp_id, "ar", "mpi", 2, 1, 0);
  bundle.allreduce.push_back(make_allreduce_row(7, 8, 0.5));
  bundle.allreduce.push_back(make_allreduce_row(8, 1048576, 250.125));
  bundle.allreduce[1].wrong = 3;
  bundle.allreduce[1].transport = "nccl";
  const auto run_id = d.insert_run(bundle);

  const auto rows = d.allreduce_results(run_id);
  REQUIRE(rows.size() == 2);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& want = bundle.allreduce[i];
    CHECK(rows[i].run_id == run_id);
    CHECK(rows[i].seq == want.seq);
    CHECK(rows[i].transport == want.transport);
    CHECK(rows[i].bytes == want.bytes);
    CHECK(rows[i].count == want.count);
    CHECK(rows[i].type == "float");
    CHECK(rows[i].redop == "sum");
    CHECK(rows[i].time_us == want.time_us);
    CHECK(rows[i].algbw_gbs == want.algbw_gbs);
    CHECK(rows[i].busbw_gbs == want.busbw_gbs);
    CHECK(rows[i].wrong == want.wrong);
  }
  CHECK(d.epochs(run_id).empty());
  CHECK(d.allreduce_results(run_id + 1).empty());

  const auto view = d.query_read_only(
      "SELECT experiment, condition, np, transport, bytes, count, time_us, wrong, status "
      "FROM allreduce_times ORDER BY bytes");
  REQUIRE(view.rows.size() == 2);
  CHECK(view.rows[1] == std::vector<std::optional<std::string>>{"ar", "mpi", "2", "nccl", "1048576",
                                                                "262144", "250.125", "3", "ok"});
}

TEST_CASE("a bad allreduce row rolls the whole run back") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto exp_id = d.insert_experiment(make_experiment("ar"));
  db::RunBundle bundle = make_run(exp_id, "ar", "mpi", 2, 1, 1);
  bundle.allreduce.push_back(make_allreduce_row(0, 8, 0.5));
  bundle.allreduce.push_back(make_allreduce_row(0, 16, 0.5));  // the same seq twice
  CHECK_THROWS_AS(d.insert_run(bundle), db::DatabaseError);
  bundle.allreduce[1].seq = 1;
  bundle.allreduce[1].time_us = -1;  // CHECK (time_us >= 0)
  CHECK_THROWS_AS(d.insert_run(bundle), db::DatabaseError);
  CHECK(d.runs().empty());
  CHECK(scalar(d, "SELECT count(*) FROM allreduce_results") == "0");
}

TEST_CASE("a version 1 file is migrated to the current version, keeping its runs") {
  TempDir dir;
  const auto old_path = dir / "v1.db";
  raw_exec(old_path, std::string(db::schema::kCreateV1) +
                         "INSERT INTO meta VALUES ('schema_version', '1');"
                         "INSERT INTO meta VALUES ('created_by', 'scalebench 0.1.0');"
                         "INSERT INTO experiments VALUES (1, 'old', 'old.json', '{}', "
                         "'2024-05-01T12:00:00Z', 'node01', 2, '0.1.0');"
                         "INSERT INTO runs (experiment_id, experiment, condition, launcher, np, "
                         "repetition, command_line, status, started_at, ended_at, wall_seconds) "
                         "VALUES (1, 'old', 'c', 'single', 1, 1, 'x', 'ok', 'a', 'b', 1.5);"
                         "PRAGMA user_version = 1;");
  {
    // A read-only command (report, query) on a database of an earlier release migrates it once.
    auto d = db::Database::open(old_path.string(), db::OpenMode::ReadOnly);
    CHECK(d.schema_version() == db::kSchemaVersion);
    CHECK(scalar(d, "SELECT value FROM meta WHERE key = 'schema_version'") ==
          std::to_string(db::kSchemaVersion));
    CHECK(scalar(d, "SELECT value FROM meta WHERE key = 'created_by'") == "scalebench 0.1.0");
    REQUIRE(d.runs().size() == 1);
    CHECK(d.runs()[0].wall_seconds == 1.5);
    db::RunBundle bundle = make_run(1, "old", "mpi", 2, 1, 0);
    bundle.allreduce.push_back(make_allreduce_row(0, 8, 0.5));
    CHECK(d.allreduce_results(d.insert_run(bundle)).size() == 1);
  }
  // The same schema as a file created new.
  const auto new_path = dir / "new.db";
  (void)db::Database::open(new_path.string());
  CHECK(schema_text(old_path) == schema_text(new_path));
  CHECK(schema_text(new_path).find("table allreduce_results") != std::string::npos);
  CHECK(schema_text(new_path).find("view allreduce_times") != std::string::npos);
}

TEST_CASE("provenance: an instance's rows hold for its runs unless a run has its own") {
  TempDir dir;
  auto d = db::Database::open((dir / "p.db").string());
  auto exp = make_experiment("prov");
  exp.provenance = {
      {"mpi", "mpirun (Open MPI) 4.1.4"}, {"env.OMP_NUM_THREADS", "4"}, {"host", "node01"}};
  const auto exp_id = d.insert_experiment(exp);
  auto first = make_run(exp_id, "prov", "mpirun", 2, 1);
  first.run.provenance = {{"env.OMP_NUM_THREADS", "1"}, {"hosts", "node01:1,node02:1"}};
  first.run.test_accuracy = 0.875;
  first.epochs[0].test_accuracy = 0.5;
  first.epochs[1].test_accuracy = 0.875;
  const auto first_id = d.insert_run(first);
  const auto second_id = d.insert_run(make_run(exp_id, "prov", "mpirun", 1, 1));

  CHECK(d.provenance(first_id) == db::Provenance{{"env.OMP_NUM_THREADS", "1"},
                                                 {"host", "node01"},
                                                 {"hosts", "node01:1,node02:1"},
                                                 {"mpi", "mpirun (Open MPI) 4.1.4"}});
  CHECK(d.provenance(second_id) == db::Provenance{{"env.OMP_NUM_THREADS", "4"},
                                                  {"host", "node01"},
                                                  {"mpi", "mpirun (Open MPI) 4.1.4"}});
  CHECK(d.instance_provenance(exp_id).size() == 3);
  // One query answers "which MPI, which hosts" for a run.
  CHECK(scalar(d,
               "SELECT group_concat(value, ' | ') FROM (SELECT value FROM run_provenance "
               "WHERE run_id = " +
                   std::to_string(first_id) + " AND key IN ('mpi', 'hosts') ORDER BY key)") ==
        "node01:1,node02:1 | mpirun (Open MPI) 4.1.4");

  // Test accuracy per epoch and the run's final one, read back and in epoch_times.
  const auto runs = d.runs("prov");
  CHECK(runs[0].test_accuracy == 0.875);
  CHECK_FALSE(runs[1].test_accuracy);
  const auto epochs = d.epochs(first_id);
  CHECK(epochs[0].test_accuracy == 0.5);
  CHECK(epochs[1].test_accuracy == 0.875);
  CHECK(scalar(d, "SELECT test_accuracy FROM epoch_times WHERE run_id = " +
                      std::to_string(first_id) + " AND epoch = 2") == "0.875");
  CHECK(d.epoch_samples("prov")[0].run_test_accuracy == 0.875);
}
