#!/usr/bin/env bash
# README command (b): install, check the format (scripts/check-format.sh: clang-format 14 and
# .clang-format) and the trainer's include rules (scripts/check-includes.sh), build, and run the
# whole test suite through ctest, then the sanitizer job (scripts/test-sanitizers.sh: ASan +
# UBSan build of the non-trainer suites in ./build-asan; SCALEBENCH_TEST_SANITIZERS=0 skips it).
# All always run; any failing fails this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
status=0
# The format gate first; a diff fails the run, but the tests still run and report.
bash scripts/check-format.sh || status=1
bash scripts/check-includes.sh || status=1
bash scripts/build.sh
build_dir="${BUILD_DIR:-build}"
(cd "$build_dir" && ctest --output-on-failure -j "$(nproc)" --timeout 600) || status=1
if [ "${SCALEBENCH_TEST_SANITIZERS:-1}" != 0 ]; then
  BUILD_DIR="$build_dir" bash scripts/test-sanitizers.sh || status=1
fi
exit "$status"
