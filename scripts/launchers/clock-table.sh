#!/usr/bin/env bash
# The figures of issue 34's note: the launcher test's experiment (tests/timing/
# test_launchers_timing.cpp) run by build/scalebench, each run's stored epochs beside the
# script's own clock (its WALL lines, combined over ranks by the epoch rule). Needs mpirun and
# torchrun (scripts/install-deps.sh).  usage: scripts/launchers/clock-table.sh [DB]
set -euo pipefail
cd "$(dirname "$0")/../.."
db="${1:-$(mktemp -d)/launchers.db}"
experiment="$(mktemp --suffix=.json)"
script="$PWD/tests/data/orchestrator/launchers/replay_forms.py"
cat > "$experiment" <<JSON
{"name": "launchers", "timeout_seconds": 90, "train_images": 384,
 "program": "/usr/bin/python3", "args": ["$script"],
 "factors": {"form": [
   {"name": "tqdm-stdout", "args": ["tqdm-stdout"], "line_forms": "tqdm"},
   {"name": "tqdm-stderr", "args": ["tqdm-stderr"], "line_forms": "tqdm"},
   {"name": "lightning", "args": ["lightning"], "line_forms": "lightning"},
   {"name": "keras", "args": ["keras"]}]},
 "conditions": [{"name": "plain", "launcher": "single", "np": [1]},
                {"name": "mpirun", "launcher": "mpirun", "np": [1, 2]},
                {"name": "torchrun", "launcher": "torchrun", "np": [2]}]}
JSON
build/scalebench run "$experiment" --db "$db" > /dev/null
python3 scripts/launchers/clock_table.py "$db"
