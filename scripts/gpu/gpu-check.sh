#!/usr/bin/env bash
# The first checks on a lent GPU machine, one `device` call per step (each call gets at most 10
# minutes and the machine starts bare, so every step builds first). Run HERE first:
#   bash scripts/gpu/device-debs.sh                          # once: .device-debs/ (56 MiB)
# then through the device tool, with carry [".device-debs"], one of:
#   bash scripts/gpu/gpu-check.sh tests        # build; ctest -R cuda (the cross-backend tests)
#   bash scripts/gpu/gpu-check.sh bench        # build; bench/gpu_vs_pytorch.sh, short rounds
#   bash scripts/gpu/gpu-check.sh quickstart   # build; experiments/quickstart-gpu.json + report
#   bash scripts/gpu/gpu-check.sh allreduce    # build; scalebench-train --benchmark allreduce (NCCL)
# Logs (and the quickstart's database) go to $OUT, which the device tool brings back.
#
# NOT YET RUN ON A DEVICE (written 2026-11-23 without one; see docs/trainer-cuda.md).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-gpu-check-out}
mkdir -p "$out"
step=${1:?usage: gpu-check.sh tests|bench|quickstart|allreduce}
{ nvidia-smi || true; } > "$out/nvidia-smi.txt" 2>&1
if ! bash scripts/gpu/device-build.sh > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "gpu-check: the build failed (build.log)" >&2
  exit 1
fi
grep -E "scalebench: CUDA backend" "$out/build.log"
# shellcheck source=scripts/gpu/device-env.sh
source scripts/gpu/device-env.sh
case "$step" in
  tests)
    (cd build && timeout 480 ctest -R "cuda" -j 4 --output-on-failure) 2>&1 | tee "$out/ctest-cuda.log" | tail -60
    ;;
  bench)
    # The Python that has PyTorch (the image's plain python3; here it is /usr/bin/python3).
    for candidate in python3 /opt/torch/.venv/bin/python3 /usr/bin/python3; do
      if "$candidate" -c 'import torch' 2>/dev/null; then
        PYTHON=${PYTHON:-$(command -v "$candidate")}
        break
      fi
    done
    export PYTHON
    ROUNDS=${ROUNDS:-2} RESNET_ROUNDS=${RESNET_ROUNDS:-2} EPOCHS=${EPOCHS:-3} \
      timeout 480 bash bench/gpu_vs_pytorch.sh build 2>&1 | tee "$out/bench.log" | tail -40
    ;;
  quickstart)
    results="$out/results"
    mkdir -p "$results"
    timeout 480 build/scalebench run experiments/quickstart-gpu.json --db "$results/scalebench.db" \
      2>&1 | tee "$out/quickstart.log" | tail -20
    build/scalebench report --db "$results/scalebench.db" --experiment quickstart-gpu \
      --output "$results/quickstart-gpu-table.md" 2>&1 | tail -5
    cat "$results/quickstart-gpu-table.md" 2>/dev/null
    ;;
  allreduce)
    timeout 300 build/scalebench-train --benchmark allreduce --backend cuda --max-bytes 1G \
      2>&1 | tee "$out/allreduce-nccl.log"
    ;;
  *)
    echo "gpu-check: unknown step '$step' (tests, bench, quickstart, allreduce)" >&2
    exit 2
    ;;
esac
