#!/usr/bin/env bash
# Two builds of scalebench-train on the same training run, alternating A B A B (the machine is
# shared), compared by CPU seconds per step as well as wall seconds (bench/epoch_cpu.py): a
# change in the trainer's work shows in both, other people's load mostly in the wall time only.
# Also checks that both print the same losses (a speed change must not change the numbers).
#   A=before B=after MODEL threads=T cpu_s/step A=X B=Y B/A=R wall_s/step A=X B=Y B/A=R
# per-step figures: medians over the rounds' epochs 2..EPOCHS (epoch 1 creates the primitives and
# first touches the memory).
#
# usage: bench/trainer_ab.sh TRAINER_A TRAINER_B
#   env: MODEL=resnet50 SHAPE=3x224x224 CLASSES=1000 BATCH=32 OPTIMIZER=momentum LR=0.01
#        STEPS=1 (per epoch) EPOCHS=4 ROUNDS=3 THREADS="1 2"
# e.g. a build of an older commit:
#   git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEBENCH_TESTS=OFF -DSCALEBENCH_CUDA=OFF &&
#   cmake --build /tmp/old/build --target scalebench-train &&
#   bench/trainer_ab.sh /tmp/old/build/scalebench-train build/scalebench-train
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
(($# == 2)) || { sed -n '2,17p' "$0" >&2; exit 2; }
a=$1 b=$2
model=${MODEL:-resnet50} shape=${SHAPE:-3x224x224} classes=${CLASSES:-1000} batch=${BATCH:-32}
optimizer=${OPTIMIZER:-momentum} lr=${LR:-0.01} steps=${STEPS:-1} epochs=${EPOCHS:-4}
rounds=${ROUNDS:-3}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
args=(--model "$model" --dataset synthetic --input-shape "$shape" --classes "$classes"
  --train-images $((batch * steps)) --test-images 0 --batch-size "$batch"
  --optimizer "$optimizer" --lr "$lr")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $(date -Is) $(uname -n) $(nproc) cpus; load: $(cut -d' ' -f1-3 /proc/loadavg); rounds=$rounds"
echo "# A=$a"
echo "# B=$b"
for side in a b; do
  trainer=${!side}
  OMP_NUM_THREADS=1 "$trainer" "${args[@]}" --epochs 2 --threads 1 | grep -o 'loss: [0-9.]*' >"$tmp/loss.$side"
done
if cmp -s "$tmp/loss.a" "$tmp/loss.b"; then
  echo "# same losses: $(tr '\n' ' ' <"$tmp/loss.a")"
else
  echo "# LOSSES DIFFER: A $(tr '\n' ' ' <"$tmp/loss.a")B $(tr '\n' ' ' <"$tmp/loss.b")"
fi
for t in ${THREADS:-1 2}; do
  for ((r = 0; r < rounds; r++)); do
    for side in a b; do
      trainer=${!side}
      line=$(OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$t "$here/epoch_cpu.py" "$trainer" \
        "${args[@]}" --epochs "$epochs" --threads "$t")
      echo "# threads=$t round=$r $side: $line (cpu/wall s per epoch; load $(cut -d' ' -f1 /proc/loadavg))"
      # Epochs 2.. only, per step.
      tr ' ' '\n' <<<"$line" | tail -n +2 | awk -F/ -v s="$steps" '{print $1 / s}' >>"$tmp/cpu.$t.$side"
      tr ' ' '\n' <<<"$line" | tail -n +2 | awk -F/ -v s="$steps" '{print $2 / s}' >>"$tmp/wall.$t.$side"
    done
  done
  ca=$(median <"$tmp/cpu.$t.a") cb=$(median <"$tmp/cpu.$t.b")
  wa=$(median <"$tmp/wall.$t.a") wb=$(median <"$tmp/wall.$t.b")
  awk -v m="$model" -v t="$t" -v ca="$ca" -v cb="$cb" -v wa="$wa" -v wb="$wb" 'BEGIN {
    printf "%s threads=%s cpu_s/step A=%.3f B=%.3f B/A=%.3f wall_s/step A=%.3f B=%.3f B/A=%.3f\n",
      m, t, ca, cb, cb / ca, wa, wb, wb / wa}'
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
