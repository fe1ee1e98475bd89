#!/usr/bin/env bash
# How well the orchestrator's line stamps agree with the trainer's own epoch clock:
# median and maximum of |epoch time from lines - trainer's epoch seconds| over an experiment.
# usage: bench/clock_agreement.sh [DB] [EXPERIMENT] [SCALEBENCH]
set -euo pipefail
db="${1:-results/scalebench.db}"
experiment="${2:-quickstart}"
scalebench="${3:-build/scalebench}"
"$scalebench" query --db "$db" "
WITH d AS (
  SELECT abs(duration_seconds - trainer_seconds) * 1000.0 AS ms, launcher, np
  FROM epoch_times
  WHERE experiment = '$experiment' AND status = 'ok'
    AND duration_seconds IS NOT NULL AND trainer_seconds IS NOT NULL),
n AS (SELECT count(*) AS c FROM d)
SELECT (SELECT c FROM n) AS epochs,
       round((SELECT avg(ms) FROM (SELECT ms FROM d ORDER BY ms
              LIMIT 2 - (SELECT c FROM n) % 2 OFFSET ((SELECT c FROM n) - 1) / 2)), 3) AS median_ms,
       round((SELECT max(ms) FROM d), 3) AS max_ms,
       round((SELECT avg(ms) FROM d), 3) AS mean_ms"
