#!/usr/bin/env bash
# The trainer's dependency rules (ARCHITECTURE.md, "Trainer"): the backend-neutral model
# (trainer/model/) includes no oneDNN, CUDA, cuDNN, cuBLAS or NCCL header, no backend and not the
# backend interface (trainer/backend.hpp, which includes it); the CUDA backend (trainer/cuda/)
# does not include the CPU backend (trainer/cpu/). Prints each offending line and exits 1; run by
# scripts/test.sh before the build.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
check() {
  local dir="$1" pattern="$2" why="$3"
  local hits
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
if [ "$status" = 0 ]; then
  echo "check-includes: trainer/model/ is backend-neutral, trainer/cuda/ does not include trainer/cpu/"
fi
exit "$status"
