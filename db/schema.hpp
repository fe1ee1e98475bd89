// The SQL text of the results schema, version by version. docs/database.md describes every table
// and column; change both together, and bump kSchemaVersion with a migration for any change.
#pragma once

namespace scalebench::db::schema {

// Version 1, created in one transaction on an empty file. PRAGMA user_version is set separately.
inline constexpr const char* kCreateV1 = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);

CREATE TABLE experiments (
  id                 INTEGER PRIMARY KEY,
  name               TEXT NOT NULL,
  source_path        TEXT NOT NULL,
  spec_json          TEXT NOT NULL,
  started_at         TEXT NOT NULL,
  host               TEXT NOT NULL,
  cpu_count          INTEGER NOT NULL CHECK (cpu_count >= 0),
  scalebench_version TEXT NOT NULL
);
CREATE INDEX experiments_by_name ON experiments (name);

CREATE TABLE runs (
  id                INTEGER PRIMARY KEY,
  experiment_id     INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  experiment        TEXT NOT NULL,
  condition         TEXT NOT NULL,
  launcher          TEXT NOT NULL,
  np                INTEGER NOT NULL CHECK (np >= 1),
  repetition        INTEGER NOT NULL CHECK (repetition >= 1),
  command_line      TEXT NOT NULL,
  status            TEXT NOT NULL
                    CHECK (status IN ('ok', 'failed', 'timeout', 'incomplete', 'interrupted')),
  exit_code         INTEGER,
  signal            INTEGER,
  error             TEXT NOT NULL DEFAULT '',
  started_at        TEXT NOT NULL,
  ended_at          TEXT NOT NULL,
  wall_seconds      REAL NOT NULL CHECK (wall_seconds >= 0),
  startup_seconds   REAL,
  train_images      INTEGER CHECK (train_images >= 0),
  images_per_second REAL
);
CREATE INDEX runs_by_experiment_id ON runs (experiment_id);
CREATE INDEX runs_by_experiment ON runs (experiment, status);

CREATE TABLE epochs (
  run_id               INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  epoch                INTEGER NOT NULL CHECK (epoch >= 1),
  total_epochs         INTEGER NOT NULL,
  start_offset_seconds REAL NOT NULL,
  duration_seconds     REAL CHECK (duration_seconds >= 0),
  trainer_seconds      REAL,
  loss                 REAL,
  accuracy             REAL,
  PRIMARY KEY (run_id, epoch)
) WITHOUT ROWID;

CREATE TABLE lines (
  run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq            INTEGER NOT NULL CHECK (seq >= 0),
  offset_seconds REAL NOT NULL,
  stream         TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
  rank           INTEGER,
  text           TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE VIEW epoch_times AS
SELECT r.id AS run_id, r.experiment, r.condition, r.launcher, r.np, r.repetition,
       e.epoch, e.duration_seconds, e.trainer_seconds, r.status
FROM epochs AS e JOIN runs AS r ON r.id = e.run_id;
)sql";

// Version 2: the allreduce benchmark's rows (scalebench-train --benchmark allreduce), one per
// message size, and a view joining them with their runs. A new file is created as version 1 and
// then migrated, so that new and migrated files have the same schema.
inline constexpr const char* kMigrateV1ToV2 = R"sql(
CREATE TABLE allreduce_results (
  run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq        INTEGER NOT NULL CHECK (seq >= 0),
  transport  TEXT NOT NULL,
  bytes      INTEGER NOT NULL CHECK (bytes >= 0),
  count      INTEGER NOT NULL CHECK (count >= 0),
  type       TEXT NOT NULL,
  redop      TEXT NOT NULL,
  time_us    REAL NOT NULL CHECK (time_us >= 0),
  algbw_gbs  REAL NOT NULL CHECK (algbw_gbs >= 0),
  busbw_gbs  REAL NOT NULL CHECK (busbw_gbs >= 0),
  wrong      INTEGER NOT NULL CHECK (wrong >= 0),
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE VIEW allreduce_times AS
SELECT r.id AS run_id, r.experiment, r.condition, r.launcher, r.np, r.repetition,
       a.transport, a.bytes, a.count, a.time_us, a.algbw_gbs, a.busbw_gbs, a.wrong, r.status
FROM allreduce_results AS a JOIN runs AS r ON r.id = a.run_id;
)sql";

// Version 3: experiment instances and trustworthy runs (issue "Results you can trust").
// - experiments: each row is one invocation of `scalebench run` (an instance); spec_hash
//   identifies its normalised spec, so that instances are pooled only when identical; cells is
//   the matrix size; ended_at is NULL while it runs (or when the orchestrator died); end_reason
//   says how it ended. spec_hash of migrated rows is filled in by the migration code.
// - runs: attempt numbers a cell's re-runs (--retries, --resume); env_json the variables the
//   condition gave the run, as a JSON object.
inline constexpr const char* kMigrateV2ToV3 = R"sql(
ALTER TABLE experiments ADD COLUMN spec_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE experiments ADD COLUMN cells INTEGER CHECK (cells >= 0);
ALTER TABLE experiments ADD COLUMN ended_at TEXT;
ALTER TABLE experiments ADD COLUMN end_reason TEXT
  CHECK (end_reason IN ('finished', 'interrupted', 'failed'));
CREATE INDEX experiments_by_spec ON experiments (spec_hash);

ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 1);
ALTER TABLE runs ADD COLUMN env_json TEXT NOT NULL DEFAULT '{}';
CREATE INDEX runs_by_cell ON runs (experiment_id, condition, np, repetition);

DROP VIEW epoch_times;
CREATE VIEW epoch_times AS
SELECT r.id AS run_id, r.experiment_id, r.experiment, r.condition, r.launcher, r.np,
       r.repetition, r.attempt, e.epoch, e.duration_seconds, e.trainer_seconds, r.status
FROM epochs AS e JOIN runs AS r ON r.id = e.run_id;

DROP VIEW allreduce_times;
CREATE VIEW allreduce_times AS
SELECT r.id AS run_id, r.experiment_id, r.experiment, r.condition, r.launcher, r.np,
       r.repetition, r.attempt, a.transport, a.bytes, a.count, a.time_us, a.algbw_gbs,
       a.busbw_gbs, a.wrong, r.status
FROM allreduce_results AS a JOIN runs AS r ON r.id = a.run_id;
)sql";

// Version 4: factors (issue "Studies, not single tables").
// - experiments: factors_json lists the instance's factors and their levels in file order
//   ([{"name": "model", "levels": ["vgg16", "inception_v3"]}]); run_order and order_seed say
//   how the matrix was ordered (the seed of a randomized order, so that it can be repeated).
// - run_factors: one row per run and factor. The built-in factors condition, launcher and np are
//   rows too, so that every factor is queried the same way (backfilled for older runs).
// - epoch_levels, allreduce_levels: epoch_times and allreduce_times with one more column per
//   factor name stored in the database (NULL for runs without it). They are generated: the
//   database recreates them when an instance brings a new factor name.
inline constexpr const char* kMigrateV3ToV4 = R"sql(
ALTER TABLE experiments ADD COLUMN factors_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE experiments ADD COLUMN run_order TEXT NOT NULL DEFAULT 'interleaved'
  CHECK (run_order IN ('interleaved', 'randomized'));
ALTER TABLE experiments ADD COLUMN order_seed INTEGER CHECK (order_seed >= 0);

CREATE TABLE run_factors (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  factor TEXT NOT NULL,
  level  TEXT NOT NULL,
  PRIMARY KEY (run_id, factor)
) WITHOUT ROWID;
CREATE INDEX run_factors_by_level ON run_factors (factor, level);

INSERT INTO run_factors (run_id, factor, level)
SELECT id, 'condition', condition FROM runs
UNION ALL SELECT id, 'launcher', launcher FROM runs
UNION ALL SELECT id, 'np', CAST(np AS TEXT) FROM runs;

CREATE VIEW epoch_levels AS SELECT * FROM epoch_times;
CREATE VIEW allreduce_levels AS SELECT * FROM allreduce_times;

)sql";

// Version 5: epochs.end_rule, what ended each epoch (issue "Other people's trainers": a program
// without our `Training done:` line ends its last epoch at its end-of-epoch line, its last line
// or its exit). Older rows: the next epoch's marker, or for the last epoch the `Training done:`
// line, the only rules before version 5.
inline constexpr const char* kMigrateV4ToV5 = R"sql(
ALTER TABLE epochs ADD COLUMN end_rule TEXT
  CHECK (end_rule IN ('next_epoch', 'training_done', 'epoch_end_line', 'last_line', 'exit'));
UPDATE epochs SET end_rule = CASE
  WHEN duration_seconds IS NULL THEN NULL
  WHEN EXISTS (SELECT 1 FROM epochs AS n WHERE n.run_id = epochs.run_id AND n.epoch = epochs.epoch + 1)
    THEN 'next_epoch'
  ELSE 'training_done' END;
)sql";

// Version 6 (issue "Other people's trainers"):
// - epochs.test_accuracy: accuracy on held-out data after the epoch, as the program printed it
//   (our test_accuracy, Keras's val_accuracy); runs.test_accuracy: the last epoch's, the final
//   accuracy of the run. epoch_times gains the column at its end.
// - provenance: what the results depend on besides the experiment file, as key/value rows, for
//   an instance (run_id NULL: the machine scalebench ran on, MPI and library versions, the git
//   commit of the experiment file, the environment) or one run (the hosts its ranks ran on, the
//   variables it was given). run_provenance is what holds for each run: its own rows, then the
//   instance's rows for keys the run does not have.
inline constexpr const char* kMigrateV5ToV6 = R"sql(
ALTER TABLE epochs ADD COLUMN test_accuracy REAL;
ALTER TABLE runs ADD COLUMN test_accuracy REAL;

CREATE TABLE provenance (
  experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  run_id        INTEGER REFERENCES runs (id) ON DELETE CASCADE,
  key           TEXT NOT NULL,
  value         TEXT NOT NULL
);
CREATE UNIQUE INDEX provenance_by_key ON provenance (experiment_id, coalesce(run_id, 0), key);
CREATE INDEX provenance_by_run ON provenance (run_id);

CREATE VIEW run_provenance AS
SELECT r.id AS run_id, r.experiment_id, r.experiment, r.condition, r.np, r.repetition, p.key,
       p.value, 'run' AS scope
FROM provenance AS p JOIN runs AS r ON r.id = p.run_id
UNION ALL
SELECT r.id, r.experiment_id, r.experiment, r.condition, r.np, r.repetition, p.key, p.value,
       'experiment'
FROM provenance AS p JOIN runs AS r ON r.experiment_id = p.experiment_id
WHERE p.run_id IS NULL
  AND NOT EXISTS (SELECT 1 FROM provenance AS q WHERE q.run_id = r.id AND q.key = p.key);

DROP VIEW epoch_times;
CREATE VIEW epoch_times AS
SELECT r.id AS run_id, r.experiment_id, r.experiment, r.condition, r.launcher, r.np,
       r.repetition, r.attempt, e.epoch, e.duration_seconds, e.trainer_seconds, r.status,
       e.test_accuracy
FROM epochs AS e JOIN runs AS r ON r.id = e.run_id;
)sql";

// Version 7 (issue "Every script measured right"): when each rank ended each epoch, for runs
// where two or more ranks print (the common script without a rank-0 guard), so that a straggler
// is visible; epoch_rank_spread sums them up per epoch.
inline constexpr const char* kMigrateV6ToV7 = R"sql(
CREATE TABLE epoch_rank_ends (
  run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  epoch              INTEGER NOT NULL CHECK (epoch >= 1),
  rank               INTEGER NOT NULL CHECK (rank >= 0),
  end_offset_seconds REAL NOT NULL,
  end_rule           TEXT NOT NULL CHECK (end_rule IN ('next_epoch', 'epoch_end_line')),
  PRIMARY KEY (run_id, epoch, rank)
) WITHOUT ROWID;

CREATE VIEW epoch_rank_spread AS
SELECT run_id, epoch, count(*) AS ranks, min(end_offset_seconds) AS first_end_seconds,
       max(end_offset_seconds) AS last_end_seconds,
       max(end_offset_seconds) - min(end_offset_seconds) AS spread_seconds
FROM epoch_rank_ends GROUP BY run_id, epoch;
)sql";

// Version 8 (issue "Every epoch right under every launcher"): epochs.validation_accuracy, the
// accuracy on the validation set after the epoch where the program names it so (Lightning's
// val_acc), apart from test_accuracy (a test set's, or Keras's val_accuracy as before);
// epoch_times (and so epoch_levels) gains it as its last column.
inline constexpr const char* kMigrateV7ToV8 = R"sql(
ALTER TABLE epochs ADD COLUMN validation_accuracy REAL;

DROP VIEW epoch_times;
CREATE VIEW epoch_times AS
SELECT r.id AS run_id, r.experiment_id, r.experiment, r.condition, r.launcher, r.np,
       r.repetition, r.attempt, e.epoch, e.duration_seconds, e.trainer_seconds, r.status,
       e.test_accuracy, e.validation_accuracy
FROM epochs AS e JOIN runs AS r ON r.id = e.run_id;
)sql";

// The staging area of the run being measured: its lines go here as they arrive (in batches), so
// the orchestrator's memory stays flat whatever a run prints, and move into `lines` in the same
// transaction as the run itself. A TEMP table: private to the connection, on disk
// (temp_store = FILE), and gone with it, so a killed orchestrator leaves no half run.
inline constexpr const char* kCreateStagedLines = R"sql(
CREATE TEMP TABLE IF NOT EXISTS staged_lines (
  seq            INTEGER PRIMARY KEY,
  offset_seconds REAL NOT NULL,
  stream         TEXT NOT NULL,
  rank           INTEGER,
  text           TEXT NOT NULL
);
)sql";

}  // namespace scalebench::db::schema
