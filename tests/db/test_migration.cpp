// A database written by the previous release (tests/data/db/schema-v3.db, see its README) opens
// after the migration to the current schema with its runs, epochs, lines and allreduce rows
// intact, gains run_factors and the level views, and takes new instances with factors.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "db/database.hpp"
#include "db/db_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
using scalebench::test::scalar;
using scalebench::test::TempDir;

namespace {

// PRAGMA user_version of the database at `uri` (an SQLite URI), by plain SQLite; -1 on error.
int sqlite_user_version(const std::string& uri) {
  sqlite3* db = nullptr;
  int version = -1;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW)
      version = sqlite3_column_int(statement, 0);
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return version;
}

std::string copy_fixture(const TempDir& dir) {
  const auto target = dir / "results.db";
  std::filesystem::copy_file(test::data_dir() / "db" / "schema-v3.db", target);
  return target.string();
}

// Everything the fixture holds, checked through the current API and through SQL.
void check_fixture_content(const db::Database& d) {
  CHECK(d.schema_version() == db::kSchemaVersion);
  const auto experiments = d.experiments();
  REQUIRE(experiments.size() == 2);
  CHECK(experiments[0].name == "fixture-v3");
  CHECK(experiments[0].spec_hash == "fnv1a64:50772ddf24073d3b");
  CHECK(experiments[0].cells == 6);
  CHECK(experiments[0].end_reason == "finished");
  CHECK(experiments[0].factors_json == "[]");
  CHECK(experiments[0].run_order == "interleaved");
  CHECK_FALSE(experiments[0].order_seed);
  CHECK(experiments[1].name == "fixture-v3-allreduce");

  const auto runs = d.runs();
  REQUIRE(runs.size() == 7);
  for (const auto& run : runs) {
    CHECK(run.status == db::RunStatus::Ok);
    CHECK(run.factors.empty());
  }
  CHECK(runs[0].condition == "single");
  CHECK(runs[1].condition == "mpirun");
  CHECK(runs[2].np == 2);
  CHECK(runs[2].env_json.find(R"("OMP_NUM_THREADS":"1")") != std::string::npos);
  CHECK(d.epoch_samples("fixture-v3").size() == 12);
  CHECK(d.epochs(runs[0].id).size() == 2);
  CHECK(d.lines(runs[0].id).size() > 0);
  CHECK(d.allreduce_results(runs[6].id).size() == 4);
  CHECK(scalar(d, "SELECT count(*) FROM lines") == "46");
  CHECK(scalar(d, "SELECT count(*) FROM epochs WHERE duration_seconds > 0") == "12");
  CHECK(scalar(d, "SELECT round(sum(busbw_gbs) + sum(time_us), 6) > 0 FROM allreduce_times") ==
        "1");
  // The built-in factors of the old runs, backfilled.
  CHECK(scalar(d, "SELECT count(*) FROM run_factors") == "21");
  CHECK(scalar(d,
               "SELECT group_concat(level, ',') FROM (SELECT level FROM run_factors WHERE "
               "factor = 'np' ORDER BY run_id)") == "1,1,2,1,1,2,2");
  CHECK(scalar(d, "SELECT count(*) FROM epoch_levels") == "12");
  CHECK(scalar(d, "SELECT count(*) FROM allreduce_levels") == "4");
}

}  // namespace

TEST_CASE("a database of the previous release (schema 3) is migrated and keeps everything") {
  TempDir dir;
  const auto path = copy_fixture(dir);
  {
    const auto d = db::Database::open(path);
    check_fixture_content(d);
  }
  // Opened again: no second migration, the same content.
  const auto again = db::Database::open(path, db::OpenMode::ReadOnly);
  check_fixture_content(again);
}

TEST_CASE("a read-only open of a schema-3 file migrates it once, in one transaction") {
  TempDir dir;
  const auto path = copy_fixture(dir);
  const auto d = db::Database::open(path, db::OpenMode::ReadOnly);
  check_fixture_content(d);
}

TEST_CASE("a migrated database takes an instance with factors: the views gain its columns") {
  TempDir dir;
  auto d = db::Database::open(copy_fixture(dir));
  db::ExperimentRecord record;
  record.name = "t2";
  record.source_path = "t2.json";
  record.spec_json = R"({"name":"t2"})";
  record.started_at = "2026-11-24T00:00:00Z";
  record.host = "h";
  record.factors_json = R"([{"name":"model","levels":["vgg16","inception_v3"]},)"
                        R"({"name":"transport","levels":["shm","tcp"]}])";
  record.run_order = "randomized";
  record.order_seed = 42;
  const auto id = d.insert_experiment(record);
  CHECK(d.experiment(id)->order_seed == 42);
  CHECK(d.experiment(id)->factors_json == record.factors_json);

  db::RunBundle bundle;
  auto& run = bundle.run;
  run.experiment_id = id;
  run.experiment = "t2";
  run.condition = "hvd";
  run.launcher = "mpirun";
  run.np = 2;
  run.command_line = "x";
  run.started_at = run.ended_at = "2026-11-24T00:00:01Z";
  run.factors = {{"model", "vgg16"}, {"transport", "tcp"}};
  bundle.epochs.push_back({0, 1, 1, 0.1, 1.5, {}, {}, {}});
  const auto run_id = d.insert_run(bundle);

  CHECK(d.runs("t2").at(0).factors == run.factors);
  const auto samples = d.epoch_samples("t2");
  REQUIRE(samples.size() == 1);
  CHECK(samples[0].factors == run.factors);
  CHECK(scalar(d, "SELECT model || '/' || transport FROM epoch_levels WHERE run_id = " +
                      std::to_string(run_id)) == "vgg16/tcp");
  // Old runs have no such factor: NULL, not a guess.
  CHECK(scalar(d, "SELECT count(*) FROM epoch_levels WHERE model IS NULL") == "12");
  // allreduce_times has its own transport column: the factor becomes level_transport there.
  CHECK(scalar(d,
               "SELECT count(*) FROM pragma_table_info('allreduce_levels') WHERE name = "
               "'level_transport'") == "1");
  CHECK(scalar(d, "SELECT level FROM run_factors WHERE factor = 'np' AND run_id = " +
                      std::to_string(run_id)) == "2");
  // A built-in name cannot come in as a run's own factor (it would contradict the column).
  run.factors = {{"np", "4"}};
  CHECK(test::error_of([&] { d.insert_run(bundle); }).find("may not be named np") !=
        std::string::npos);
}

TEST_CASE("a database of the previous release (schema 5) gains test accuracy and provenance") {
  // tests/data/db/schema-v5.db: scalebench at a727f06 ran tests/data/db/fixture-v5.json (6 runs,
  // factor "batch", our trainer printing test_accuracy, which schema 5 did not keep).
  TempDir dir;
  const auto path = (dir / "v5.db").string();
  std::filesystem::copy_file(test::data_dir() / "db" / "schema-v5.db", path);
  auto d = db::Database::open(path);
  CHECK(d.schema_version() == db::kSchemaVersion);
  const auto runs = d.runs("fixture-v5");
  REQUIRE(runs.size() == 6);
  for (const auto& run : runs) {
    CHECK(run.status == db::RunStatus::Ok);
    CHECK_FALSE(run.test_accuracy);  // not recorded then: NULL, never made up
    CHECK(d.provenance(run.id).empty());
    REQUIRE(run.factors.size() == 1);
    CHECK(run.factors[0].first == "batch");
  }
  CHECK(scalar(d, "SELECT count(*) FROM epochs") == "12");
  CHECK(scalar(d, "SELECT count(*) FROM lines") == "36");
  CHECK(scalar(d,
               "SELECT count(*) FROM epoch_levels WHERE test_accuracy IS NULL AND batch IN "
               "('32', '64')") == "12");
  CHECK(scalar(d, "SELECT count(*) FROM epochs WHERE end_rule = 'training_done'") == "6");
  // The stored epoch times are untouched by the migration.
  // (sqlite3 tests/data/db/schema-v5.db "SELECT round(sum(duration_seconds), 9) FROM epochs")
  CHECK(scalar(d, "SELECT round(sum(duration_seconds), 9) FROM epochs") == "0.174005901");
}

TEST_CASE("a database of the previous release (schema 6) gains per-rank epoch ends, unchanged") {
  // tests/data/db/schema-v6.db: the GPU quickstart of 2026-11-26 on an H100 (scalebench at
  // a683074, experiments/quickstart-gpu.json: 6 runs of 5 epochs, provenance of the GPU).
  TempDir dir;
  const auto path = (dir / "v6.db").string();
  std::filesystem::copy_file(test::data_dir() / "db" / "schema-v6.db", path);
  auto d = db::Database::open(path);
  CHECK(d.schema_version() == db::kSchemaVersion);
  const auto runs = d.runs("quickstart-gpu");
  REQUIRE(runs.size() == 6);
  for (const auto& run : runs) CHECK(run.status == db::RunStatus::Ok);
  CHECK(scalar(d, "SELECT count(*) FROM epochs") == "30");
  CHECK(scalar(d, "SELECT count(*) FROM lines") == "126");
  CHECK(scalar(d, "SELECT count(*) FROM epoch_rank_ends") == "0");
  CHECK(scalar(d, "SELECT count(*) FROM epoch_rank_spread") == "0");
  CHECK(scalar(d, "SELECT value FROM provenance WHERE key = 'gpus'") ==
        "NVIDIA H100 80GB HBM3, 580.159.04");
  // (sqlite3 tests/data/db/schema-v6.db "SELECT round(sum(duration_seconds), 9) FROM epochs")
  CHECK(scalar(d, "SELECT round(sum(duration_seconds), 9) FROM epochs") == "15.325381747");
}

TEST_CASE("each schema-vN fixture is still at version N (a read opens migrate it: copy first)") {
  // schema-v3.db was migrated to 6 in place once (commit 18c5da8, a command run on the fixture
  // itself), which left the 3 -> 4 migration untested until it was restored from 57d282f.
  for (const auto& entry : std::filesystem::directory_iterator(test::data_dir() / "db")) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("schema-v") || !name.ends_with(".db")) continue;
    const std::string version = name.substr(8, name.size() - 8 - 3);
    CAPTURE(name);
    // Read with plain SQLite, read-only and immutable: scalebench's open would migrate it.
    const std::string uri = "file:" + entry.path().string() + "?mode=ro&immutable=1";
    CHECK(sqlite_user_version(uri) == std::stoi(version));
  }
}

TEST_CASE("a database of the previous release (schema 7) migrates to 8: validation accuracy") {
  // tests/data/db/schema-v7.db: tests/data/db/fixture-v7.json run by scalebench at schema 7 (see
  // the README): 6 ok runs (factor batch 32, 64 x single np=1 and mpirun np 1, 2), 12 epochs.
  TempDir dir;
  const auto path = (dir / "v7.db").string();
  std::filesystem::copy_file(test::data_dir() / "db" / "schema-v7.db", path);
  const auto d = db::Database::open(path, db::OpenMode::ReadOnly);
  CHECK(d.schema_version() == 8);
  // The new column, empty for runs measured before it (no program named a validation accuracy),
  // and at the end of epoch_times and epoch_levels (the level views made again, factor kept).
  CHECK(scalar(d, "SELECT count(*) FROM epochs WHERE validation_accuracy IS NULL") == "12");
  CHECK(scalar(d, "SELECT count(*) FROM epoch_times WHERE validation_accuracy IS NULL") == "12");
  CHECK(scalar(d,
               "SELECT count(*) FROM epoch_levels WHERE batch = '64' AND "
               "validation_accuracy IS NULL") == "6");
  for (const auto& epoch : d.epochs(d.runs("fixture-v7").front().id))
    CHECK_FALSE(epoch.validation_accuracy);
  const auto runs = d.runs("fixture-v7");
  REQUIRE(runs.size() == 6);
  for (const auto& run : runs) CHECK(run.status == db::RunStatus::Ok);
  CHECK(scalar(d, "SELECT count(*) FROM epochs") == "12");
  CHECK(scalar(d, "SELECT count(*) FROM lines") == "36");
  CHECK(scalar(d, "SELECT group_concat(DISTINCT batch) FROM epoch_levels") == "32,64");
  CHECK(scalar(d, "SELECT round(sum(duration_seconds), 9) FROM epochs") == "0.414755726");
}

TEST_CASE("a database of this release (schema 8) opens as it is, for the next migration's tests") {
  // tests/data/db/schema-v8.db: fixture-v8.json and fixture-v8-lightning.json run by scalebench at
  // schema 8 (see the README): 7 ok runs, 15 epochs, the Lightning run's validation accuracy.
  TempDir dir;
  const auto path = (dir / "v8.db").string();
  std::filesystem::copy_file(test::data_dir() / "db" / "schema-v8.db", path);
  const auto d = db::Database::open(path, db::OpenMode::ReadOnly);
  CHECK(d.schema_version() == 8);
  CHECK(scalar(d, "SELECT count(*) FROM runs WHERE status = 'ok'") == "7");
  CHECK(scalar(d, "SELECT count(*) FROM epochs") == "15");
  CHECK(scalar(d, "SELECT count(*) FROM lines") == "53");
  const auto lightning = d.runs("fixture-v8-lightning");
  REQUIRE(lightning.size() == 1);
  const auto epochs = d.epochs(lightning[0].id);
  REQUIRE(epochs.size() == 3);
  CHECK(epochs[0].validation_accuracy == doctest::Approx(0.6));
  CHECK(epochs[2].validation_accuracy == doctest::Approx(0.8));
  CHECK_FALSE(epochs[2].test_accuracy);
  CHECK(scalar(d, "SELECT group_concat(validation_accuracy) FROM epoch_levels") == "0.6,0.7,0.8");
  CHECK(scalar(d, "SELECT round(sum(duration_seconds), 9) FROM epochs") == "1.560848697");
}

TEST_CASE("level views: factor names equal but for case, and level_<name> clashes, each a column") {
  // Two experiments of one database with factors Model and model: SQLite's names ignore case,
  // so they shared one column and one experiment's levels read NULL. transport and
  // level_transport in allreduce_levels (transport is its own column there) collided too.
  test::TempDir dir;
  auto d = db::Database::open((dir / "r.db").string());
  const auto insert = [&](const std::string& name, const std::string& factor,
                          const std::string& level) {
    db::ExperimentRecord record;
    record.name = name;
    record.source_path = name + ".json";
    record.spec_json = "{}";
    record.started_at = "2026-11-28T00:00:00Z";
    record.host = "h";
    record.factors_json = R"([{"name":")" + factor + R"(","levels":[")" + level + R"("]}])";
    db::RunBundle bundle;
    bundle.run.experiment_id = d.insert_experiment(record);
    bundle.run.experiment = name;
    bundle.run.condition = "c";
    bundle.run.launcher = "single";
    bundle.run.np = 1;
    bundle.run.command_line = "x";
    bundle.run.started_at = bundle.run.ended_at = "2026-11-28T00:00:01Z";
    bundle.run.factors = {{factor, level}};
    bundle.epochs.push_back({0, 1, 1, 0.1, 1.5, {}, {}, {}});
    return d.insert_run(bundle);
  };
  const auto upper = insert("a", "Model", "vgg16");
  const auto lower = insert("b", "model", "resnet50");
  insert("c", "transport", "tcp");
  insert("d", "level_transport", "shm");
  const auto level_of = [&](const std::string& column, std::int64_t run) {
    return scalar(d,
                  "SELECT " + column + " FROM epoch_levels WHERE run_id = " + std::to_string(run));
  };
  CHECK(level_of("\"Model\"", upper) == "vgg16");
  CHECK(level_of("level_model", lower) == "resnet50");
  CHECK(level_of("\"Model\"", lower) == "NULL");
  // Every column name of both views differs from every other, ignoring case.
  for (const char* view : {"epoch_levels", "allreduce_levels"}) {
    CAPTURE(view);
    CHECK(scalar(d, std::string("SELECT count(*) - count(DISTINCT lower(name)) FROM "
                                "pragma_table_info('") +
                        view + "')") == "0");
  }
  CHECK(scalar(d,
               "SELECT group_concat(name, ' ') FROM pragma_table_info('allreduce_levels') "
               "WHERE name LIKE 'level_t%'") == "level_transport level_transport_2");
}
