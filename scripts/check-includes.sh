#!/usr/bin/env bash
# The trainer's dependency rules (ARCHITECTURE.md, "Trainer"): the backend-neutral model
# (trainer/model/) includes no oneDNN, CUDA, cuDNN, cuBLAS or NCCL header, no backend and not the
# backend interface (trainer/backend.hpp, which includes it); the CUDA backend (trainer/cuda/)
# does not include the CPU backend (trainer/cpu/). The report's layers only look down
# (ARCHITECTURE.md: report/data -> report/analysis -> report/export), and plotting/ includes
# nothing of the CLI. Prints each offending line and exits 1; run by scripts/test.sh before the
# build. Usage: check-includes.sh [ROOT] (default: this repository; tests/scripts/ plants
# violations in a copy).
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
status=0
check() {
  local dir="$1" pattern="$2" why="$3"
  local hits
  [ -d "$dir" ] || return 0
  hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($pattern)" "$dir" || true)
  if [ -n "$hits" ]; then
    echo "check-includes: $why:"
    echo "$hits"
    status=1
  fi
}
check trainer/model \
  'oneapi/|dnnl|cuda|cudnn|cublas|nccl|trainer/cpu/|trainer/cuda/|trainer/backend\.hpp' \
  "trainer/model/ must stay backend-neutral"
check trainer/cuda 'trainer/cpu/' "trainer/cuda/ must not include the CPU backend"
check report/data 'report/analysis/|report/export/|scaling/|plotting/|cli/' \
  "report/data/ is the report's bottom layer: no analysis, export, scaling, plotting or CLI"
check report/analysis 'db/|report/export/|scaling/|plotting/|cli/' \
  "report/analysis/ computes on what report/data hands up: no database, no exporter"
check report/export 'db/|report/data/|scaling/|plotting/|cli/' \
  "report/export/ renders analysis results: no database, no loader"
check plotting 'cli/' "plotting/ includes nothing of the CLI"

# Transitively: no chain of project includes ("..." resolved from the root, then the file's own
# directory) leads from the analysis, the exporters, the figures or the scaling model to db/. Only
# report/data/load_runs.* and scaling/plan_load.* read the database, for the commands.
includes_of() {
  sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$1"
}
# Prints the chain from FILE to the first db/ header it reaches, if any.
db_chain() {
  local start="$1" file include resolved
  local -A parent=([$start]="")
  local queue=("$start")
  while ((${#queue[@]})); do
    file="${queue[0]}"
    queue=("${queue[@]:1}")
    while IFS= read -r include; do
      if [[ "$include" == db/* ]]; then
        local chain="$include" at="$file"
        while [ -n "$at" ]; do
          chain="$at -> $chain"
          at="${parent[$at]}"
        done
        echo "$chain"
        return 0
      fi
      resolved="$include"
      [ -f "$resolved" ] || resolved="$(dirname "$file")/$include"
      [ -f "$resolved" ] || continue
      [ -n "${parent[$resolved]+set}" ] && continue
      parent[$resolved]="$file"
      queue+=("$resolved")
    done < <(includes_of "$file")
  done
  return 1
}
transitive_hits=""
for file in report/analysis/* report/export/* plotting/*.?pp scaling/model.?pp scaling/plan.?pp \
  scaling/plan_input.?pp scaling/plan_output.?pp; do
  [ -f "$file" ] || continue
  if chain=$(db_chain "$file"); then transitive_hits+="$chain"$'\n'; fi
done
if [ -n "$transitive_hits" ]; then
  echo "check-includes: report/analysis/, report/export/, plotting/ and scaling/ (model, plan," \
    "plan_input, plan_output) reach db/ through these includes; analyses take a RunSet" \
    "(report/data/run_set.hpp):"
  printf '%s' "$transitive_hits"
  status=1
fi
if [ "$status" = 0 ]; then
  echo "check-includes: trainer/model/ is backend-neutral, trainer/cuda/ does not include" \
    "trainer/cpu/, the report's layers look only down, plotting/ includes no cli/, and no" \
    "analysis, exporter, figure or scaling model reaches db/ through any chain of includes"
fi
exit "$status"
