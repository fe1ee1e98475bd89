#!/usr/bin/env bash
# Run HERE (the Debian 12 development machine) after building ./build with the CUDA backend:
# packs into .device-bundle/ what a lent GPU machine (the `device` tool: CUDA and PyTorch, no
# Debian packages, no network, minutes of device time) needs to run the CUDA test suite, the GPU
# quickstart, the allreduce benchmark and bench/gpu_vs_pytorch.sh WITHOUT building there:
#   bin/    scalebench, scalebench-train, tests/test_cuda and (when built) bench/cudnn_conv_bench,
#           stripped, at their build/ paths
#   ctest/  the cuda suite's ctest files (they name /work/main/build/...: the run script links
#           /work/main to the checkout there)
#   debs/   the runtime Debian packages (libraries, mpirun, the Fashion-MNIST data set)
# Then, through the device tool with carry [".device-bundle"]: bash scripts/gpu/device-run.sh
# (scripts/gpu/device-debs.sh + device-build.sh build there instead: slower, and it needs the
# dev packages).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build}
bundle=.device-bundle
for f in "$build/scalebench" "$build/scalebench-train" "$build/tests/test_cuda"; do
  [ -x "$f" ] || { echo "device-bundle: $f missing: build with the CUDA backend first" >&2; exit 1; }
done
rm -rf "$bundle"
mkdir -p "$bundle/bin/tests" "$bundle/ctest" "$bundle/debs"
exclude=$(git rev-parse --git-path info/exclude)
grep -qx "/$bundle/" "$exclude" 2>/dev/null || echo "/$bundle/" >>"$exclude"
for f in scalebench scalebench-train tests/test_cuda; do
  strip -o "$bundle/bin/$f" "$build/$f"
done
cp "$build"/tests/test_cuda_*.cmake "$bundle/ctest/"
# The convbench stage's program (bench/cudnn_conv_bench.cpp): carried when built.
if [ -x "$build/bench/cudnn_conv_bench" ]; then
  mkdir -p "$bundle/bin/bench"
  strip -o "$bundle/bin/bench/cudnn_conv_bench" "$build/bench/cudnn_conv_bench"
else
  echo "device-bundle: no $build/bench/cudnn_conv_bench: the convbench stage will have nothing to run" >&2
fi
# shellcheck source=scripts/gpu/packages.sh
source scripts/gpu/packages.sh
packages=("${runtime_packages[@]}" dataset-fashion-mnist)
(cd "$bundle/debs" && apt-get download "${packages[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
bytes=$(du -cb "$bundle" | tail -1 | cut -f1)
echo "device-bundle: $((bytes / 1048576)) MiB in $bundle"
if ((bytes > 60 * 1048576)); then
  echo "device-bundle: over 60 MiB (the device tool carries 64 MiB with the working tree)" >&2
  exit 1
fi
