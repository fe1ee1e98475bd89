#!/usr/bin/env bash
# Run THERE (a lent GPU machine, through the `device` tool, as root, no network), with
# .device-debs carried (scripts/gpu/device-debs.sh): unpacks the Debian packages under
# $SB_DEPS (default /opt/scalebench-deps), points the build at them and at cuDNN/NCCL (CUDA's
# own, or the nvidia-cudnn-cu13 / nvidia-nccl-cu13 wheels of the image's Python), then configures
# and builds ./build with ninja. Source scripts/gpu/device-env.sh in the same command before
# running anything built (it sets the library and Open MPI paths).
#
# NOT YET RUN ON A DEVICE (written 2026-11-23 without one): expect to fix paths on first use.
# It prints what it finds, so a failed call still says why.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${SB_DEPS:=/opt/scalebench-deps}"
ls .device-debs/*.deb >/dev/null 2>&1 || { echo "device-build: no .device-debs/*.deb (carry it)" >&2; exit 1; }
mkdir -p "$SB_DEPS"
for deb in .device-debs/*.deb; do dpkg -x "$deb" "$SB_DEPS"; done
# dpkg -x makes no alternatives links: mpirun, mpiexec and the compiler wrappers by their usual names.
for name in mpirun mpiexec mpicc mpicxx; do
  ln -sf "$name.openmpi" "$SB_DEPS/usr/bin/$name"
done
# The data set where experiments/quickstart-gpu.json looks for it.
if [ -d "$SB_DEPS/usr/share/datasets/fashion-mnist" ] && [ ! -e /usr/share/datasets/fashion-mnist ]; then
  mkdir -p /usr/share/datasets
  ln -s "$SB_DEPS/usr/share/datasets/fashion-mnist" /usr/share/datasets/fashion-mnist
fi
# shellcheck source=scripts/gpu/device-env.sh
source scripts/gpu/device-env.sh
echo "device-build: nvcc $(command -v nvcc || echo none), cuDNN root ${SCALEBENCH_CUDNN_ROOT:-none}, NCCL root ${SCALEBENCH_NCCL_ROOT:-none}"
nvidia-smi -L || true
# shellcheck disable=SC2086  # CMAKE_ARGS: several arguments, split on purpose
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$SB_DEPS/usr;$SB_DEPS/usr/lib/x86_64-linux-gnu/cmake" \
  -DMPI_HOME="$SB_DEPS/usr" ${CMAKE_ARGS:-}
cmake --build build -j "$(nproc)"
