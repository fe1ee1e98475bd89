#!/usr/bin/env bash
# Is there a GPU that scalebench-train --backend cuda can train on? Sourced by
# scripts/gpu/quickstart-gpu.sh and bench/gpu_vs_pytorch.sh (gpu_precheck, require_gpu), or run on
# its own:
#   bash scripts/gpu/require-gpu.sh [build/scalebench-train]
# Exit codes (automake's and ctest's convention for "skipped"):
#   0   a GPU is there and the trainer trained 2 steps of mnist_cnn on it
#   77  skipped: no GPU (nvidia-smi -L lists none, or the trainer finds none), or this build of
#       the trainer has no cuda backend that can train
#   1   a GPU is there but the probe failed or hung: a real error, with the trainer's message
# Every outcome prints one line saying why. GPU_PROBE_TIMEOUT (seconds, default 180) bounds the
# probe, which includes CUDA's start-up and cuDNN's first algorithm search.

# nvidia-smi's view, before anything long: returns 77 when nvidia-smi lists no GPU. Sets
# gpu_count (empty when nvidia-smi is missing: the trainer's probe decides then).
gpu_precheck() {
  gpu_count=""
  if ! command -v nvidia-smi >/dev/null; then
    echo "# nvidia-smi not found; the trainer's own probe decides whether there is a GPU"
    return 0
  fi
  local listed
  if ! listed=$(nvidia-smi -L 2>&1); then
    echo "no GPU: skipped (nvidia-smi -L failed: $(head -n1 <<<"$listed"))" >&2
    return 77
  fi
  gpu_count=$(grep -c '^GPU ' <<<"$listed" || true)
  if ((gpu_count == 0)); then
    echo "no GPU: skipped (nvidia-smi -L lists none)" >&2
    return 77
  fi
  return 0
}

# require_gpu TRAIN: gpu_precheck, then the trainer: its build must list the cuda backend, and a
# 2-step mnist_cnn run on synthetic data must succeed.
require_gpu() {
  local train=$1 rc=0
  gpu_precheck || return $?
  if [[ ! -x $train ]]; then
    echo "error: $train not found; build it first (bash scripts/build.sh)" >&2
    return 1
  fi
  local backends
  backends=$("$train" --help | sed -n 's/.*this build has: //p')
  if [[ " ${backends//,/ } " != *" cuda "* ]]; then
    echo "no cuda backend: skipped ($train has: ${backends:-?}; it is built when /usr/local/cuda" \
      "has nvcc, cuDNN and NCCL: rerun bash scripts/build.sh there and look for" \
      "'scalebench: CUDA backend ON')" >&2
    return 77
  fi
  local log
  log=$(mktemp)
  timeout -k 10 "${GPU_PROBE_TIMEOUT:-180}" "$train" --backend cuda --model mnist_cnn \
    --dataset synthetic --input-shape 1x28x28 --classes 10 --train-images 256 --test-images 0 \
    --epochs 1 --batch-size 128 >"$log" 2>&1 || rc=$?
  local said
  said=$(grep -m1 -i 'error' "$log" || tail -n1 "$log")
  if ((rc == 0)); then
    rm -f "$log"
    return 0
  elif ((rc == 124 || rc == 137)); then
    echo "error: the GPU probe (scalebench-train --backend cuda, 2 steps of mnist_cnn) did not" \
      "finish in ${GPU_PROBE_TIMEOUT:-180} s; its output:" >&2
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  # The cuda backend's own words for "nothing to run on" (trainer/cuda/device.cpp pick_device,
  # the CUDA runtime's) and for a build whose cuda backend cannot train yet.
  if grep -qiE 'no GPU found|no CUDA-capable device|cudaErrorNoDevice|InsufficientDriver|driver version is insufficient' <<<"$said"; then
    echo "no GPU: skipped (scalebench-train --backend cuda says: $said)" >&2
    return 77
  fi
  if grep -qiE 'not in this build|not implemented yet' <<<"$said"; then
    echo "no cuda backend: skipped (scalebench-train --backend cuda says: $said)" >&2
    return 77
  fi
  echo "error: scalebench-train --backend cuda failed (exit $rc) although a GPU is listed: $said" >&2
  return 1
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -uo pipefail
  require_gpu "${1:-$(cd "$(dirname "$0")/../.." && pwd)/build/scalebench-train}"
  status=$?
  ((status == 0)) && echo "GPU ok: scalebench-train --backend cuda trains${gpu_count:+ (nvidia-smi lists $gpu_count GPU(s))}"
  exit $status
fi
