// The results database: the one place in scalebench that knows SQL.
// Schema and its meaning: docs/database.md (a public interface; users query it directly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"

struct sqlite3;

namespace scalebench::db {

// Raised for every database failure; the message names the file and the SQLite error.
class DatabaseError : public Error {
 public:
  using Error::Error;
};

// The database stayed locked by another process for longer than the busy timeout: the same
// write may succeed later.
class DatabaseBusy : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

// A query that tried to modify the database through the read-only path.
class ReadOnlyViolation : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

// A read-only query that ran past one of its QueryLimits; the message names the limit.
class QueryLimitError : public DatabaseError {
 public:
  enum class Limit { Time, Rows, Memory };
  QueryLimitError(Limit limit, const std::string& message)
      : DatabaseError(message), limit_(limit) {}
  Limit limit() const { return limit_; }

 private:
  Limit limit_;
};

inline constexpr int kSchemaVersion = 8;

// The factors every run has, stored in run_factors beside the experiment file's own.
inline constexpr const char* kBuiltInFactors[] = {"condition", "launcher", "np"};

// A run's levels of the experiment file's factors: (factor, level), in factor name order.
using FactorLevels = std::vector<std::pair<std::string, std::string>>;

// The identifier of a normalised experiment spec (its JSON with sorted keys, no spaces):
// "fnv1a64:" and 16 hex digits. Equal specs have equal hashes; instances are pooled only then.
std::string spec_hash(std::string_view spec_json);

// One invocation of `scalebench run` on one experiment file: an experiment instance. A resumed
// instance (`scalebench run --resume`) gains runs; it stays the same row.
// Provenance: key/value pairs (docs/database.md, "provenance"), e.g. {"mpi", "mpirun (Open MPI)
// 4.1.4"}, {"env.OMP_NUM_THREADS", "1"}.
using Provenance = std::vector<std::pair<std::string, std::string>>;

struct ExperimentRecord {
  std::int64_t id = 0;  // assigned by insert_experiment
  std::string name;
  std::string source_path;  // the experiment file as given
  std::string spec_json;    // the file's JSON, normalised
  std::string spec_hash;    // spec_hash(spec_json)
  std::string started_at;   // ISO 8601 UTC wall clock
  std::string host;
  int cpu_count = 0;
  std::string scalebench_version;
  std::optional<long long> cells;         // matrix size (conditions x np x repetitions)
  std::optional<std::string> ended_at;    // absent while running, or when the orchestrator died
  std::optional<std::string> end_reason;  // finished | interrupted | failed
  // [{"name": factor, "levels": [level, ...]}, ...] in the file's order (levels: base first).
  std::string factors_json = "[]";
  std::string run_order = "interleaved";  // interleaved | randomized
  std::optional<long long> order_seed;    // the seed of a randomized order
  Provenance provenance = {};  // written with the instance (not read back by experiments())
};

// One launched process (one cell of the matrix: condition x np x repetition).
// How a run ended; stored as the text of runs.status (docs/database.md), whose CHECK admits
// exactly these.
enum class RunStatus { Ok, Failed, Timeout, Incomplete, Interrupted };
std::string_view to_string(RunStatus status);
// The status for runs.status text; throws DatabaseError for any other text.
RunStatus parse_run_status(std::string_view text);

struct RunRecord {
  std::int64_t id = 0;  // assigned by insert_run
  std::int64_t experiment_id = 0;
  std::string experiment;  // experiment name, duplicated for easy querying
  std::string condition;   // condition name from the experiment file
  std::string launcher;    // single | mpirun | srun | torchrun | command
  int np = 1;
  int repetition = 1;        // 1-based
  std::string command_line;  // argv joined with shell quoting, for humans
  RunStatus status = RunStatus::Ok;
  std::optional<int> exit_code;  // absent when killed by a signal
  std::optional<int> signal;     // the signal that ended it, if any
  std::string error;             // why status is not ok; empty when ok
  std::string started_at;        // ISO 8601 UTC wall clock with microseconds
  std::string ended_at;
  double wall_seconds = 0;                  // process start to exit, monotonic clock
  std::optional<double> startup_seconds;    // process start to first `Epoch 1/z`
  std::optional<long long> train_images;    // training images per epoch, all ranks
  std::optional<double> images_per_second;  // train_images * epochs / sum(epoch durations)
  int attempt = 1;              // 1-based: re-runs of the same cell (--retries, --resume)
  std::string env_json = "{}";  // the variables the condition set for this run (JSON object)
  FactorLevels factors = {};    // the levels of the experiment file's factors (not built-ins)
  std::optional<double> test_accuracy = std::nullopt;  // the last epoch's (final accuracy)
  Provenance provenance = {};  // the run's own rows, written with it (not read back by runs())
};

// When one rank ended an epoch (runs where two or more ranks print): its end-of-epoch line, or
// its marker of the next epoch (end_rule epoch_end_line / next_epoch).
struct RankEnd {
  int rank = 0;
  double end_offset_seconds = 0;  // from the run's process start
  std::string end_rule;
};

struct EpochRecord {
  std::int64_t run_id = 0;
  int epoch = 0;  // 1-based, as printed
  int total_epochs = 0;
  double start_offset_seconds = 0;         // from the run's process start
  std::optional<double> duration_seconds;  // from stamped lines; absent if the end was never seen
  std::optional<double> trainer_seconds;   // the trainer's own clock for the same epoch
  std::optional<double> loss;
  std::optional<double> accuracy;
  // What ended the epoch (docs/metrics.md): next_epoch, training_done, epoch_end_line, last_line
  // or exit; absent when the end was never seen.
  std::optional<std::string> end_rule = std::nullopt;
  std::optional<double> test_accuracy = std::nullopt;  // held-out accuracy after the epoch
  std::vector<RankEnd> rank_ends = {};  // per rank, where two or more ranks printed the epoch
  // The validation set's accuracy after the epoch, where the program names it so (Lightning).
  std::optional<double> validation_accuracy = std::nullopt;
};

struct LineRecord {
  std::int64_t run_id = 0;
  std::int64_t seq = 0;       // 0-based arrival order within the run
  double offset_seconds = 0;  // arrival time from the run's process start (monotonic)
  std::string stream;         // stdout | stderr
  std::optional<int> rank;    // from the launcher's tag, absent for untagged lines
  std::string text;           // payload after the tag, valid UTF-8
};

// One message size of an allreduce benchmark run (`scalebench-train --benchmark allreduce`).
struct AllreduceRecord {
  std::int64_t run_id = 0;
  std::int64_t seq = 0;   // the output line it was read from (LineRecord::seq)
  std::string transport;  // mpi | nccl | none, from the benchmark's header line
  long long bytes = 0;    // message size
  long long count = 0;    // elements
  std::string type = "float";
  std::string redop = "sum";
  double time_us = 0;    // per allreduce: mean over iterations, then over ranks
  double algbw_gbs = 0;  // bytes / time, GB/s (10^9 bytes/s)
  double busbw_gbs = 0;  // algbw · 2(np − 1)/np
  long long wrong = 0;   // wrong elements, summed over ranks
};

// A finished run with everything measured about it, stored in one transaction.
struct RunBundle {
  RunRecord run;
  std::vector<EpochRecord> epochs;
  std::vector<LineRecord> lines;
  std::vector<AllreduceRecord> allreduce;  // empty unless the run was an allreduce benchmark
  // Added to the offsets of staged lines when they are stored: they were staged relative to the
  // first line's arrival, before the process start was known.
  double staged_offset_shift_seconds = 0;
};

// Result of a read-only query, all values rendered as text (NULL as absent).
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// Bounds on one read-only query (docs/database.md, "Limits"); a query past one throws
// QueryLimitError.
struct QueryLimits {
  double timeout_seconds = 30;       // wall clock from prepare to the last row
  std::size_t max_rows = 1'000'000;  // rows in the result
  // SQLite's own heap use during the query plus the bytes of the result held in memory (one
  // allowance for both: the more the caller holds, the less SQLite may use); also the largest
  // string or blob a query may build (randomblob, zeroblob, printf, ...).
  std::size_t max_memory_bytes = std::size_t{1} << 30;
};

// Receives a read-only query's result as it is read (the streaming query_read_only): `columns`
// once, then `row` for each row (it may move the values out). `row` returns the bytes the
// receiver now holds for the result (rows kept, output not yet written); they count with SQLite's
// heap against QueryLimits::max_memory_bytes, and past it the query stops with QueryLimitError.
struct QueryRowSink {
  std::function<void(const std::vector<std::string>& columns)> columns;
  std::function<std::size_t(std::vector<std::optional<std::string>>& row)> row;
};

// One epoch joined with its run: the unit the report and statistics work on.
struct EpochSample {
  std::int64_t run_id = 0;
  std::int64_t experiment_id = 0;  // the instance
  std::string experiment;
  std::string condition;
  std::string launcher;
  int np = 1;
  int repetition = 1;
  int epoch = 0;
  double duration_seconds = 0;
  std::optional<double> trainer_seconds;
  std::optional<long long> train_images;
  FactorLevels factors = {};  // the run's levels of the experiment file's factors
  std::optional<std::string> end_rule = std::nullopt;      // EpochRecord::end_rule
  std::optional<double> run_test_accuracy = std::nullopt;  // the run's final test accuracy
};

enum class OpenMode { ReadWrite, ReadOnly };

class Database {
 public:
  // ReadWrite creates the file (and its directory) and the schema when absent and migrates
  // older schema versions; ReadOnly requires an existing scalebench database.
  static Database open(const std::string& path, OpenMode mode = OpenMode::ReadWrite);
  ~Database();
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const;
  // The connection runs in SQLite's defensive mode with trusted_schema off (every open sets both).
  bool hardened() const;

  // Waits up to this long for another process's write lock before a write fails as busy.
  void set_busy_timeout(int milliseconds);

  std::int64_t insert_experiment(const ExperimentRecord& experiment);
  // Records how an instance ended (ended_at, end_reason).
  void end_experiment(std::int64_t id, const std::string& ended_at, const std::string& reason);
  // Marks a resumed instance as running again (clears ended_at and end_reason).
  void reopen_experiment(std::int64_t id);

  // Lines of the run being measured, staged on disk as they arrive (bounded memory); the next
  // insert_run moves them into `lines` with the run, atomically. A LineRecord's run_id is ignored.
  void stage_line(const LineRecord& line);
  std::int64_t staged_line_count() const;
  void discard_staged_lines();

  // Stores the run, its epochs, lines (bundle.lines, then the staged ones) and allreduce rows
  // atomically, and empties the stage; returns the new run id. On failure nothing is stored and
  // the stage is kept, so the caller can retry or write a side file.
  std::int64_t insert_run(const RunBundle& bundle);
  // The same into this database, with the lines staged on `stage` (another connection): writes
  // a run to a side file when the results database is unavailable. `stage` keeps its lines.
  std::int64_t insert_run_from_stage(const RunBundle& bundle, const Database& stage);

  // Every write through this connection from begin_batch() to commit() is one transaction
  // (each insert a savepoint inside it): destroyed uncommitted, none of them is stored. `merge`
  // writes an instance and all its runs so: a failure half-way leaves the target as it was.
  class Batch {
   public:
    Batch(Batch&& other) noexcept;
    Batch& operator=(Batch&&) = delete;
    Batch(const Batch&) = delete;
    ~Batch();
    void commit();

   private:
    friend class Database;
    Batch(sqlite3* handle, const std::string& path);
    sqlite3* handle_;
    const std::string* path_;
    bool open_ = true;
  };
  Batch begin_batch();

  std::vector<ExperimentRecord> experiments() const;
  std::optional<ExperimentRecord> experiment(std::int64_t id) const;
  // Instances of one experiment name, oldest first.
  std::vector<ExperimentRecord> instances(const std::string& name) const;
  // The newest instance, of one name if given.
  std::optional<ExperimentRecord> latest_instance(
      const std::optional<std::string>& name = std::nullopt) const;
  // The newest instance whose spec has this hash.
  std::optional<ExperimentRecord> latest_instance_of_spec(const std::string& spec_hash) const;

  // Runs, optionally of one experiment name, in insertion order.
  std::vector<RunRecord> runs(const std::optional<std::string>& experiment = std::nullopt) const;
  // Runs of these instances, in insertion order.
  std::vector<RunRecord> runs_of_instances(const std::vector<std::int64_t>& instance_ids) const;
  std::vector<EpochRecord> epochs(std::int64_t run_id) const;
  std::vector<LineRecord> lines(std::int64_t run_id) const;
  // What holds for a run (run_provenance: its own rows, then its instance's), by key.
  Provenance provenance(std::int64_t run_id) const;
  // The instance's own rows, by key.
  Provenance instance_provenance(std::int64_t experiment_id) const;
  // The run's own rows only (provenance(run_id) adds the instance's for keys the run lacks).
  Provenance own_provenance(std::int64_t run_id) const;
  std::vector<AllreduceRecord> allreduce_results(std::int64_t run_id) const;
  // The run's first stdout line that is scalebench-train's header (`scalebench-train model=...
  // parameters=... batch_size=...`, docs/trainer-output.md), if it printed one.
  std::optional<std::string> trainer_header(std::int64_t run_id) const;
  // The same three for every run of these instances at once (report/data/load_runs.cpp reads
  // each table once, not once per run): (run id, header line) for the runs that printed one,
  // allreduce rows by run then seq, and (run id, value) of one run_provenance key.
  std::vector<std::pair<std::int64_t, std::string>> trainer_headers_of_instances(
      const std::vector<std::int64_t>& instance_ids) const;
  std::vector<AllreduceRecord> allreduce_results_of_instances(
      const std::vector<std::int64_t>& instance_ids) const;
  std::vector<std::pair<std::int64_t, std::string>> run_provenance_of_instances(
      const std::vector<std::int64_t>& instance_ids, const std::string& key) const;
  // Epochs with a duration, of runs with status ok, joined with their run.
  std::vector<EpochSample> epoch_samples(
      const std::optional<std::string>& experiment = std::nullopt) const;
  // The same, of these instances only.
  std::vector<EpochSample> epoch_samples_of_instances(
      const std::vector<std::int64_t>& instance_ids) const;
  // Name of the most recently started experiment, if any.
  std::optional<std::string> latest_experiment() const;

  // Runs one SQL statement that must not modify anything; throws ReadOnlyViolation otherwise
  // (also for a function outside the allow-list of pure SQL functions, naming it), and
  // QueryLimitError past `limits`. Defined in db/read_only_query.cpp.
  QueryResult query_read_only(const std::string& sql, const QueryLimits& limits = {}) const;
  // The same, handing each row to `sink` as it is read instead of keeping them.
  void query_read_only(const std::string& sql, const QueryLimits& limits,
                       const QueryRowSink& sink) const;

 private:
  Database(sqlite3* handle, std::string path);
  std::int64_t insert_run_impl(const RunBundle& bundle, sqlite3* stage);
  void flush_staged_lines() const;
  sqlite3* handle_ = nullptr;
  std::string path_;
  // Staged lines not yet written to the stage table: flushed in batches of this many.
  static constexpr std::size_t kStageBatch = 2048;
  mutable std::vector<LineRecord> stage_buffer_;
};

}  // namespace scalebench::db
