#!/usr/bin/env bash
# Run HERE (the Debian 12 development machine, with apt): downloads into .device-debs/ the Debian
# packages that building and running scalebench needs, for a lent GPU machine (the `device`
# tool), which has CUDA, cmake, ninja, gcc and PyTorch but no Debian dev packages and no network.
# scripts/gpu/device-build.sh unpacks them there, under a prefix of their own (never over /).
#
# Left out on purpose: packages such an image already has (libc6, libstdc++6, libgcc-s1,
# libgomp1, libatomic1, zlib1g, ...), and gnuplot (its shared libraries come from 53 packages,
# by ldd; plots are made here, from the database that comes back). FASHION_MNIST=0 leaves out the 30 MB data set
# (experiments/quickstart-gpu.json needs it; the tests and bench/gpu_vs_pytorch.sh do not).
#
# usage: bash scripts/gpu/device-debs.sh        then name .device-debs in the device call's `carry`
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.device-debs
# shellcheck source=scripts/gpu/packages.sh
source scripts/gpu/packages.sh
packages=("${build_packages[@]}" "${runtime_packages[@]}")
if [ "${FASHION_MNIST:-1}" != 0 ]; then packages+=(dataset-fashion-mnist); fi
rm -rf "$dir"
mkdir -p "$dir"
exclude=$(git rev-parse --git-path info/exclude)  # ignored: it travels only when carried
mkdir -p "$(dirname "$exclude")"
grep -qx '/.device-debs/' "$exclude" 2>/dev/null || echo '/.device-debs/' >> "$exclude"
(cd "$dir" && apt-get download "${packages[@]}")
bytes=$(du -cb "$dir"/*.deb | tail -1 | cut -f1)
echo "device-debs: ${#packages[@]} packages, $((bytes / 1048576)) MiB in $dir"
# The device tool carries at most 64 MiB: the working tree (~1.5 MiB) and these together.
if ((bytes > 60 * 1048576)); then
  echo "device-debs: over 60 MiB; run with FASHION_MNIST=0 and use synthetic data" >&2
  exit 1
fi
