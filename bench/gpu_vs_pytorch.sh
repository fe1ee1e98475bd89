#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# scalebench-train --backend cuda against PyTorch on the same GPU, model, batch, optimizer and
# synthetic input: resnet50 at 3x224x224, 1000 classes, batch 64, and mnist_cnn at 1x28x28,
# 10 classes, batch 128; SGD momentum 0.9 at lr 0.01, one process (np=1), in each precision of
# PRECISIONS (fp32, bf16). The sides alternate within each round; medians over the rounds are
# printed, one line per model and precision:
#   MODEL precision=P scalebench=X img/s pytorch=Y img/s ratio=R        (R = X / Y)
# (pytorch=n/a img/s ratio=n/a when PyTorch cannot use the GPU: its side is skipped, said in a
# `# ` line). `# ` lines give the machine, every round's figures and whether the targets
# (resnet50 >= 1.0, mnist_cnn >= 1.5; stated for fp32 only, bf16 has none) are met.
# bf16 is --precision bf16 on both sides: scalebench casts each convolution's and dense layer's
# inputs to bf16 and keeps their outputs and every other layer fp32; PyTorch runs forward and
# loss under torch.autocast(cuda, bfloat16). Both keep fp32 parameters, gradients and optimizer.
# CUDA_GRAPH=1 (the default) also runs scalebench with --cuda-graph on (each step's input copies,
# forward, loss and backward captured once per batch size and replayed; scalebench side only, no
# extra PyTorch runs) in the same rounds, after the graph-off run, one line per model and precision:
#   MODEL precision=P cuda_graph_off=X img/s cuda_graph_on=Y img/s on/off=R      (R = Y / X)
# The headline line stays the default (graphs off); when graphs are faster and PyTorch ran, a
# `# ` line gives the ratio with graphs on. CUDA_GRAPH=0 skips these runs.
#
# scalebench's number is the median end-of-epoch images/s of epochs 2..E, as in
# trainer_vs_pytorch.sh (epoch 1 includes CUDA's start-up and cuDNN's algorithm search, made once
# per convolution shape like cudnn.benchmark). PyTorch's (bench/torch_train.py --device cuda) is
# its timed steps after warm-up steps, between two torch.cuda.synchronize() calls, with
# cudnn.benchmark = True and its TF32 defaults (convolutions may use TF32, matrix products not).
# scalebench copies every batch from its host-side data set to the GPU; PyTorch runs twice per
# round, with the batch kept on the GPU (Horovod's synthetic benchmark) and copied from host
# memory every step (--host-input); the headline ratio is against the faster of the two medians.
#
# usage: bench/gpu_vs_pytorch.sh [BUILD_DIR]
#   env: ROUNDS=5 STEPS=200 (mnist_cnn) RESNET_ROUNDS=3 RESNET_STEPS=50 EPOCHS=4 WARMUP=10
#        MODELS="resnet50 mnist_cnn" PRECISIONS="fp32 bf16" CUDA_GRAPH=1 (0: no --cuda-graph on
#        runs) THREADS=1 (host threads of either side) RUN_TIMEOUT=900 (s per run)
#        PYTHON=/usr/bin/python3
#        OVERLAP_NP=N: also run scalebench alone at np=N under mpirun (one GPU per rank) with
#        --overlap off and on, one line per model:
#          MODEL np=N precision=fp32 overlap_off=X img/s overlap_on=Y img/s on/off=R   (fp32 only)
#        FUSION_MB=M: --fusion-mb for those runs (the default 64 MiB makes mnist_cnn one bucket)
# exit: 0 done; 77 skipped: no GPU, or no cuda backend that can train (scripts/gpu/require-gpu.sh
#       says which); 1 an error (a run failed or hung: the run's last lines are printed; a
#       failed --cuda-graph on run stops only the graph runs of that model and precision).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/paths.sh" "$@"  # build, train, python, rounds
epochs=${EPOCHS:-4}
warmup=${WARMUP:-10}
threads=${THREADS:-1}
run_timeout=${RUN_TIMEOUT:-900}
models=${MODELS:-resnet50 mnist_cnn}
precisions=${PRECISIONS:-fp32 bf16}
overlap_np=${OVERLAP_NP:-}
cuda_graph=${CUDA_GRAPH:-1}
[[ $cuda_graph == 0 || $cuda_graph == 1 ]] || { echo "error: CUDA_GRAPH is 0 or 1, not '$cuda_graph'" >&2; exit 1; }
for precision in $precisions; do
  case $precision in
    fp32 | bf16) ;;
    *) echo "error: PRECISIONS: $precision is not one of fp32 bf16" >&2; exit 1 ;;
  esac
done
[[ -n ${precisions// /} ]] || { echo "error: PRECISIONS is empty (fp32, bf16 or both)" >&2; exit 1; }
# common.sh: check the trainer only; PyTorch's CPU BLAS plays no part here, a missing torch skips its side.
# shellcheck disable=SC2034
common_checks=trainer
source "$here/common.sh"
source "$here/../scripts/gpu/require-gpu.sh"
gpu_status=0
require_gpu "$train" || gpu_status=$?
if ((gpu_status == 77)); then
  echo "gpu_vs_pytorch.sh: nothing measured (exit 77: skipped)" >&2
  exit 77
fi
((gpu_status == 0)) || exit 1
cpus=$(nproc)  # before OMP_NUM_THREADS is set: GNU nproc reports that instead
export OMP_NUM_THREADS=$threads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line on the GPU, driver, CUDA and PyTorch. torch_ok=1 when torch can use the GPU.
smi="nvidia-smi not found"
if command -v nvidia-smi >/dev/null; then
  smi="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1 |
    sed 's/, / driver /') ($gpu_count listed), $(nvidia-smi | grep -o 'CUDA Version: [0-9.]*' |
    sed 's/CUDA Version: /driver CUDA /')"
fi
nvcc=/usr/local/cuda/bin/nvcc
toolkit=$([[ -x $nvcc ]] && "$nvcc" --version | grep -o 'release [0-9.]*' | sed 's/release /nvcc /' || echo "no nvcc")
torch_ok=1
torch_info=$("$python" - <<'EOF'
import sys
try:
    import torch
except Exception as e:
    print("no torch (%s)" % e)
    sys.exit(3)
v = "torch %s" % torch.__version__
if torch.version.cuda is None:
    print(v + " cuda=no (a CPU-only build)")
    sys.exit(3)
if not torch.cuda.is_available():
    print(v + " cuda=no (built for CUDA %s, but no GPU visible)" % torch.version.cuda)
    sys.exit(3)
try:
    import torchvision
    tv = "torchvision " + torchvision.__version__
except Exception:
    tv = "no torchvision"
print(v + " cuda=yes (CUDA %s, cuDNN %s, %s; %s)" % (torch.version.cuda,
      torch.backends.cudnn.version(), torch.cuda.get_device_name(0), tv))
EOF
) || torch_ok=0
echo "# $(date -Is) $(uname -n) $cpus cpus; load: $(cut -d' ' -f1-3 /proc/loadavg); epochs=$epochs warmup=$warmup threads=$threads precisions=${precisions// /,} cuda_graph=$cuda_graph"
echo "# gpu: $smi; toolkit: $toolkit; $torch_info${NVIDIA_TF32_OVERRIDE:+; NVIDIA_TF32_OVERRIDE=$NVIDIA_TF32_OVERRIDE}"
if ((torch_ok == 0)); then
  echo "# pytorch side skipped: torch.cuda is not available to $python ($torch_info); scalebench's figures only"
  echo "gpu_vs_pytorch.sh: PyTorch cannot use the GPU ($torch_info): its side is skipped" >&2
fi

# run_timed LABEL CMD...: CMD with a time limit, its output in $tmp/out; on failure says why.
run_timed() {
  local label=$1 rc=0
  shift
  timeout -k 10 "$run_timeout" "$@" >"$tmp/out" 2>&1 || rc=$?
  if ((rc == 124 || rc == 137)); then
    echo "error: $label did not finish in $run_timeout s (RUN_TIMEOUT); its last lines:" >&2
  elif ((rc != 0)); then
    echo "error: $label failed (exit $rc); its last lines:" >&2
  fi
  ((rc == 0)) || { tail -n 8 "$tmp/out" >&2; return 1; }
}

# scalebench_rate NP OVERLAP MODEL SHAPE CLASSES BATCH STEPS [OPTION...]: sets rate, the median
# end-of-epoch images/s (all ranks) of epochs 2..E; every rank trains STEPS steps of BATCH per epoch.
scalebench_rate() {
  local np=$1 overlap=$2 model=$3 shape=$4 classes=$5 b=$6 n=$7
  shift 7
  local cmd=("$train" --backend cuda --model "$model" --dataset synthetic --input-shape "$shape"
    --classes "$classes" --train-images $((np * b * n)) --test-images 0 --epochs "$epochs"
    --batch-size "$b" --optimizer momentum --lr 0.01 --threads "$threads" --overlap "$overlap" "$@")
  ((np == 1)) || cmd=(mpirun -np "$np" --bind-to none -x OMP_NUM_THREADS "${cmd[@]}")
  run_timed "scalebench-train ($model np=$np overlap=$overlap${*:+ $*})" "${cmd[@]}" || return 1
  rate=$(awk '/images\/s:/ {n++; if (n > 1) {for (i = 1; i <= NF; i++) if ($i == "images/s:") print $(i+1)}}' "$tmp/out" | median)
  if (($(grep -c 'images/s:' "$tmp/out") < 2)); then
    echo "error: scalebench-train ($model) printed fewer than 2 end-of-epoch lines (EPOCHS >= 2)" >&2
    return 1
  fi
}

# torch_rate MODEL SHAPE CLASSES BATCH STEPS PRECISION [--host-input]: sets rate.
torch_rate() {
  run_timed "PyTorch ($1 $6${7:+ $7})" "$python" "$here/torch_train.py" "$threads" --device cuda \
    --model "$1" --input "$2" --classes "$3" --batch "$4" --optimizer momentum --steps "$5" \
    --warmup "$warmup" --precision "$6" ${7:+"$7"} || return 1
  rate=$(awk '/^images\/s / {print $2}' "$tmp/out")
  [[ -n $rate ]] || { echo "error: PyTorch ($1) printed no images/s line" >&2; return 1; }
}

# compare MODEL SHAPE CLASSES BATCH STEPS ROUNDS TARGET PRECISION: the headline line for one
# model in one precision (graphs off); the target applies to fp32 only. With CUDA_GRAPH=1 each
# round also runs scalebench with --cuda-graph on, right after its graph-off run; a failed graph
# run ends the graph runs (returns 1 at the end) but not the headline's.
compare() {
  local model=$1 shape=$2 classes=$3 b=$4 n=$5 r_count=$6 target=$7 prec=$8 torch_side=$torch_ok
  if ((torch_side)) && [[ $model != mnist_cnn && $torch_info == *"no torchvision"* ]]; then
    echo "# $model: pytorch side skipped (torchvision is not installed)"
    torch_side=0
  fi
  local s_rates=() g_rates=() p_rates=() h_rates=() r graph_side=$cuda_graph graph_failed=0
  for ((r = 0; r < r_count; r++)); do
    scalebench_rate 1 off "$model" "$shape" "$classes" "$b" "$n" --precision "$prec" || return 1
    s_rates+=("$rate")
    if ((graph_side)); then
      if scalebench_rate 1 off "$model" "$shape" "$classes" "$b" "$n" --precision "$prec" --cuda-graph on &&
        { grep -qE ' cuda_graph=on( |$)' "$tmp/out" ||
          { echo "error: scalebench-train ($model --cuda-graph on): its header does not end with cuda_graph=on" >&2; false; }; }; then
        g_rates+=("$rate")
      else
        echo "# $model $prec --cuda-graph on failed in round $((r + 1)): no more graph runs for it (see stderr)"
        graph_side=0 graph_failed=1 g_rates=()
      fi
    fi
    if ((torch_side)); then
      torch_rate "$model" "$shape" "$classes" "$b" "$n" "$prec" || return 1
      p_rates+=("$rate")
      torch_rate "$model" "$shape" "$classes" "$b" "$n" "$prec" --host-input || return 1
      h_rates+=("$rate")
    fi
  done
  local s p h g=""
  s=$(printf '%s\n' "${s_rates[@]}" | median)
  echo "# $model $prec scalebench rounds: ${s_rates[*]}"
  if ((graph_side)); then
    g=$(printf '%s\n' "${g_rates[@]}" | median)
    echo "# $model $prec scalebench rounds with --cuda-graph on: ${g_rates[*]}"
  fi
  if ((torch_side == 0)); then
    printf '%s precision=%s scalebench=%.1f img/s pytorch=n/a img/s ratio=n/a\n' "$model" "$prec" "$s"
    graph_line "$model" "$prec" "$s" "$g"
    return $graph_failed
  fi
  p=$(printf '%s\n' "${p_rates[@]}" | median)
  h=$(printf '%s\n' "${h_rates[@]}" | median)
  echo "# $model $prec pytorch rounds (batch kept on the GPU): ${p_rates[*]}; median $p"
  echo "# $model $prec pytorch rounds (batch copied from host memory every step): ${h_rates[*]}; median $h"
  awk -v m="$model" -v s="$s" -v p="$p" -v h="$h" -v t="$target" -v pr="$prec" 'BEGIN {
    best = (h > p ? h : p)
    printf "%s precision=%s scalebench=%.1f img/s pytorch=%.1f img/s ratio=%.2f\n", m, pr, s, best, s / best
    if (pr == "fp32")
      printf "# %s target ratio >= %s: %s\n", m, t, (s / best >= t ? "met" : "NOT met")
    else
      printf "# %s precision=%s: no target (the targets are stated for fp32)\n", m, pr
  }'
  graph_line "$model" "$prec" "$s" "$g" "$p" "$h" "$target"
  return $graph_failed
}

# graph_line MODEL PRECISION OFF ON [PYTORCH PYTORCH_HOST TARGET]: the --cuda-graph line (nothing
# when ON is empty); with PyTorch's medians, and graphs faster, a `# ` line with the ratio they give.
graph_line() {
  [[ -n $4 ]] || return 0
  awk -v m="$1" -v pr="$2" -v a="$3" -v b="$4" -v p="${5:-}" -v h="${6:-}" -v t="${7:-}" 'BEGIN {
    printf "%s precision=%s cuda_graph_off=%.1f img/s cuda_graph_on=%.1f img/s on/off=%.3f\n", m, pr, a, b, b / a
    if (p == "" || b <= a) exit
    best = (h > p ? h : p)
    printf "# %s precision=%s with --cuda-graph on: scalebench=%.1f img/s pytorch=%.1f img/s ratio=%.2f", m, pr, b, best, b / best
    if (pr == "fp32") printf " (target >= %s: %s)", t, (b / best >= t ? "met" : "NOT met")
    printf "\n"
  }'
}

# overlap_compare MODEL SHAPE CLASSES BATCH STEPS ROUNDS NP: scalebench alone, --overlap off/on.
overlap_compare() {
  local model=$1 shape=$2 classes=$3 b=$4 n=$5 r_count=$6 np=$7
  if [[ -n $gpu_count ]] && ((np > gpu_count)); then
    echo "# $model overlap at np=$np skipped: one GPU per rank (NCCL refuses two ranks on one GPU), and nvidia-smi lists $gpu_count"
    return 0
  fi
  local off_rates=() on_rates=() r fusion=(${FUSION_MB:+--fusion-mb "$FUSION_MB"})
  for ((r = 0; r < r_count; r++)); do
    scalebench_rate "$np" off "$model" "$shape" "$classes" "$b" "$n" "${fusion[@]}" || return 1
    off_rates+=("$rate")
    scalebench_rate "$np" on "$model" "$shape" "$classes" "$b" "$n" "${fusion[@]}" || return 1
    on_rates+=("$rate")
  done
  local off on
  off=$(printf '%s\n' "${off_rates[@]}" | median)
  on=$(printf '%s\n' "${on_rates[@]}" | median)
  echo "# $model np=$np scalebench rounds, overlap off: ${off_rates[*]}; on: ${on_rates[*]}${FUSION_MB:+ (fusion-mb $FUSION_MB)}"
  awk -v m="$model" -v np="$np" -v a="$off" -v b="$on" 'BEGIN {
    printf "%s np=%d precision=fp32 overlap_off=%.1f img/s overlap_on=%.1f img/s on/off=%.3f\n", m, np, a, b, b / a }'
}

if [[ -n $overlap_np ]]; then
  ((overlap_np > 1)) || echo "# OVERLAP_NP=$overlap_np: with one rank there is no allreduce to overlap; the lines show only the bookkeeping's cost"
  if ((overlap_np > 1)) && ! command -v mpirun >/dev/null; then
    echo "error: OVERLAP_NP=$overlap_np needs mpirun (apt-get install openmpi-bin)" >&2
    exit 1
  fi
  if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
fi

failed=0
for model in $models; do
  case $model in
    resnet50) args=(3x224x224 1000 64 "${RESNET_STEPS:-50}" "${RESNET_ROUNDS:-3}") target=1.0 ;;
    mnist_cnn) args=(1x28x28 10 128 "${STEPS:-200}" "${ROUNDS:-5}") target=1.5 ;;
    *) echo "error: MODELS: $model is not one of resnet50 mnist_cnn" >&2; failed=1; continue ;;
  esac
  for precision in $precisions; do
    compare "$model" "${args[@]}" "$target" "$precision" || failed=1
  done
  if [[ -n $overlap_np ]]; then overlap_compare "$model" "${args[@]}" "$overlap_np" || failed=1; fi
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
