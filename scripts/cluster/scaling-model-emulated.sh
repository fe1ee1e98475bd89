#!/usr/bin/env bash
# The scaling model against ground truth (issue 24, docs/scaling-model.md "Against shaped links"):
# eight emulated nodes on 100 Mbit/s links (`scalebench cluster`, root), one rank per node, training
# with an emulated accelerator at np 1, 2, 4, 8 and the allreduce benchmark at np 2, 4, 8
# (experiments/scaling-model-emulated.json); then `scalebench model` fitted on the small node
# counts predicts the held-out ones, and the table compares the fitted link with the shaped one
# and the predicted step and efficiency with the measured ones. The cluster is removed on every
# exit.
#
#   bash scripts/cluster/scaling-model-emulated.sh [DB]     # default results/scaling-model-emulated.db
#   SKIP_RUN=1 bash scripts/cluster/scaling-model-emulated.sh DB   # refit and print only
#   EXPERIMENT=scaling-model-emulated-ring ...   # Open MPI's allreduce forced to the ring
#   EXPERIMENT=scaling-model-emulated-tuned ...  # the ring, and messages up to 4 MiB sent eagerly
#
# SCALEBENCH_BUILD: where scalebench and scalebench-train are (default ./build). About 5 minutes
# on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${SCALEBENCH_BUILD:-build}
sb="$build/scalebench"
db=${1:-results/${EXPERIMENT:-scaling-model-emulated}.db}
name_of_experiment=${EXPERIMENT:-scaling-model-emulated}
experiment=experiments/$name_of_experiment.json
# What the experiment file's hostfile and env point at.
name=mscale
subnet=230
nodes=8
rate=100

if [[ ${SKIP_RUN:-0} != 1 ]]; then
  if [[ $(id -u) != 0 ]]; then
    echo "scaling-model-emulated: skipped: the emulated cluster needs root" >&2
    exit 77
  fi
  mkdir -p "$(dirname "$db")"
  # The trap only once `up` succeeded: a cluster of this name that was already up is not ours.
  "$sb" cluster up --name "$name" --nodes "$nodes" --rate "$rate" --subnet "$subnet"
  trap '"$sb" cluster down --name "$name" >/dev/null 2>&1 || true' EXIT
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n), $(nproc) cores: $sb run $experiment --db $db"
  "$sb" run "$experiment" --db "$db" --quiet
  "$sb" cluster down --name "$name"
  trap - EXIT
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The network is fitted on the benchmark's sizes within x4 of the 1.08 MB gradient
# (--allreduce-window 4: 1 and 4 MiB): smaller messages fit in the token bucket's burst (4 ms at
# the rate, 50 kB at 100 Mbit/s) and cross the link faster than its rate, which is not what a
# step's allreduce sees. Strict: fitted on np <= 2 (or 4), the network too. "all np": the
# allreduce benchmark at every np, one link per np (an nccl-tests run of the target machine).
# "all sizes": the default fit over 16 B to 4 MiB, to show what the burst does to it.
fits=(
  "strict2|--fit-max-np 2 --allreduce-max-np 2 --allreduce-window 4"
  "strict4|--fit-max-np 4 --allreduce-max-np 4 --allreduce-window 4"
  "pernp2|--fit-max-np 2 --allreduce-window 4 --network-per-np"
  "sizes2|--fit-max-np 2 --allreduce-max-np 2"
)
for fit in "${fits[@]}"; do
  # shellcheck disable=SC2086 # the options are words
  "$sb" model --db "$db" --experiment "$name_of_experiment" ${fit#*|} --max-np 8 --format json \
    >"$tmp/${fit%%|*}.json"
done
# The latest instance, as `scalebench model` takes it.
latest="(SELECT max(id) FROM experiments WHERE name = '$name_of_experiment')"
"$sb" query --db "$db" --csv "SELECT run_id, np, avg(duration_seconds) AS epoch FROM epoch_times
  WHERE experiment_id = $latest AND condition = 'train' AND status = 'ok'
    AND epoch > 1 GROUP BY run_id" >"$tmp/runs.csv"
"$sb" query --db "$db" --csv "SELECT np, bytes, avg(busbw_gbs) AS busbw, min(busbw_gbs) AS lo,
  max(busbw_gbs) AS hi, count(*) AS runs FROM allreduce_times
  WHERE experiment_id = $latest AND status = 'ok'
  GROUP BY np, bytes ORDER BY np, bytes" >"$tmp/busbw.csv"

python3 - "$tmp" "$rate" <<'EOF'
import csv, json, statistics, sys
tmp, rate = sys.argv[1], float(sys.argv[2])
configured = rate / 8 / 1000  # GB/s
ceiling = configured * 1448 / 1514  # TCP payload over 1500-byte frames

def load(path):
    with open(path) as f:
        return json.load(f)

def param(model, name):
    for p in model["parameters"]:
        if p["name"] == name:
            return p["estimate"]
    return None

def ci(est, scale=1.0, fmt="{:.3g}"):
    text = fmt.format(est["value"] * scale)
    if "interval" in est:
        lo, hi = est["interval"]
        text += " [" + fmt.format(lo * scale) + ", " + fmt.format(hi * scale) + "]"
    return text

# Per-run steps: each run's mean epoch after the first, over the steps of an epoch.
epochs = {}
with open(f"{tmp}/runs.csv", newline="") as f:
    for row in csv.DictReader(f):
        epochs.setdefault(int(row["np"]), []).append(float(row["epoch"]))

print("## Fitted against configured link (--rate %g Mbit/s, no delay emulated)\n" % rate)
print(f"| fit | bandwidth B (GB/s) [95% CI] | of configured {configured:.4f} GB/s | of TCP ceiling {ceiling:.4f} GB/s | latency alpha (us) [95% CI] | allreduce fit |")
print("|---|---:|---:|---:|---:|---|")
for label, key in [("np <= 2 (strict), sizes 1-4 MiB", "strict2"),
                   ("np <= 4 (strict), sizes 1-4 MiB", "strict4"),
                   ("np <= 2 (strict), all sizes 16 B-4 MiB", "sizes2")]:
    m = load(f"{tmp}/{key}.json")
    b, a = param(m, "bandwidth"), param(m, "latency")
    note = next((n for n in m["notes"] if n.startswith("Allreduce fit")), "")
    note = note.split(" (")[0]
    print(f"| {label} | {ci(b, 1, '{:.4f}')} | {b['value'] / configured:.1%} | {b['value'] / ceiling:.1%} | {ci(a, 1, '{:.0f}')} | {note} |")
m = load(f"{tmp}/pernp2.json")
for p in m["parameters"]:
    if p["name"].startswith("bandwidth at np="):
        n = p["name"].split("=")[1]
        b = p["estimate"]
        a = param(m, "latency at np=" + n)
        print(f"| np = {n} alone, sizes 1-4 MiB | {ci(b, 1, '{:.4f}')} | {b['value'] / configured:.1%} | {b['value'] / ceiling:.1%} | {ci(a, 1, '{:.0f}')} | |")

print("\n## Allreduce benchmark: busbw (GB/s), mean [min, max] over runs\n")
rows = {}
with open(f"{tmp}/busbw.csv", newline="") as f:
    for row in csv.DictReader(f):
        rows.setdefault(int(row["bytes"]), {})[int(row["np"])] = row
nps = sorted({n for r in rows.values() for n in r})
print("| bytes | " + " | ".join(f"np {n}" for n in nps) + " |")
print("|---:|" + "---:|" * len(nps))
for size in sorted(rows):
    cells = []
    for n in nps:
        r = rows[size].get(n)
        cells.append("" if r is None else f"{float(r['busbw']):.4f} [{float(r['lo']):.4f}, {float(r['hi']):.4f}]")
    print(f"| {size} | " + " | ".join(cells) + " |")

for key, title in [("strict2", "fitted on np <= 2 (the network too, sizes 1-4 MiB)"),
                   ("strict4", "fitted on np <= 4 (the network too, sizes 1-4 MiB)"),
                   ("pernp2", "fitted on np <= 2, the network per np from the benchmark at every np"),
                   ("sizes2", "fitted on np <= 2 (the network too, all sizes)")]:
    m = load(f"{tmp}/{key}.json")
    print(f"\n## Predicted against measured, {title}\n")
    print("compute {} ms, overhead {} ms, overlap {}\n".format(
        ci(param(m, "compute"), 1, "{:.1f}"), ci(param(m, "overhead"), 1, "{:.1f}"),
        ci(param(m, "overlap"), 1, "{:.2f}")))
    print("| np | measured step (ms), mean [min, max] (runs) | predicted step (ms) [95% band] | step error | measured efficiency | predicted efficiency | difference (points) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in m["rows"]:
        if r.get("measured_step_seconds") is None:
            continue
        n = r["np"]
        runs = epochs.get(n, [])
        mean_step = r["measured_step_seconds"]
        per_step = mean_step / statistics.mean(runs) if runs else 0
        steps = [e * per_step * 1000 for e in runs]
        measured = f"{mean_step * 1000:.1f} [{min(steps):.1f}, {max(steps):.1f}] ({len(steps)})"
        label = f"{n} (held out)" if r["held_out"] else f"{n}"
        pe, me = r["efficiency"]["value"], r["measured_efficiency"]
        print(f"| {label} | {measured} | {ci(r['step_seconds'], 1000, '{:.1f}')} | {r['step_error']:+.1%} | {me:.1%} | {ci(r['efficiency'], 100, '{:.1f}')} % | {(pe - me) * 100:+.1f} |")
EOF
