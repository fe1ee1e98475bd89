// db/merge.cpp: side files (and any scalebench database) merged into a results database whole,
// under the same instance, duplicates refused; side files of every schema version.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "db/database.hpp"
#include "db/db_support.hpp"
#include "db/merge.hpp"
#include "test_support.hpp"

using namespace scalebench;
using scalebench::test::scalar;
using scalebench::test::TempDir;

namespace {

db::ExperimentRecord instance_record() {
  db::ExperimentRecord e;
  e.name = "scaling";
  e.source_path = "scaling.json";
  e.spec_json = R"({"name":"scaling"})";
  e.started_at = "2026-11-26T10:00:00.000000Z";
  e.host = "node01";
  e.cpu_count = 8;
  e.scalebench_version = "0.1.0";
  e.factors_json = R"([{"name":"batch","levels":["32"]}])";
  e.provenance = {{"kernel", "6.1"}};
  return e;
}

// A run of `np` ranks with a factor level, provenance, two epochs with both ranks' ends, lines
// and one allreduce row: every table a run touches.
db::RunBundle full_run(std::int64_t instance, int np, const std::string& started_at) {
  db::RunBundle b;
  b.run.experiment_id = instance;
  b.run.experiment = "scaling";
  b.run.condition = "hvd";
  b.run.launcher = "mpirun";
  b.run.np = np;
  b.run.command_line = "mpirun -np 2 train";
  b.run.exit_code = 0;
  b.run.started_at = started_at;
  b.run.ended_at = "2026-11-26T10:01:00.000000Z";
  b.run.wall_seconds = 7.5;
  b.run.train_images = 1000;
  b.run.factors = {{"batch", "32"}};
  b.run.test_accuracy = 0.875;
  b.run.provenance = {{"mpi", "Open MPI 4.1.4"}};
  for (int epoch = 1; epoch <= 2; ++epoch) {
    db::EpochRecord e;
    e.epoch = epoch;
    e.total_epochs = 2;
    e.start_offset_seconds = 1.0 + 3.0 * (epoch - 1);
    e.duration_seconds = 3.0;
    e.end_rule = "epoch_end_line";
    e.test_accuracy = 0.5 + 0.25 * epoch;
    e.rank_ends = {{0, 3.9 + 3 * (epoch - 1), "epoch_end_line"},
                   {1, 4.0 + 3 * (epoch - 1), "epoch_end_line"}};
    b.epochs.push_back(e);
  }
  for (int i = 0; i < 3; ++i) {
    db::LineRecord line;
    line.seq = i;
    line.offset_seconds = 0.5 * i;
    line.stream = i == 2 ? "stderr" : "stdout";
    if (i < 2) line.rank = i;
    line.text = "line " + std::to_string(i);
    b.lines.push_back(line);
  }
  db::AllreduceRecord row;
  row.seq = 1;
  row.transport = "mpi";
  row.bytes = 1024;
  row.count = 256;
  row.time_us = 12.5;
  row.algbw_gbs = 0.08;
  row.busbw_gbs = 0.08;
  b.allreduce.push_back(row);
  return b;
}

}  // namespace

TEST_CASE("merge writes a side file's run whole under the same instance, and only once") {
  TempDir dir;
  auto results = db::Database::open((dir / "results.db").string());
  const auto instance = results.insert_experiment(instance_record());
  results.insert_run(full_run(instance, 1, "2026-11-26T10:00:01.000000Z"));
  // The side file `scalebench run` writes: a copy of the instance row and the run it kept.
  auto side = db::Database::open((dir / "side.db").string());
  const auto side_instance = side.insert_experiment(instance_record());
  const auto kept = full_run(side_instance, 2, "2026-11-26T10:00:30.000000Z");
  side.insert_run(kept);

  const auto merged = db::merge_database(results, side, "side.db");
  CHECK(merged.runs == 1);
  CHECK(merged.instances_created == 0);
  CHECK(results.experiments().size() == 1);
  const auto runs = results.runs_of_instances({instance});
  REQUIRE(runs.size() == 2);
  const auto& run = runs[1];
  CHECK(run.np == 2);
  CHECK(run.started_at == kept.run.started_at);
  CHECK(run.factors == kept.run.factors);
  CHECK(run.test_accuracy == kept.run.test_accuracy);
  CHECK(results.own_provenance(run.id) == kept.run.provenance);
  CHECK(results.provenance(run.id).size() == 2);  // with the instance's kernel
  const auto epochs = results.epochs(run.id);
  REQUIRE(epochs.size() == 2);
  CHECK(epochs[1].end_rule == "epoch_end_line");
  CHECK(epochs[1].test_accuracy == kept.epochs[1].test_accuracy);
  REQUIRE(epochs[1].rank_ends.size() == 2);
  CHECK(epochs[1].rank_ends[1].rank == 1);
  CHECK(epochs[1].rank_ends[1].end_offset_seconds == doctest::Approx(7.0));
  const auto lines = results.lines(run.id);
  REQUIRE(lines.size() == 3);
  CHECK(lines[2].text == "line 2");
  CHECK_FALSE(lines[2].rank);
  const auto allreduce = results.allreduce_results(run.id);
  REQUIRE(allreduce.size() == 1);
  CHECK(allreduce[0].time_us == 12.5);
  CHECK(scalar(results, "SELECT count(*) FROM epoch_levels WHERE run_id = " +
                            std::to_string(run.id) + " AND batch = '32'") == "2");

  // Again: refused whole, naming the run, nothing written; or skipped when asked.
  const std::string before = scalar(results, "SELECT count(*) FROM lines");
  CHECK_THROWS_WITH_AS(db::merge_database(results, side, "side.db"),
                       doctest::Contains("side.db: 1 run is already merged, nothing written"),
                       db::DuplicateRunError);
  CHECK(results.runs().size() == 2);
  CHECK(scalar(results, "SELECT count(*) FROM lines") == before);
  const auto skipped = db::merge_database(results, side, "side.db", true);
  CHECK(skipped.runs == 0);
  REQUIRE(skipped.skipped.size() == 1);
  CHECK(skipped.skipped[0].find("skipped") != std::string::npos);
}

TEST_CASE("merge into a database without the instance creates it with its provenance") {
  TempDir dir;
  auto side = db::Database::open((dir / "side.db").string());
  const auto side_instance = side.insert_experiment(instance_record());
  side.insert_run(full_run(side_instance, 2, "2026-11-26T10:00:30.000000Z"));
  auto fresh = db::Database::open((dir / "fresh.db").string());
  const auto merged = db::merge_database(fresh, side, "side.db");
  CHECK(merged.runs == 1);
  CHECK(merged.instances_created == 1);
  const auto instances = fresh.experiments();
  REQUIRE(instances.size() == 1);
  CHECK(instances[0].started_at == "2026-11-26T10:00:00.000000Z");
  CHECK(fresh.instance_provenance(instances[0].id) == db::Provenance{{"kernel", "6.1"}});

  // A side file holding an instance but no run (its run's write failed) brings nothing over.
  auto empty = db::Database::open((dir / "empty.db").string());
  auto other = instance_record();
  other.started_at = "2026-11-26T11:00:00.000000Z";
  empty.insert_experiment(other);
  const auto nothing = db::merge_database(fresh, empty, "empty.db");
  CHECK(nothing.runs == 0);
  CHECK(nothing.instances_created == 0);
  CHECK(fresh.experiments().size() == 1);
}

TEST_CASE("side files of every schema version merge with all their runs, epochs and lines") {
  for (const char* version : {"3", "5", "6"}) {
    CAPTURE(version);
    TempDir dir;
    const auto copy = dir / "side.db";
    std::filesystem::copy_file(
        test::data_dir() / "db" / ("schema-v" + std::string(version) + ".db"), copy);
    const auto side = db::Database::open(copy.string());  // migrated: a copy
    auto results = db::Database::open((dir / "results.db").string());
    const auto merged = db::merge_database(results, side, "side.db");
    for (const char* table : {"experiments", "runs", "epochs", "lines", "allreduce_results",
                              "run_factors", "provenance"}) {
      CAPTURE(table);
      const std::string count = std::string("SELECT count(*) FROM ") + table;
      CHECK(scalar(results, count) == scalar(side, count));
    }
    CHECK(merged.runs == side.runs().size());
    CHECK_THROWS_AS(db::merge_database(results, side, "side.db"), db::DuplicateRunError);
  }
}

TEST_CASE("merge after run --resume: the cell's run is already there under another start time") {
  // The side file kept repetition 1 of np=2; `run --resume` found the cell missing and ran it
  // again (same repetition, attempt 1, a later start). Merging the side file must not make it
  // two ok runs of one cell (the report would pool them).
  TempDir dir;
  auto results = db::Database::open((dir / "results.db").string());
  const auto instance = results.insert_experiment(instance_record());
  results.insert_run(full_run(instance, 2, "2026-11-26T10:05:00.000000Z"));
  auto side = db::Database::open((dir / "side.db").string());
  side.insert_run(
      full_run(side.insert_experiment(instance_record()), 2, "2026-11-26T10:00:30.000000Z"));
  CHECK_THROWS_WITH_AS(db::merge_database(results, side, "side.db"),
                       doctest::Contains("holds that repetition's attempt 1"),
                       db::DuplicateRunError);
  CHECK(results.runs().size() == 1);
  const auto skipped = db::merge_database(results, side, "side.db", true);
  CHECK(skipped.runs == 0);
  REQUIRE(skipped.skipped.size() == 1);
  CHECK(skipped.skipped[0].find("np=2 repetition 1 attempt 1") != std::string::npos);

  // An ok retry (attempt 2) of a cell whose stored attempt 1 is ok too: refused as well; a
  // failed attempt 1 in the target and the side's ok attempt 2 are two attempts, both kept.
  auto retried = full_run(side.insert_experiment([] {
    auto e = instance_record();
    e.started_at = "2026-11-26T12:00:00.000000Z";
    return e;
  }()),
                          1, "2026-11-26T12:00:30.000000Z");
  retried.run.attempt = 2;
  side.insert_run(retried);
  auto target = db::Database::open((dir / "target.db").string());
  auto first = full_run(0, 1, "2026-11-26T12:00:10.000000Z");
  auto twelve = instance_record();
  twelve.started_at = "2026-11-26T12:00:00.000000Z";
  first.run.experiment_id = target.insert_experiment(twelve);
  target.insert_run(first);
  CHECK_THROWS_WITH_AS(db::merge_database(target, side, "side.db"),
                       doctest::Contains("is already an ok run of that repetition"),
                       db::DuplicateRunError);
  test::execute_sql(target.path(), "UPDATE runs SET status = 'failed'");
  const auto kept = db::merge_database(target, side, "side.db");
  CHECK(kept.runs == 2);  // the 10:00 instance (new there) and the ok attempt 2
}

TEST_CASE("a side file that fails half-way leaves the target as it was: no empty instance") {
  TempDir dir;
  auto side = db::Database::open((dir / "side.db").string());
  side.insert_run(
      full_run(side.insert_experiment(instance_record()), 2, "2026-11-26T10:00:30.000000Z"));
  // Damage what is read after the instance is written: the run's lines.
  test::execute_sql(side.path(), "DROP TABLE lines");
  auto target = db::Database::open((dir / "target.db").string());
  CHECK_THROWS_AS(db::merge_database(target, side, "side.db"), db::DatabaseError);
  CHECK(target.experiments().empty());
  CHECK(target.runs().empty());
  CHECK(scalar(target, "SELECT count(*) FROM provenance") == "0");
}
