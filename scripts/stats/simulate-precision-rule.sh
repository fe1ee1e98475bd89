#!/usr/bin/env bash
# The precision rule's simulation (docs/statistics.md, "Precision-driven repetitions"): coverage
# of the final 95 % interval, mean and 95th percentile of runs per cell, and the share stopped by
# max, for normal and log-normal run-to-run noise at CVs of 0.5 %, 2 %, 8 % and 25 %.
#
# usage: scripts/stats/simulate-precision-rule.sh [CELLS [MIN MAX PRECISION [SEED]]]
#   default: 100000 cells per setting, min 3, max 20, precision 0.02, seed 20250138 (the table in
#   docs/statistics.md). Builds bench/precision_rule_sim in BUILD_DIR (default build) if needed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
[[ -f $build/CMakeCache.txt ]] || { echo "no $build: run scripts/build.sh first" >&2; exit 2; }
cmake --build "$build" --target precision_rule_sim -j 2 >/dev/null
exec "$build/bench/precision_rule_sim" "$@"
