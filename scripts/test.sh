#!/usr/bin/env bash
# README command (b): install, build, and run the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)" --timeout 600
