#!/usr/bin/env bash
# The interconnect study on two emulated links (issue 24, docs/scaling-model.md "The interconnect
# study on two shaped links"): two clusters of 4 nodes (`scalebench cluster`, root), mfast at
# 200 Mbit/s and mslow at 20 Mbit/s, the levels of the factor `link` in
# experiments/interconnect-emulated.json (or -quick.json with QUICK=1); then the report by link
# with the two-way ANOVA link x np and the allreduce bandwidth, `stats` on the training runs, and
# Figure 2 (`plot --by link`). Both clusters are removed on every exit.
#
#   bash scripts/cluster/interconnect-emulated.sh [DB] [PLOT_PREFIX]
#       default DB results/interconnect-emulated.db, figure results/interconnect-emulated-by-link
#   SKIP_RUN=1 bash scripts/cluster/interconnect-emulated.sh DB   # report only
#
# SCALEBENCH_BUILD: where scalebench and scalebench-train are (default ./build). About 8 minutes
# on 2 cores (QUICK=1: about 20 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${SCALEBENCH_BUILD:-build}
sb="$build/scalebench"
name=interconnect-emulated
[[ ${QUICK:-0} == 1 ]] && name=interconnect-emulated-quick
db=${1:-results/$name.db}
plot=${2:-results/$name-by-link}
# What the experiment files' hostfiles and env point at. Only the clusters this script brought
# up are taken down: one of the same name that was already up (and made `up` fail) is not ours.
made=()
down() {
  for cluster in "${made[@]}"; do "$sb" cluster down --name "$cluster" >/dev/null 2>&1 || true; done
  made=()
}

if [[ ${SKIP_RUN:-0} != 1 ]]; then
  if [[ $(id -u) != 0 ]]; then
    echo "interconnect-emulated: skipped: the emulated clusters need root" >&2
    exit 77
  fi
  mkdir -p "$(dirname "$db")"
  trap down EXIT
  "$sb" cluster up --name mfast --nodes 4 --rate 200 --subnet 231 && made+=(mfast)
  "$sb" cluster up --name mslow --nodes 4 --rate 20 --subnet 232 && made+=(mslow)
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n), $(nproc) cores: $sb run experiments/$name.json --db $db"
  "$sb" run "experiments/$name.json" --db "$db" --quiet
  down
  trap - EXIT
fi

"$sb" report --db "$db" --experiment "$name" --by link
echo
"$sb" stats --db "$db" --experiment "$name" --factor link --factor np --only condition=train
echo
"$sb" query --db "$db" "SELECT link, np, bytes, round(avg(busbw_gbs), 5) AS busbw_gbs,
  round(min(busbw_gbs), 5) AS min, round(max(busbw_gbs), 5) AS max, count(*) AS runs
  FROM allreduce_levels WHERE status = 'ok'
    AND experiment_id = (SELECT max(id) FROM experiments WHERE name = '$name')
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
if command -v gnuplot >/dev/null 2>&1; then
  mkdir -p "$(dirname "$plot")"
  "$sb" plot --db "$db" --experiment "$name" --by link -o "$plot"
fi
