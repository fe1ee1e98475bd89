#!/usr/bin/env bash
# Prints how often the scaling model's band covered a held-out np on the committed hold-out
# fixture (docs/scaling-model.md, "How often the band covers"): one table row per held-out np of
# every hold-out the fixture allows, then the counts at one and two doublings. It runs the test
# that computes them (tests/scaling/test_band_coverage.cpp), which also fails when the counts
# differ from what the output states (scaling::stated_band_coverage).
#
# usage: scripts/model-band-coverage.sh [BUILD_DIR]     (default build/; needs test_scaling)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
binary="$build/tests/test_scaling"
[[ -x $binary ]] || { echo "no $binary: build it (cmake --build $build --target test_scaling)" >&2; exit 2; }
out=$("$binary" -tc="band coverage*" -s 2>&1) || { echo "$out" >&2; exit 1; }
echo "| network fit | fitted np <= | held-out np | doublings | interval | predicted images/s [interval] | measured ± mean's half-width | inside | inside with the mean's noise |"
echo "|---|---:|---:|---:|---|---:|---:|---|---|"
grep '^|' <<<"$out"
awk -F'|' '/^\|/ { k = ($6 ~ /band/ ? "band" : "bootstrap") " at " $5+0 " doubling(s)";
                   n[k]++; if ($10 ~ /yes/) y[k]++ }
           END { for (k in n) printf "%s: %d of %d inside\n", k, y[k], n[k] }' <<<"$out" | sort
