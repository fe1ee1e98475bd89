#!/usr/bin/env bash
# How often the scaling model's band covers a held-out np (docs/scaling-model.md, "How often the
# band covers"): for every hold-out a measurement allows (fitted on np <= 2, 4, ... below its
# largest np) in each of the four network fits of the docs' hold-out table, one row per held-out
# np, then the counts at one and two (or more) doublings past the fit, for the band with the
# model's error in it and for the bootstrap's interval alone.
#
# usage: scripts/model-band-coverage.sh [DB [EXPERIMENT]]
#   default: the committed fixture tests/data/db/scaling-model-holdout.db (copied first: opening
#   migrates), whose counts tests/scaling/test_band_coverage.cpp asserts. SCALEBENCH: the binary
#   (default build/scalebench). Needs jq.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=${SCALEBENCH:-$root/build/scalebench}
[[ -x $binary ]] || { echo "no $binary: build it first" >&2; exit 2; }
for tool in jq sqlite3; do command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/coverage.db"
cp "${1:-$root/tests/data/db/scaling-model-holdout.db}" "$db"
experiment=${2:-scaling-model-holdout}
# The largest np of a training run (one with epochs) of the experiment.
largest=$(sqlite3 "$db" "SELECT MAX(np) FROM runs WHERE experiment = '${experiment//\'/\'\'}'
                         AND status = 'ok' AND id IN (SELECT run_id FROM epochs)")
[[ $largest =~ ^[0-9]+$ ]] || { echo "no training runs of $experiment in the database" >&2; exit 2; }
fits=("one ring, all sizes|" "per np|--network-per-np" "per np, window x2|--network-per-np --allreduce-window 2"
      "per np, window x2, strict|--network-per-np --allreduce-window 2 --allreduce-max-np FIT")
echo "| network fit | fitted np <= | held-out np | doublings | interval | predicted images/s [interval] | measured step (ms) [t interval] | inside (with the mean's noise) |"
echo "|---|---:|---:|---:|---|---:|---:|---|"
for fit in "${fits[@]}"; do
  name=${fit%%|*}
  for ((n = 2; n < largest; n *= 2)); do
    read -r -a options <<<"${fit#*|}"
    options=("${options[@]/FIT/$n}")
    if ! "$binary" model --db "$db" --experiment "$experiment" --fit-max-np "$n" \
      --max-np "$largest" "${options[@]}" --format json >"$work/plan.json" 2>"$work/err"; then
      echo "| $name | $n | (refused: $(head -c 120 "$work/err" | tr '\n|' '  ')) | | | | | |"
      continue
    fi
    jq -r --arg name "$name" --argjson fit "$n" '
      (if .band.includes_model_error then "band" else "bootstrap" end) as $kind
      | .rows[] | select(.held_out)
      | "| \($name) | \($fit) | \(.np) | \((.np / $fit | log2 | round)) | \($kind) | "
        + "\(.images_per_second.value | round) [\(.images_per_second.interval[0] | round), "
        + "\(.images_per_second.interval[1] | round)] | \(.measured_step_seconds * 1000 * 10 | round / 10) "
        + "[\(.measured_step_interval[0] * 1000 * 10 | round / 10), \(.measured_step_interval[1] * 1000 * 10 | round / 10)] | "
        + "\(if .inside_band then "yes" else "no" end) |"' "$work/plan.json"
  done
done | tee "$work/rows"
echo
awk -F'|' '$4 !~ /refused/ { k = $6 " at " $5+0 " doubling(s)"; gsub(/ +/, " ", k); n[k]++; if ($9 ~ /yes/) y[k]++ }
           END { for (k in n) printf "%s: %d of %d inside\n", k, y[k], n[k] }' "$work/rows" | sort
