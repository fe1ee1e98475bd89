// Tests for schema version 3 in db/database.cpp: experiment instances, staged lines, a busy
// database, file names that are not files, and a database of the previous release (version 2).
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "db/database.hpp"
#include "db/schema.hpp"
#include "test_support.hpp"

namespace db = scalebench::db;
using scalebench::test::TempDir;

namespace {

db::ExperimentRecord instance_record(const std::string& name, const std::string& spec) {
  db::ExperimentRecord e;
  e.name = name;
  e.source_path = name + ".json";
  e.spec_json = spec;
  e.started_at = "2026-11-24T10:00:00Z";
  e.host = "h";
  e.cpu_count = 2;
  e.scalebench_version = "test";
  e.cells = 4;
  return e;
}

db::RunBundle ok_run(std::int64_t instance, const std::string& condition, int repetition,
                     double epoch_seconds) {
  db::RunBundle b;
  b.run.experiment_id = instance;
  b.run.experiment = "e";
  b.run.condition = condition;
  b.run.launcher = "single";
  b.run.repetition = repetition;
  b.run.command_line = "x";
  b.run.status = db::RunStatus::Ok;
  b.run.started_at = b.run.ended_at = "2026-11-24T10:00:01Z";
  b.run.wall_seconds = 1;
  b.run.env_json = R"({"OMP_NUM_THREADS":"2"})";
  db::EpochRecord e;
  e.epoch = 1;
  e.total_epochs = 1;
  e.duration_seconds = epoch_seconds;
  b.epochs.push_back(e);
  return b;
}

db::LineRecord line(std::int64_t seq, std::string text) {
  db::LineRecord l;
  l.seq = seq;
  l.offset_seconds = 0.001 * static_cast<double>(seq);
  l.stream = "stdout";
  l.text = std::move(text);
  return l;
}

std::string scalar(const db::Database& d, const std::string& sql) {
  const auto result = d.query_read_only(sql);
  return result.rows.at(0).at(0).value_or("NULL");
}

void raw_exec(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &handle) == SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &message);
  const std::string text = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(handle);
  REQUIRE_MESSAGE(rc == SQLITE_OK, text);
}

}  // namespace

TEST_CASE("spec_hash identifies a normalised spec") {
  CHECK(db::spec_hash("") == "fnv1a64:cbf29ce484222325");   // FNV-1a's offset basis
  CHECK(db::spec_hash("a") == "fnv1a64:af63dc4c8601ec8c");  // the published FNV-1a test vector
  CHECK(db::spec_hash(R"({"name":"x"})") != db::spec_hash(R"({"name":"y"})"));
}

TEST_CASE("instances: each insert is one, found by name, by spec and by id, with its end") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto a = d.insert_experiment(instance_record("e", R"({"name":"e"})"));
  const auto b = d.insert_experiment(instance_record("e", R"({"name":"e","repetitions":2})"));
  const auto c = d.insert_experiment(instance_record("other", R"({"name":"other"})"));
  CHECK(d.instances("e").size() == 2);
  CHECK(d.latest_instance()->id == c);
  CHECK(d.latest_instance(std::string("e"))->id == b);
  CHECK(d.latest_instance_of_spec(db::spec_hash(R"({"name":"e"})"))->id == a);
  CHECK_FALSE(d.latest_instance_of_spec("fnv1a64:0000000000000000"));
  CHECK_FALSE(d.latest_instance(std::string("nope")));
  const auto stored = d.experiment(a);
  REQUIRE(stored);
  CHECK(stored->spec_hash == db::spec_hash(R"({"name":"e"})"));
  CHECK(stored->cells == 4);
  CHECK_FALSE(stored->ended_at);

  d.end_experiment(a, "2026-11-24T11:00:00Z", "interrupted");
  CHECK(d.experiment(a)->end_reason == "interrupted");
  CHECK(d.experiment(a)->ended_at == "2026-11-24T11:00:00Z");
  d.reopen_experiment(a);
  CHECK_FALSE(d.experiment(a)->ended_at);
  CHECK_THROWS_AS(d.end_experiment(a, "x", "exploded"), db::DatabaseError);  // CHECK constraint

  d.insert_run(ok_run(a, "c1", 1, 1.0));
  auto retry = ok_run(b, "c1", 1, 2.0);
  retry.run.attempt = 2;
  d.insert_run(retry);
  const auto runs = d.runs_of_instances({b});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].attempt == 2);
  CHECK(runs[0].env_json == R"({"OMP_NUM_THREADS":"2"})");
  CHECK(d.runs_of_instances({a, b}).size() == 2);
  CHECK(d.runs_of_instances({}).empty());
  const auto samples = d.epoch_samples_of_instances({a});
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].duration_seconds == 1.0);
  CHECK(samples[0].experiment_id == a);
}

TEST_CASE("staged lines move into the run's lines atomically, shifted, and only once") {
  TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto id = d.insert_experiment(instance_record("e", "{}"));
  for (int i = 0; i < 5000; ++i) d.stage_line(line(i, "line " + std::to_string(i)));
  CHECK(d.staged_line_count() == 5000);

  auto bundle = ok_run(id, "c", 1, 1.0);
  bundle.staged_offset_shift_seconds = 0.5;
  const auto run = d.insert_run(bundle);
  CHECK(d.staged_line_count() == 0);
  const auto lines = d.lines(run);
  REQUIRE(lines.size() == 5000);
  CHECK(lines[4999].text == "line 4999");
  CHECK(lines[10].offset_seconds == doctest::Approx(0.51));

  // A run that fails to store keeps its stage for the next try; nothing half is stored.
  d.stage_line(line(0, "kept"));
  auto bad = ok_run(id + 100, "c", 1, 1.0);  // no such instance: foreign key
  CHECK_THROWS_AS(d.insert_run(bad), db::DatabaseError);
  CHECK(d.staged_line_count() == 1);
  CHECK(d.runs().size() == 1);
  d.discard_staged_lines();
  CHECK(d.staged_line_count() == 0);
}

TEST_CASE("a write lock held by another process: DatabaseBusy, and the run fits a side file") {
  TempDir dir;
  const auto path = (dir / "r.db").string();
  auto d = db::Database::open(path);
  const auto id = d.insert_experiment(instance_record("e", "{}"));
  d.set_busy_timeout(100);
  d.stage_line(line(0, "measured"));

  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  CHECK_THROWS_AS(d.insert_run(ok_run(id, "c", 1, 1.0)), db::DatabaseBusy);
  CHECK(d.staged_line_count() == 1);

  auto side = db::Database::open((dir / "r.db.unsaved" / "side.db").string());
  auto record = *d.experiment(id);
  auto bundle = ok_run(side.insert_experiment(record), "c", 1, 1.0);
  const auto side_run = side.insert_run_from_stage(bundle, d);
  REQUIRE(side.lines(side_run).size() == 1);
  CHECK(side.lines(side_run)[0].text == "measured");

  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  CHECK(d.insert_run(ok_run(id, "c", 1, 1.0)) > 0);  // the lock is gone: the write goes through
}

TEST_CASE("--db must name a file") {
  TempDir dir;
  for (const std::string name : {"", ":memory:", "file:x.db?mode=memory"}) {
    CAPTURE(name);
    CHECK_THROWS_AS(db::Database::open(name), db::DatabaseError);
    CHECK_THROWS_AS(db::Database::open(name, db::OpenMode::ReadOnly), db::DatabaseError);
  }
  try {
    db::Database::open(dir.path().string());
    FAIL("a directory was accepted");
  } catch (const db::DatabaseError& error) {
    CHECK(std::string(error.what()).find("is a directory") != std::string::npos);
  }
}

TEST_CASE("a database of the previous release (schema 2) is migrated and keeps its runs") {
  TempDir dir;
  const auto path = dir / "v2.db";
  raw_exec(path, std::string(db::schema::kCreateV1) + db::schema::kMigrateV1ToV2 +
                     "INSERT INTO meta VALUES ('schema_version', '2');"
                     "INSERT INTO experiments VALUES (1, 'old', 'old.json', '{\"name\":\"old\"}', "
                     "'2026-05-01T12:00:00Z', 'node01', 2, '0.1.0');"
                     "INSERT INTO runs (experiment_id, experiment, condition, launcher, np, "
                     "repetition, command_line, status, started_at, ended_at, wall_seconds) "
                     "VALUES (1, 'old', 'c', 'single', 1, 1, 'x', 'ok', 'a', "
                     "'2026-05-01T12:05:00Z', 1.5);"
                     "INSERT INTO epochs (run_id, epoch, total_epochs, start_offset_seconds, "
                     "duration_seconds) VALUES (1, 1, 1, 0.1, 1.25);"
                     "PRAGMA user_version = 2;");
  const auto d = db::Database::open(path.string(), db::OpenMode::ReadOnly);
  CHECK(d.schema_version() == db::kSchemaVersion);
  const auto instance = d.experiment(1);
  REQUIRE(instance);
  CHECK(instance->spec_hash == db::spec_hash(R"({"name":"old"})"));
  CHECK(instance->ended_at == "2026-05-01T12:05:00Z");
  CHECK_FALSE(instance->end_reason);
  CHECK(d.runs()[0].attempt == 1);
  CHECK(d.runs()[0].env_json == "{}");
  CHECK(d.epoch_samples_of_instances({1}).size() == 1);
  CHECK(scalar(d, "SELECT attempt FROM epoch_times") == "1");
  CHECK(scalar(d, "SELECT experiment_id FROM epoch_times") == "1");
  // Still read-only for the caller.
  CHECK_THROWS(d.query_read_only("DELETE FROM runs"));
}
