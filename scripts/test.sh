#!/usr/bin/env bash
# README command (b): install, build, and run the whole test suite through ctest, then the
# sanitizer job (scripts/test-sanitizers.sh: ASan + UBSan build of the non-trainer suites in
# ./build-asan; SCALEBENCH_TEST_SANITIZERS=0 skips it). Both always run; either failing fails this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
status=0
(cd "$build_dir" && ctest --output-on-failure -j "$(nproc)" --timeout 600) || status=1
if [ "${SCALEBENCH_TEST_SANITIZERS:-1}" != 0 ]; then
  BUILD_DIR="$build_dir" bash scripts/test-sanitizers.sh || status=1
fi
exit "$status"
