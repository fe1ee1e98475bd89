#!/usr/bin/env bash
# README command (b): install, check the format (scripts/check-format.sh: clang-format 14 and
# .clang-format) and the include rules (scripts/check-includes.sh), build, and run every test
# once:
# - the unit and end-to-end suites (util, db, orchestrator, stats, report, scaling, plotting, cli,
#   fuzz) in the sanitizer job (scripts/test-sanitizers.sh: ASan + UBSan, ./build-asan), where a
#   memory or undefined-behaviour error fails them too;
# - the rest in ./build, without sanitizers: the trainer (MPI, oneDNN), CUDA (skipped without a
#   GPU), timing comparisons, the golden outputs (byte for byte, of the -O2 binary users get),
#   peak-memory bounds (tests/memory), the Slurm and script tests.
# Each suite is built only in the tree that runs it (SCALEBENCH_TEST_SUITES). With
# SCALEBENCH_TEST_SANITIZERS=0 there is no sanitizer job, and ./build builds and runs them all.
# All always run; any failing fails this.
set -euo pipefail
cd "$(dirname "$0")/.."
# One line per phase with the seconds since the start (scripts/measure-test-command.sh reads them).
export SCALEBENCH_TEST_T0="${SCALEBENCH_TEST_T0:-$(date +%s)}"
phase() { echo "== scalebench test: $1 done at $(($(date +%s) - SCALEBENCH_TEST_T0)) s" >&2; }
bash scripts/install-deps.sh
phase install
status=0
# The format gate first; a diff fails the run, but the tests still run and report.
bash scripts/check-format.sh || status=1
bash scripts/check-includes.sh || status=1
phase checks
sanitizers="${SCALEBENCH_TEST_SANITIZERS:-1}"
if [ "$sanitizers" != 0 ]; then
  export TEST_SUITES="trainer;cuda;timing;golden;memory;scripts;slurm"
else
  export TEST_SUITES=all
fi
bash scripts/build.sh
phase build
build_dir="${BUILD_DIR:-build}"
(cd "$build_dir" && ctest --output-on-failure -j "$(nproc)" --timeout 600) || status=1
phase ctest
if [ "$sanitizers" != 0 ]; then
  BUILD_DIR="$build_dir" bash scripts/test-sanitizers.sh || status=1
fi
exit "$status"
