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
if [ "$status" = 0 ]; then
  echo "check-includes: trainer/model/ is backend-neutral, trainer/cuda/ does not include" \
    "trainer/cpu/, the report's layers look only down, plotting/ includes no cli/"
fi
exit "$status"
