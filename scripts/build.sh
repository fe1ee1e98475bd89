#!/usr/bin/env bash
# Configures and builds scalebench into ./build (override with BUILD_DIR).
#   build.sh             everything: the product, the benchmarks and the test suite
#   build.sh --product   scalebench and scalebench-train alone (scripts/quickstart.sh), without
#                        the test suite (which needs doctest) or the benchmarks
# The choice is passed to CMake each time (SCALEBENCH_TESTS), so a tree configured by one is
# reconfigured by the other, never left without its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
case "${1:-}" in
  --product) tests=OFF; targets=(--target scalebench scalebench-train) ;;
  "") tests=ON; targets=() ;;
  *) echo "usage: build.sh [--product]" >&2; exit 2 ;;
esac
# TEST_SUITES: which test suites (tests/CMakeLists.txt), "all" unless told; passed each time too.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DSCALEBENCH_TESTS=$tests "-DSCALEBENCH_TEST_SUITES=${TEST_SUITES:-all}" ${CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
