#!/usr/bin/env bash
# Run THERE (a lent GPU machine, through the `device` tool, carry [".device-bundle"] made here by
# scripts/gpu/device-bundle.sh): unpacks the runtime packages, puts the prebuilt programs at their
# build/ paths, then runs the stages of STAGES in order, each under its own time limit, logging to
# $OUT (the device tool brings it back):
#   info        nvidia-smi, the libraries the programs resolve, cuDNN/NCCL found where
#   tests       ctest -R cuda (the cross-backend suite, NCCL at np=1)          -> ctest-cuda.log
#   allreduce   scalebench-train --benchmark allreduce --backend cuda (NCCL)    -> allreduce.log
#   quickstart  experiments/quickstart-gpu.json, its report                     -> results/
#   flops       bench/model_flops.py: training FLOPs per image (PyTorch's count) -> flops.log
#   bench       bench/gpu_vs_pytorch.sh, one short round per row (ROUNDS, EPOCHS, ... pass through) -> bench.log
#   profile     (not in the default list) scalebench-train --profile-ops: the per-operation table
#               of each model of PROFILE_MODELS in each precision of PROFILE_PRECISIONS
#               (default resnet50 at batch 64, fp32 and bf16)               -> profile.log
#   convbench   (not in the default list) the 'conv graph' test cases of test_cuda, then
#               bench/cudnn_conv_bench: ResNet-50's convolutions, legacy vs graph API, fp32 and
#               bf16 (CONVBENCH_ARGS pass through)                           -> convbench.log
# usage: STAGES="info tests quickstart" bash scripts/gpu/device-run.sh
#        (default: all but profile and convbench)
# One stage failing does not stop the next; the exit status is 1 when any failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-device-out}
mkdir -p "$out"
exec > >(tee -a "$out/device-run.log") 2>&1
stages=${STAGES:-info tests allreduce quickstart flops bench}
t0=$(date +%s)
say() { echo "=== $* (t=$(($(date +%s) - t0)) s)"; }

# --- set-up: packages, environment, programs at their build/ paths ---------------------------
: "${SB_DEPS:=/opt/scalebench-deps}"
bundle=.device-bundle
ls "$bundle"/debs/*.deb >/dev/null 2>&1 || { echo "device-run: no $bundle/debs (carry .device-bundle)" >&2; exit 1; }
mkdir -p "$SB_DEPS"
for deb in "$bundle"/debs/*.deb; do dpkg -x "$deb" "$SB_DEPS"; done
for name in mpirun mpiexec; do ln -sf "$name.openmpi" "$SB_DEPS/usr/bin/$name"; done
if [ ! -e /usr/share/datasets/fashion-mnist ]; then
  mkdir -p /usr/share/datasets
  ln -s "$SB_DEPS/usr/share/datasets/fashion-mnist" /usr/share/datasets/fashion-mnist
fi
# shellcheck source=scripts/gpu/device-env.sh
source scripts/gpu/device-env.sh
# cuDNN, NCCL, cuBLAS and the CUDA runtime wherever the image keeps them (the toolkit, or the
# nvidia-* Python wheels in any layout): every directory holding one of the sonames we link.
for lib in libcudnn.so.9 libnccl.so.2 libcublas.so.13 libcublasLt.so.13 libcudart.so.13; do
  if ! ldconfig -p 2>/dev/null | grep -q "$lib"; then
    dir=$(find /usr/local/cuda/ /usr/local/lib /usr/lib /opt -name "$lib" -printf '%h\n' 2>/dev/null | head -n1)
    [ -n "$dir" ] && [[ ":$LD_LIBRARY_PATH:" != *":$dir:"* ]] && LD_LIBRARY_PATH="$dir:$LD_LIBRARY_PATH"
  fi
done
export LD_LIBRARY_PATH
# The ctest files and the tests name /work/main/build/...: the checkout there is elsewhere.
here=$(pwd -P)
if [ "$here" != /work/main ]; then
  if [ -L /work/main ] || [ ! -e /work/main ]; then
    mkdir -p /work
    ln -sfn "$here" /work/main
  else
    echo "device-run: /work/main exists and is not a link: the tests run what is there" >&2
  fi
fi
mkdir -p build/tests
cp "$bundle"/bin/scalebench "$bundle"/bin/scalebench-train build/
cp "$bundle"/bin/tests/test_cuda build/tests/
if [ -x "$bundle"/bin/bench/cudnn_conv_bench ]; then
  mkdir -p build/bench
  cp "$bundle"/bin/bench/cudnn_conv_bench build/bench/
fi
cp "$bundle"/ctest/*.cmake build/tests/
include=$(cd build/tests && ls test_cuda_include-*.cmake 2>/dev/null | head -n1)
echo "include(\"/work/main/build/tests/$include\")" >build/tests/CTestTestfile.cmake
echo 'subdirs("tests")' >build/CTestTestfile.cmake
python=""
for candidate in python3 /opt/torch/.venv/bin/python3 /usr/bin/python3; do
  if "$candidate" -c 'import torch' 2>/dev/null; then python=$(command -v "$candidate"); break; fi
done
export PYTHON=$python
failed=0
run_stage() {  # run_stage NAME LIMIT_S CMD...: CMD under a time limit, its status said
  local name=$1 limit=$2 rc=0
  shift 2
  say "$name: start (limit $limit s)"
  timeout -k 5 "$limit" "$@" || rc=$?
  say "$name: exit $rc$( ((rc == 124 || rc == 137)) && echo ' (TIMED OUT)')"
  ((rc == 0)) || failed=1
}

for stage in $stages; do
  case $stage in
    info)
      say info
      nvidia-smi
      echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
      echo "python with torch: ${python:-none}"
      for f in build/scalebench-train build/tests/test_cuda; do
        ldd "$f" | grep -E 'not found|cudnn|nccl|cublas|cudart|dnnl|mpi' | sed "s|^|$f: |"
      done
      build/scalebench-train --help | grep -i 'this build has' || true
      ;;
    tests)
      run_stage tests "${TESTS_LIMIT:-200}" bash -c \
        "set -o pipefail; cd build && ctest -R cuda -j \${CTEST_JOBS:-4} --timeout \${TEST_TIMEOUT:-150} --output-on-failure 2>&1 | tee '$out/ctest-cuda.log' | tail -n 80"
      ;;
    allreduce)
      run_stage allreduce "${ALLREDUCE_LIMIT:-40}" bash -c \
        "set -o pipefail; build/scalebench-train --benchmark allreduce --backend cuda --max-bytes 256M 2>&1 | tee '$out/allreduce.log'"
      ;;
    quickstart)
      mkdir -p "$out/results"
      run_stage quickstart "${QUICKSTART_LIMIT:-150}" bash -c \
        "set -o pipefail; build/scalebench run experiments/quickstart-gpu.json --db '$out/results/scalebench.db' 2>&1 | tail -n 25 &&
         build/scalebench report --db '$out/results/scalebench.db' --experiment quickstart-gpu --output '$out/results/quickstart-gpu-table.md' &&
         cat '$out/results/quickstart-gpu-table.md'"
      ;;
    flops)
      run_stage flops "${FLOPS_LIMIT:-60}" bash -c "set -o pipefail; '$python' bench/model_flops.py 2>&1 | tee '$out/flops.log'"
      ;;
    bench)
      # One round of every row (5 models, resnet50 at 64 and 256, fp32 and bf16): about 300 s
      # on an H100/H200 by the 2026-11-26 figures (docs/trainer-cuda.md, last section), so 350 s
      # leaves a call of info + tests (TESTS_LIMIT 200) + bench inside the tool's 600 s. No
      # host-input PyTorch runs by default (~35 s, not in the headline). MODELS, PRECISIONS,
      # RESNET_BATCHES, CUDA_GRAPH(_MODELS), FLOPS_TIMEOUT reach the bench from the environment.
      run_stage bench "${BENCH_LIMIT:-350}" env ROUNDS="${ROUNDS:-1}" RESNET_ROUNDS="${RESNET_ROUNDS:-1}" \
        EPOCHS="${EPOCHS:-3}" STEPS="${STEPS:-100}" RESNET_STEPS="${RESNET_STEPS:-20}" WARMUP="${WARMUP:-5}" \
        RUN_TIMEOUT="${RUN_TIMEOUT:-90}" HOST_INPUT="${HOST_INPUT:-0}" \
        bash -c "set -o pipefail; bash bench/gpu_vs_pytorch.sh build 2>&1 | tee '$out/bench.log'"
      ;;
    profile)
      run_stage profile "${PROFILE_LIMIT:-150}" bash -c \
        "set -o pipefail; bash scripts/gpu/profile-ops.sh build/scalebench-train 2>&1 | tee '$out/profile.log'"
      ;;
    convbench)
      # The graph API's correctness first (seconds), then its speed, whatever the tests said;
      # TF32 off for the tests only. The stage fails when either does.
      run_stage convbench "${CONVBENCH_LIMIT:-300}" bash -c \
        "set -o pipefail; { NVIDIA_TF32_OVERRIDE=0 build/tests/test_cuda -tc='conv graph*'; t=\$?;
           build/bench/cudnn_conv_bench \${CONVBENCH_ARGS:-}; b=\$?; exit \$((t ? t : b)); } 2>&1 | tee '$out/convbench.log'"
      ;;
    *) echo "device-run: unknown stage '$stage'" >&2; failed=1 ;;
  esac
done
say "done (failed=$failed)"
exit $failed
