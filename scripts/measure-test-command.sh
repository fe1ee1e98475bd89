#!/usr/bin/env bash
# Times the test command as README.md orders it on a fresh clone with nothing cached
# (CCACHE_DISABLE=1): the quickstart first (scripts/quickstart.sh), then scripts/test.sh, whose
# "== scalebench test: PHASE done at N s" lines give install, checks, build, ctest, sanitizer
# build and sanitizer ctest. Prints the quickstart's and the test command's wall time, the phase
# lines and the two ctest summaries; the logs stay in the clone. README.md states the figure.
#   scripts/measure-test-command.sh [CLONE_DIR]    (default /tmp/scalebench-cold; replaced)
set -uo pipefail
source_repo="$(cd "$(dirname "$0")/.." && pwd)"
clone="${1:-/tmp/scalebench-cold}"
rm -rf "$clone"
git clone -q "$source_repo" "$clone"
cd "$clone"
export CCACHE_DISABLE=1 CI=true
t0=$(date +%s)
bash scripts/quickstart.sh >quickstart.log 2>&1
echo "quickstart: rc $? in $(($(date +%s) - t0)) s"
t1=$(date +%s)
bash scripts/test.sh >test.log 2>&1
echo "test command: rc $? in $(($(date +%s) - t1)) s"
grep -h "^== scalebench test:" test.log
grep -h "tests passed" test.log
