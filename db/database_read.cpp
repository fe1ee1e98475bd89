// Reading the results database: experiments, runs, epochs, lines and the analyses' samples.
// Writing and the schema are db/database.cpp.
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "db/database.hpp"
#include "db/record_columns.hpp"
#include "db/sqlite_statement.hpp"

namespace scalebench::db {

using namespace detail;

namespace {

// ---- row readers -------------------------------------------------------------------------------

// A run's factors as one column: [[factor, level], ...] of its run_factors rows but the built-ins.
constexpr const char* kRunFactorsColumn =
    "(SELECT json_group_array(json_array(factor, level)) FROM (SELECT factor, level FROM "
    "run_factors AS f WHERE f.run_id = runs.id AND f.factor NOT IN ('condition', 'launcher', "
    "'np') ORDER BY f.factor))";

// SELECT id, <kRunColumns>, <factors> FROM runs ...
std::string run_select_list() {
  return column_names({"id"}, kRunColumns) + ", " + kRunFactorsColumn;
}

// The factors column of a run query: [[factor, level], ...].
FactorLevels parse_factor_levels(const std::string& json_text, const std::string& path) {
  FactorLevels out;
  try {
    for (const auto& pair : nlohmann::json::parse(json_text))
      out.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  } catch (const nlohmann::json::exception& error) {
    throw DatabaseError(
        fmt::format("{}: run_factors holds an unreadable level: {}", path, error.what()));
  }
  return out;
}

RunRecord read_run(const Statement& st, const std::string& path) {
  RunRecord r;
  r.id = st.int64(0);
  read_columns(st, 1, r, kRunColumns);
  r.factors = parse_factor_levels(st.text(1 + std::size(kRunColumns)), path);
  return r;
}

std::string placeholders_json(const std::vector<std::int64_t>& ids) {
  return fmt::format("[{}]", fmt::join(ids, ","));
}

}  // namespace

// ---- reading -----------------------------------------------------------------------------------

namespace {

// SELECT id, <kExperimentColumns> FROM experiments ...
std::string experiment_select_list() { return column_names({"id"}, kExperimentColumns); }

ExperimentRecord read_experiment(const Statement& st) {
  ExperimentRecord e;
  e.id = st.int64(0);
  read_columns(st, 1, e, kExperimentColumns);
  return e;
}

// Every row of `st` as a record of a run: run_id in result column 0, then `columns`.
template <typename Record, std::size_t N>
std::vector<Record> read_run_records(Statement& st, const Column<Record> (&columns)[N]) {
  std::vector<Record> out;
  while (st.step()) {
    Record record;
    record.run_id = st.int64(0);
    read_columns(st, 1, record, columns);
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace

std::vector<ExperimentRecord> Database::experiments() const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM experiments ORDER BY id", experiment_select_list()),
               "read experiments");
  std::vector<ExperimentRecord> out;
  while (st.step()) out.push_back(read_experiment(st));
  return out;
}

std::optional<ExperimentRecord> Database::experiment(std::int64_t id) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM experiments WHERE id = ?1", experiment_select_list()),
               "read an experiment instance");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return read_experiment(st);
}

std::vector<ExperimentRecord> Database::instances(const std::string& name) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM experiments WHERE name = ?1 ORDER BY id",
                           experiment_select_list()),
               "read experiment instances");
  st.bind(1, name);
  std::vector<ExperimentRecord> out;
  while (st.step()) out.push_back(read_experiment(st));
  return out;
}

std::optional<ExperimentRecord> Database::latest_instance(
    const std::optional<std::string>& name) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM experiments {} ORDER BY id DESC LIMIT 1",
                           experiment_select_list(), name ? "WHERE name = ?1" : ""),
               "read the latest experiment instance");
  if (name) st.bind(1, *name);
  if (!st.step()) return std::nullopt;
  return read_experiment(st);
}

std::optional<ExperimentRecord> Database::latest_instance_of_spec(const std::string& hash) const {
  Statement st(
      handle_, path_,
      fmt::format("SELECT {} FROM experiments WHERE spec_hash = ?1 ORDER BY id DESC LIMIT 1",
                  experiment_select_list()),
      "read the latest instance of a spec");
  st.bind(1, hash);
  if (!st.step()) return std::nullopt;
  return read_experiment(st);
}

std::vector<RunRecord> Database::runs_of_instances(const std::vector<std::int64_t>& ids) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM runs WHERE experiment_id IN (SELECT value FROM "
                           "json_each(?1)) ORDER BY id",
                           run_select_list()),
               "read runs");
  st.bind(1, placeholders_json(ids));
  std::vector<RunRecord> out;
  while (st.step()) out.push_back(read_run(st, path_));
  return out;
}

std::vector<RunRecord> Database::runs(const std::optional<std::string>& experiment) const {
  const std::string sql =
      experiment
          ? fmt::format("SELECT {} FROM runs WHERE experiment = ?1 ORDER BY id", run_select_list())
          : fmt::format("SELECT {} FROM runs ORDER BY id", run_select_list());
  Statement st(handle_, path_, sql, "read runs");
  if (experiment) st.bind(1, *experiment);
  std::vector<RunRecord> out;
  while (st.step()) out.push_back(read_run(st, path_));
  return out;
}

std::vector<EpochRecord> Database::epochs(std::int64_t run_id) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM epochs WHERE run_id = ?1 ORDER BY epoch",
                           column_names({"run_id"}, kEpochColumns)),
               "read epochs");
  st.bind(1, run_id);
  auto out = read_run_records(st, kEpochColumns);
  // Per-rank ends (schema 7), so that a run read here can be written elsewhere whole (merge).
  Statement ends(
      handle_, path_,
      fmt::format("SELECT {} FROM epoch_rank_ends WHERE run_id = ?1 ORDER BY epoch, rank",
                  column_names({"epoch"}, kRankEndColumns)),
      "read the ranks' epoch ends");
  ends.bind(1, run_id);
  while (ends.step()) {
    const int epoch = ends.integer(0);
    const auto it = std::find_if(out.begin(), out.end(),
                                 [&](const EpochRecord& e) { return e.epoch == epoch; });
    if (it == out.end()) continue;
    RankEnd end;
    read_columns(ends, 1, end, kRankEndColumns);
    it->rank_ends.push_back(std::move(end));
  }
  return out;
}

namespace {

// Key/value rows of one query bound to one id, as read for provenance.
Provenance read_provenance(sqlite3* db, const std::string& path, const char* sql, std::int64_t id,
                           std::string_view what) {
  Statement st(db, path, sql, what);
  st.bind(1, id);
  Provenance out;
  while (st.step()) out.emplace_back(st.text(0), st.text(1));
  return out;
}

}  // namespace

Provenance Database::provenance(std::int64_t run_id) const {
  return read_provenance(handle_, path_,
                         "SELECT key, value FROM run_provenance WHERE run_id = ?1 ORDER BY key",
                         run_id, "read a run's provenance");
}

Provenance Database::own_provenance(std::int64_t run_id) const {
  return read_provenance(handle_, path_,
                         "SELECT key, value FROM provenance WHERE run_id = ?1 ORDER BY key", run_id,
                         "read a run's own provenance");
}

Provenance Database::instance_provenance(std::int64_t experiment_id) const {
  return read_provenance(handle_, path_,
                         "SELECT key, value FROM provenance WHERE experiment_id = ?1 AND run_id "
                         "IS NULL ORDER BY key",
                         experiment_id, "read an instance's provenance");
}

std::vector<LineRecord> Database::lines(std::int64_t run_id) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM lines WHERE run_id = ?1 ORDER BY seq",
                           column_names({"run_id"}, kLineColumns)),
               "read output lines");
  st.bind(1, run_id);
  return read_run_records(st, kLineColumns);
}

std::vector<AllreduceRecord> Database::allreduce_results(std::int64_t run_id) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM allreduce_results WHERE run_id = ?1 ORDER BY seq",
                           column_names({"run_id"}, kAllreduceColumns)),
               "read allreduce results");
  st.bind(1, run_id);
  return read_run_records(st, kAllreduceColumns);
}

std::optional<std::string> Database::trainer_header(std::int64_t run_id) const {
  // The header is among a run's first lines; seq order finds the first one without a scan of
  // the rest (the primary key is (run_id, seq)).
  Statement st(handle_, path_,
               "SELECT text FROM lines WHERE run_id = ?1 AND stream = 'stdout' AND "
               "substr(text, 1, 17) = 'scalebench-train ' ORDER BY seq LIMIT 1",
               "read the trainer header");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

std::vector<std::pair<std::int64_t, std::string>> Database::trainer_headers_of_instances(
    const std::vector<std::int64_t>& ids) const {
  // Per run its first stdout line that is the header (the primary key (run_id, seq) orders it).
  Statement st(handle_, path_,
               "SELECT l.run_id, (SELECT text FROM lines WHERE run_id = l.run_id AND stream = "
               "'stdout' AND substr(text, 1, 17) = 'scalebench-train ' ORDER BY seq LIMIT 1) "
               "FROM (SELECT id AS run_id FROM runs WHERE experiment_id IN (SELECT value FROM "
               "json_each(?1))) AS l ORDER BY l.run_id",
               "read the trainer headers");
  st.bind(1, placeholders_json(ids));
  std::vector<std::pair<std::int64_t, std::string>> out;
  while (st.step())
    if (!st.is_null(1)) out.emplace_back(st.int64(0), st.text(1));
  return out;
}

std::vector<AllreduceRecord> Database::allreduce_results_of_instances(
    const std::vector<std::int64_t>& ids) const {
  Statement st(handle_, path_,
               fmt::format("SELECT {} FROM allreduce_results WHERE run_id IN (SELECT id FROM runs "
                           "WHERE experiment_id IN (SELECT value FROM json_each(?1))) "
                           "ORDER BY run_id, seq",
                           column_names({"run_id"}, kAllreduceColumns)),
               "read allreduce results");
  st.bind(1, placeholders_json(ids));
  return read_run_records(st, kAllreduceColumns);
}

std::vector<std::pair<std::int64_t, std::string>> Database::run_provenance_of_instances(
    const std::vector<std::int64_t>& ids, const std::string& key) const {
  Statement st(handle_, path_,
               "SELECT run_id, value FROM run_provenance WHERE key = ?2 AND run_id IN (SELECT id "
               "FROM runs WHERE experiment_id IN (SELECT value FROM json_each(?1))) "
               "ORDER BY run_id",
               "read the runs' provenance");
  st.bind(1, placeholders_json(ids));
  st.bind(2, key);
  std::vector<std::pair<std::int64_t, std::string>> out;
  while (st.step()) out.emplace_back(st.int64(0), st.text(1));
  return out;
}

namespace {

std::vector<EpochSample> read_epoch_samples(Statement& st, const std::string& path) {
  std::vector<EpochSample> out;
  while (st.step()) {
    EpochSample s;
    s.run_id = st.int64(0);
    s.experiment = st.text(1);
    s.condition = st.text(2);
    s.launcher = st.text(3);
    s.np = st.integer(4);
    s.repetition = st.integer(5);
    s.epoch = st.integer(6);
    s.duration_seconds = st.real(7);
    s.trainer_seconds = st.optional_real(8);
    s.train_images = st.optional_int64(9);
    s.experiment_id = st.int64(10);
    s.factors = parse_factor_levels(st.text(11), path);
    if (!st.is_null(12)) s.end_rule = st.text(12);
    s.run_test_accuracy = st.optional_real(13);
    out.push_back(std::move(s));
  }
  return out;
}

constexpr const char* kEpochSampleQuery =
    "SELECT r.id, r.experiment, r.condition, r.launcher, r.np, r.repetition, e.epoch, "
    "e.duration_seconds, e.trainer_seconds, r.train_images, r.experiment_id, "
    "(SELECT json_group_array(json_array(factor, level)) FROM (SELECT factor, level FROM "
    "run_factors AS f WHERE f.run_id = r.id AND f.factor NOT IN ('condition', 'launcher', "
    "'np') ORDER BY f.factor)), e.end_rule, r.test_accuracy "
    "FROM epochs AS e JOIN runs AS r ON r.id = e.run_id "
    "WHERE r.status = 'ok' AND e.duration_seconds IS NOT NULL{} "
    "ORDER BY r.id, e.epoch";

}  // namespace

std::vector<EpochSample> Database::epoch_samples(
    const std::optional<std::string>& experiment) const {
  Statement st(
      handle_, path_,
      fmt::format(fmt::runtime(kEpochSampleQuery), experiment ? " AND r.experiment = ?1" : ""),
      "read epoch samples");
  if (experiment) st.bind(1, *experiment);
  return read_epoch_samples(st, path_);
}

std::vector<EpochSample> Database::epoch_samples_of_instances(
    const std::vector<std::int64_t>& ids) const {
  Statement st(handle_, path_,
               fmt::format(fmt::runtime(kEpochSampleQuery),
                           " AND r.experiment_id IN (SELECT value FROM json_each(?1))"),
               "read epoch samples");
  st.bind(1, placeholders_json(ids));
  return read_epoch_samples(st, path_);
}

std::optional<std::string> Database::latest_experiment() const {
  Statement st(handle_, path_, "SELECT name FROM experiments ORDER BY id DESC LIMIT 1",
               "read the latest experiment");
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

}  // namespace scalebench::db
