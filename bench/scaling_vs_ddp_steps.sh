#!/usr/bin/env bash
# Data-parallel scaling of scalebench-train (MPI allreduce in fusion buckets) against PyTorch
# DistributedDataParallel (gloo), in the same run: mnist_cnn, batch 128 per rank, synthetic
# 1x28x28, Adadelta, one thread per rank, np=1 and np=2. Throughput is the images/s of all ranks
# together; scaling = throughput(np=2) / throughput(np=1). Within each round every configuration
# runs once, one after the other (the machine is noisy); medians over rounds are printed. The last
# line is
#   scaling np=2 scalebench=S pytorch_ddp=P
# and `# ` lines before it give the metadata, every round's figures and the extra scalebench
# configurations (the binding, overlap on/off, a small fusion buffer), PyTorch with a tuned malloc,
# and the ceiling: two independent scalebench np=1 processes at once, no communication.
#
# scalebench's throughput is the median end-of-epoch images/s (train_images of all ranks /
# epoch_seconds) of epochs 2..E (epoch 1 creates the primitives); np=1 is a plain process, np=2
# runs under mpirun with the trainer's defaults (--fusion-mb 64 --overlap off). PyTorch's is
# bench/torch_ddp.py: images of all processes over the timed steps between two barriers, after
# warm-up steps; np=1 is a plain process without DDP.
#
# PyTorch's headline runs on glibc's default malloc, as people run it. Its activations (up to
# 11 MB) are then mmap'd and unmapped every step, and page faults make its steps vary between
# about 100 and 390 ms; the torch-malloc extra keeps them in the heap (MALLOC_MMAP_THRESHOLD_ and
# friends), which measured 97 ms steady. Both are printed.
#
# usage: bench/scaling_vs_ddp_steps.sh [BUILD_DIR]  (the step-level bench behind bench/scaling_vs_ddp.sh)
#   env: ROUNDS=5 STEPS=20 EPOCHS=3 BIND=none (mpirun --bind-to for the headline scalebench np=2)
#        EXTRA="bind-core overlap-on fusion1-on fusion1-off torch-malloc independent" (extras;
#        EXTRA= for none) PYTHON=/usr/bin/python3
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/paths.sh" "$@"  # build, train, python, rounds
steps=${STEPS:-20}
epochs=${EPOCHS:-3}
bind=${BIND:-none}
extra=${EXTRA-bind-core overlap-on fusion1-on fusion1-off torch-malloc independent}
batch=128
command -v mpirun >/dev/null || { echo "error: mpirun not found (apt-get install openmpi-bin)" >&2; exit 1; }
"$python" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "error: $python has no torch with gloo; install python3-torch" >&2; exit 1; }
source "$here/common.sh"
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
cpus=$(nproc)  # before OMP_NUM_THREADS is set: GNU nproc reports that instead
export OMP_NUM_THREADS=1


# Median end-of-epoch images/s of epochs 2..E from scalebench-train's stdout.
epoch_rate() {
  awk '/images\/s:/ {n++; if (n > 1) {for (i = 1; i <= NF; i++) if ($i == "images/s:") print $(i+1)}}' | median
}

# scalebench NP BIND [trainer options...]: every rank trains `steps` steps of `batch` per epoch.
scalebench() {
  local np=$1 bind_to=$2
  shift 2
  local args=(--model mnist_cnn --dataset synthetic --input-shape 1x28x28
    --train-images $((np * batch * steps)) --test-images 0 --epochs "$epochs" --batch-size $batch
    --optimizer adadelta --lr 1.0 --threads 1 "$@")
  if ((np == 1)); then
    "$train" "${args[@]}" | epoch_rate
  else
    mpirun -np "$np" --bind-to "$bind_to" -x OMP_NUM_THREADS "$train" "${args[@]}" | epoch_rate
  fi
}

pytorch() {  # NP
  "$python" "$here/torch_ddp.py" "$1" --batch $batch --steps "$steps" | awk '{print $2}'
}

# Two np=1 processes at the same time, each on its own data: the sum of their images/s is what
# np=2 could reach without any communication or waiting for the slower rank.
independent() {
  local a b
  a=$(mktemp) b=$(mktemp)
  scalebench 1 none >"$a" &
  scalebench 1 none --seed 2 >"$b" &
  wait
  echo "$(cat "$a") $(cat "$b")" | awk '{print $1 + $2}'
  rm -f "$a" "$b"
}

# glibc keeps freed blocks in the heap instead of returning them to the kernel.
pytorch_malloc() {  # NP
  MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=536870912 \
    pytorch "$1"
}

# The extra scalebench configurations: name -> scalebench np=2 arguments.
extra_args() {
  case $1 in
    bind-core) echo "core" ;;
    overlap-on) echo "$bind --overlap on" ;;
    fusion1-on) echo "$bind --fusion-mb 1 --overlap on" ;;
    fusion1-off) echo "$bind --fusion-mb 1 --overlap off" ;;
    *) echo "error: unknown EXTRA configuration '$1'" >&2; exit 1 ;;
  esac
}
for e in $extra; do [[ $e == torch-malloc || $e == independent ]] || extra_args "$e" >/dev/null; done

echo "# $(date -Is) $(uname -n) $cpus cpus; load: $(cut -d' ' -f1-3 /proc/loadavg); rounds=$rounds batch=$batch steps=$steps epochs=$epochs bind=$bind"
declare -A rates
for ((r = 0; r < rounds; r++)); do
  rates[s1]+="$(scalebench 1 none) "
  rates[s2]+="$(scalebench 2 "$bind") "
  rates[p1]+="$(pytorch 1) "
  rates[p2]+="$(pytorch 2) "
  for e in $extra; do
    if [[ $e == torch-malloc ]]; then
      rates[m1]+="$(pytorch_malloc 1) "
      rates[m2]+="$(pytorch_malloc 2) "
    elif [[ $e == independent ]]; then
      rates[$e]+="$(independent) "
    else
      # shellcheck disable=SC2046  # the arguments are words on purpose
      rates[$e]+="$(scalebench 2 $(extra_args "$e")) "
    fi
  done
  echo "# round $((r + 1)): load $(cut -d' ' -f1 /proc/loadavg)"
done

med() { printf '%s\n' ${rates[$1]} | median; }
s1=$(med s1) s2=$(med s2) p1=$(med p1) p2=$(med p2)
echo "# scalebench np=1 images/s: ${rates[s1]}-> median $s1"
echo "# scalebench np=2 (bind-to $bind, fusion_mb=64, overlap=off) images/s: ${rates[s2]}-> median $s2"
echo "# pytorch np=1 (no DDP) images/s: ${rates[p1]}-> median $p1"
echo "# pytorch_ddp np=2 (gloo) images/s: ${rates[p2]}-> median $p2"
for e in $extra; do
  if [[ $e == torch-malloc ]]; then
    m1=$(med m1) m2=$(med m2)
    echo "# pytorch np=1 (no DDP, tuned malloc) images/s: ${rates[m1]}-> median $m1"
    echo "# pytorch_ddp np=2 (gloo, tuned malloc) images/s: ${rates[m2]}-> median $m2"
    awk -v a="$m1" -v b="$m2" 'BEGIN {printf "# pytorch_ddp with tuned malloc: scaling %.3f\n", b / a}'
    continue
  fi
  if [[ $e == independent ]]; then
    m=$(med "$e")
    awk -v r="${rates[$e]}" -v m="$m" -v s1="$s1" \
      'BEGIN {printf "# ceiling: two independent scalebench np=1 processes at once, images/s summed: %s-> median %s, scaling %.3f\n", r, m, m / s1}'
    continue
  fi
  m=$(med "$e")
  awk -v e="$e" -v a="$(extra_args "$e")" -v r="${rates[$e]}" -v m="$m" -v s1="$s1" -v s2="$s2" \
    'BEGIN {printf "# scalebench np=2 %s (--bind-to %s) images/s: %s-> median %s, scaling %.3f, vs headline np=2 %+.1f%%\n", e, a, r, m, m / s1, 100 * (m / s2 - 1)}'
done
# Scaling within each round (np=2 and np=1 measured minutes apart), then the median: less
# sensitive to load that changes between rounds than the ratio of medians.
paired() { paste <(printf '%s\n' ${rates[$2]}) <(printf '%s\n' ${rates[$1]}) | awk '{print $1 / $2}' | median; }
printf '# median of per-round scaling: scalebench %.3f pytorch_ddp %.3f\n' "$(paired s1 s2)" "$(paired p1 p2)"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v s1="$s1" -v s2="$s2" -v p1="$p1" -v p2="$p2" \
  'BEGIN {printf "scaling np=2 scalebench=%.3f pytorch_ddp=%.3f\n", s2 / s1, p2 / p1}'
