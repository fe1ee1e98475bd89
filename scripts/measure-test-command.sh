#!/usr/bin/env bash
# Times the phases of the test command (scripts/test.sh) on a fresh clone with nothing cached
# (CCACHE_DISABLE=1): install, checks, build, ctest, sanitizer build, sanitizer ctest. Prints one
# "PHASE name seconds-since-start" line per phase and the two ctest summaries; the logs stay in
# the clone. README.md states the figure it gave (issue 36, item 6).
#   scripts/measure-test-command.sh [CLONE_DIR]    (default /tmp/scalebench-cold; replaced)
set -uo pipefail
source_repo="$(cd "$(dirname "$0")/.." && pwd)"
clone="${1:-/tmp/scalebench-cold}"
rm -rf "$clone"
git clone -q "$source_repo" "$clone"
cd "$clone"
export CCACHE_DISABLE=1 CI=true
t0=$(date +%s)
phase() { echo "PHASE $1 $(($(date +%s) - t0)) s"; }
phase start
bash scripts/install-deps.sh >install.log 2>&1
phase install
bash scripts/check-format.sh >checks.log 2>&1
bash scripts/check-includes.sh >>checks.log 2>&1
phase checks
bash scripts/build.sh >build.log 2>&1
phase build
(cd build && ctest -j "$(nproc)" --timeout 600 >ctest.log 2>&1)
phase ctest
# scripts/test-sanitizers.sh, split so that its build and its ctest are timed apart.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSCALEBENCH_SANITIZE=address,undefined -DSCALEBENCH_TRAINER=OFF >asan-build.log 2>&1
cmake --build build-asan -j "$(nproc)" >>asan-build.log 2>&1
phase asan-build
[ -x build/scalebench-train ] && ln -sfn "$clone/build/scalebench-train" build-asan/scalebench-train
(cd build-asan &&
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest -j "$(nproc)" --timeout 900 -R '^(util|db|orchestrator|stats|report|scaling|plotting|cli|fuzz):' \
    >ctest-asan.log 2>&1)
phase asan-ctest
grep -h "tests passed" build/ctest.log build-asan/ctest-asan.log
