#!/usr/bin/env bash
# Sanitizer job: builds scalebench with AddressSanitizer (+ LeakSanitizer) and
# UndefinedBehaviorSanitizer into ./build-asan (override with ASAN_BUILD_DIR) and runs the
# non-trainer test suites there: util, db, orchestrator, stats, report, scaling, plotting, cli, fuzz (the seeded
# harness). scripts/test.sh runs it after the normal test suite; run it alone after
# scripts/install-deps.sh.
#
# - Configured with -DSCALEBENCH_SANITIZE=address,undefined (every C/C++ target compiled and
#   linked with -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
#   and -DSCALEBENCH_TRAINER=OFF (no trainer, CUDA, MPI or oneDNN: their tests are not run here).
# - Any finding (heap/stack/global overflow, use-after-free, leak, signed overflow, misaligned or
#   null access, invalid shift or enum/bool value, ...) aborts that test binary, so its ctest
#   case fails and this script exits non-zero.
# - The cli end-to-end cases launch scalebench-train under mpirun: when the normal build
#   (BUILD_DIR, default ./build) has the trainer, it is linked into build-asan so that those cases
#   run (a sanitized orchestrator driving an uninstrumented trainer); otherwise they are skipped
#   (SKIPPED).
# - Compiled with -O1 -g1 (ASan's recommended level; line tables for the stacks) rather than the
#   normal build's -O2 -g: GCC 12 compiles a sanitized file about twice as fast so (a test file
#   8.7 s -> 4.3 s, report/analysis/report.cpp 23.9 s -> 11.6 s).
# - Only the suites that run here are built (SCALEBENCH_TEST_SUITES), and no benchmark program.
set -euo pipefail
cd "$(dirname "$0")/.."
asan_dir="${ASAN_BUILD_DIR:-build-asan}"
build_dir="${BUILD_DIR:-build}"
suites="util;db;orchestrator;stats;report;scaling;plotting;cli;fuzz"

cmake -S . -B "$asan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DSCALEBENCH_SANITIZE=address,undefined -DSCALEBENCH_TRAINER=OFF -DSCALEBENCH_BENCH=OFF \
  "-DSCALEBENCH_TEST_SUITES=$suites"
cmake --build "$asan_dir" -j "$(nproc)"

[ -n "${SCALEBENCH_TEST_T0:-}" ] &&
  echo "== scalebench test: sanitizer build done at $(($(date +%s) - SCALEBENCH_TEST_T0)) s" >&2
if [ -x "$build_dir/scalebench-train" ]; then
  ln -sfn "$(cd "$build_dir" && pwd)/scalebench-train" "$asan_dir/scalebench-train"
fi

# detect_leaks: LeakSanitizer at exit; abort_on_error: a core-style abort, never exit code 77 or 0.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$asan_dir"
status=0
ctest --output-on-failure -j "$(nproc)" --timeout 900 || status=$?
[ -n "${SCALEBENCH_TEST_T0:-}" ] &&
  echo "== scalebench test: sanitizer ctest done at $(($(date +%s) - SCALEBENCH_TEST_T0)) s" >&2
exit $status
