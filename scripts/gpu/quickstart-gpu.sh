#!/usr/bin/env bash
# The quickstart on one NVIDIA GPU: install, build (with the cuda backend), run
# experiments/quickstart-gpu.json end to end and leave the database, the table and the figure in
# ./results. Exits with 77 ("skipped") and one line saying why when there is no GPU, no CUDA
# toolkit to build the backend with, or a build whose cuda backend cannot train: the first two
# are checked before installing or building anything, the last with a 2-step probe before the
# experiment (scripts/gpu/require-gpu.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/gpu/require-gpu.sh
source scripts/gpu/require-gpu.sh
status=0
gpu_precheck || status=$?
if ((status == 0)) && [[ ! -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
  echo "no cuda backend: skipped (no nvcc in /usr/local/cuda/bin or on PATH: the cuda backend" \
    "needs the CUDA toolkit, cuDNN and NCCL under /usr/local/cuda)" >&2
  status=77
fi
((status == 0)) || { echo "quickstart-gpu.sh: nothing run (exit $status)" >&2; exit "$status"; }

bash scripts/install-deps.sh --product
bash scripts/build.sh --product
build_dir="${BUILD_DIR:-build}"
results="${RESULTS_DIR:-results}"
db="$results/scalebench.db"
require_gpu "$build_dir/scalebench-train" || status=$?
((status == 0)) || { echo "quickstart-gpu.sh: nothing run (exit $status)" >&2; exit "$status"; }
echo "# gpu: $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1 || echo "nvidia-smi not found")"
mkdir -p "$results"

"$build_dir/scalebench" run experiments/quickstart-gpu.json --db "$db"
"$build_dir/scalebench" report --db "$db" --experiment quickstart-gpu --output "$results/quickstart-gpu-table.md"
"$build_dir/scalebench" report --db "$db" --experiment quickstart-gpu --format csv --output "$results/quickstart-gpu-table.csv"
"$build_dir/scalebench" plot --db "$db" --experiment quickstart-gpu --output "$results/quickstart-gpu-scaling"
echo
cat "$results/quickstart-gpu-table.md"
echo
echo "database: $db   (scalebench query --db $db \"SELECT * FROM epoch_times LIMIT 5\")"
echo "table:    $results/quickstart-gpu-table.md, $results/quickstart-gpu-table.csv"
echo "figure:   $results/quickstart-gpu-scaling.png, $results/quickstart-gpu-scaling.svg"
