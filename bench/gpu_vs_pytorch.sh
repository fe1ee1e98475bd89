#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# scalebench-train --backend cuda against PyTorch's best on the same GPU, model, batch, optimizer
# and synthetic input, in each precision of PRECISIONS (fp32, bf16); SGD momentum 0.9 at lr 0.01,
# one process (np=1). Rows (scalebench-train's zoo inputs, trainer/model/zoo.cpp):
#   resnet50 3x224x224 at each batch of RESNET_BATCHES (64 256), mnist_cnn 1x28x28 (10 classes)
#   at 128, and mobilenet_v2 3x224x224, inception_v3 3x299x299, vgg16 3x224x224 at 64 (1000
#   classes). The sides alternate within each round; medians over the rounds. One line per row:
#   MODEL precision=P batch=B scalebench=X img/s pytorch_best=Y img/s ratio=R mfu=M%
# Y is the faster of PyTorch's NCHW and channels-last runs, both with the batch kept on the GPU;
# R = X / Y; M = training FLOPs per image x X / the card's dense peak for P (TF32 for fp32: both
# sides run fp32 convolutions on TF32 tensor cores; bench/gpu_headline.sh has the table and its
# sources; a card not in it gives mfu=n/a, said in a `# ` line). FLOPs per image: bench/
# model_flops.py run here when it can (PyTorch's FlopCounterMode), else the committed
# bench/model_flops.txt; a `# ` line says which. pytorch_best=n/a ratio=n/a when PyTorch cannot
# use the GPU (its side skipped, said in a `# ` line). `# ` lines give the machine, every round's
# figures (PyTorch's NCHW, channels-last and, with HOST_INPUT=1, batch copied from host memory
# every step, as scalebench does) and whether each row's target is met (bench/gpu_headline.sh
# target_for: resnet50 >= 1.0 in bf16 at 64 and 256 and in fp32 at 64; mnist_cnn >= 1.5 fp32,
# >= 1.0 bf16; other rows none).
# bf16 is --precision bf16 on both sides: scalebench casts each convolution's and dense layer's
# inputs to bf16 and keeps their outputs and every other layer fp32; PyTorch runs forward and
# loss under torch.autocast(cuda, bfloat16). Both keep fp32 parameters, gradients and optimizer.
# CUDA_GRAPH=1 (the default) also runs scalebench with --cuda-graph on for the models of
# CUDA_GRAPH_MODELS (each step's input copies, forward, loss and backward captured once per batch
# size and replayed; scalebench side only) in the same rounds, after the graph-off run:
#   MODEL precision=P batch=B cuda_graph_off=X img/s cuda_graph_on=Y img/s on/off=R  (R = Y / X)
# The headline stays graphs off; when graphs are faster and PyTorch ran, a `# ` line gives the
# ratio with graphs on. CUDA_GRAPH=0 skips these runs.
#
# scalebench's number is the median end-of-epoch images/s of epochs 2..E, as in
# trainer_vs_pytorch.sh (epoch 1 includes CUDA's start-up and cuDNN's algorithm search, made once
# per convolution shape like cudnn.benchmark). PyTorch's (bench/torch_train.py --device cuda
# --variants ..., one process per round for all its set-ups) is its timed steps after warm-up
# steps, between two torch.cuda.synchronize() calls, with cudnn.benchmark = True and its TF32
# defaults (convolutions may use TF32, matrix products not). scalebench copies every batch from
# its host-side data set to the GPU; the headline takes PyTorch's faster batch-on-GPU figure.
#
# usage: bench/gpu_vs_pytorch.sh [BUILD_DIR]
#   env: ROUNDS=5 STEPS=200 (mnist_cnn) RESNET_ROUNDS=3 RESNET_STEPS=50 (the ImageNet models:
#        steps per epoch at batch 64, scaled to the same images at other batches, halved for
#        vgg16, at least 8) RESNET_BATCHES="64 256" EPOCHS=4 WARMUP=10
#        MODELS="resnet50 mnist_cnn mobilenet_v2 inception_v3 vgg16" PRECISIONS="fp32 bf16"
#        CUDA_GRAPH=1 (0: no --cuda-graph on runs) CUDA_GRAPH_MODELS="resnet50 mnist_cnn"
#        HOST_INPUT=1 (0: no PyTorch host-input runs) THREADS=1 (host threads of either side)
#        RUN_TIMEOUT=900 (s per run) FLOPS_TIMEOUT=120 PYTHON=/usr/bin/python3
#        TRAIN_ARGS="...": more scalebench-train options for all its runs (word-split), e.g.
#        "--memory-format channels_last"; TRAIN_ARGS_BF16="...": more for its bf16 runs only,
#        e.g. "--activation-type bf16"
#        OVERLAP_NP=N: also run scalebench alone at np=N under mpirun (one GPU per rank) with
#        --overlap off and on, one line per model (at its first batch):
#          MODEL np=N precision=fp32 overlap_off=X img/s overlap_on=Y img/s on/off=R   (fp32 only)
#        FUSION_MB=M: --fusion-mb for those runs (the default 64 MiB makes mnist_cnn one bucket)
# exit: 0 done; 77 skipped: no GPU, or no cuda backend that can train (scripts/gpu/require-gpu.sh
#       says which); 1 an error (a run failed or hung: the run's last lines are printed; a
#       failed --cuda-graph on run stops only the graph runs of that row and precision).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/paths.sh" "$@"  # build, train, python, rounds
source "$here/gpu_headline.sh"
epochs=${EPOCHS:-4}
warmup=${WARMUP:-10}
threads=${THREADS:-1}
run_timeout=${RUN_TIMEOUT:-900}
models=${MODELS:-resnet50 mnist_cnn mobilenet_v2 inception_v3 vgg16}
precisions=${PRECISIONS:-fp32 bf16}
overlap_np=${OVERLAP_NP:-}
cuda_graph=${CUDA_GRAPH:-1}
graph_models=${CUDA_GRAPH_MODELS:-resnet50 mnist_cnn}
host_input=${HOST_INPUT:-1}
resnet_batches=${RESNET_BATCHES:-64 256}
[[ $cuda_graph == 0 || $cuda_graph == 1 ]] || { echo "error: CUDA_GRAPH is 0 or 1, not '$cuda_graph'" >&2; exit 1; }
[[ $host_input == 0 || $host_input == 1 ]] || { echo "error: HOST_INPUT is 0 or 1, not '$host_input'" >&2; exit 1; }
for precision in $precisions; do
  case $precision in
    fp32 | bf16) ;;
    *) echo "error: PRECISIONS: $precision is not one of fp32 bf16" >&2; exit 1 ;;
  esac
done
[[ -n ${precisions// /} ]] || { echo "error: PRECISIONS is empty (fp32, bf16 or both)" >&2; exit 1; }
for model in $models; do
  case $model in
    resnet50 | mnist_cnn | mobilenet_v2 | inception_v3 | vgg16) ;;
    *) echo "error: MODELS: $model is not one of resnet50 mnist_cnn mobilenet_v2 inception_v3 vgg16" >&2; exit 1 ;;
  esac
done
for b in $resnet_batches; do
  [[ $b =~ ^[1-9][0-9]*$ ]] || { echo "error: RESNET_BATCHES: '$b' is not a batch size" >&2; exit 1; }
done
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
smi="nvidia-smi not found" gpu_name=""
if command -v nvidia-smi >/dev/null; then
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)
  smi="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1 |
    sed 's/, / driver /') ($gpu_count listed), $(nvidia-smi | grep -o 'CUDA Version: [0-9.]*' |
    sed 's/CUDA Version: /driver CUDA /')"
fi
nvcc=/usr/local/cuda/bin/nvcc
toolkit=$([[ -x $nvcc ]] && "$nvcc" --version | grep -o 'release [0-9.]*' | sed 's/release /nvcc /' || echo "no nvcc")
torch_ok=1
torch_info=$("$python" - <<'PY'
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
PY
) || torch_ok=0
echo "# $(date -Is) $(uname -n) $cpus cpus; load: $(cut -d' ' -f1-3 /proc/loadavg); epochs=$epochs warmup=$warmup threads=$threads precisions=${precisions// /,} cuda_graph=$cuda_graph host_input=$host_input"
echo "# gpu: $smi; toolkit: $toolkit; $torch_info${NVIDIA_TF32_OVERRIDE:+; NVIDIA_TF32_OVERRIDE=$NVIDIA_TF32_OVERRIDE}"
if ((torch_ok == 0)); then
  echo "# pytorch side skipped: torch.cuda is not available to $python ($torch_info); scalebench's figures only"
  echo "gpu_vs_pytorch.sh: PyTorch cannot use the GPU ($torch_info): its side is skipped" >&2
fi
gpu_peak "$gpu_name"
if [[ -n $peak_card ]]; then
  echo "# peak (dense, NVIDIA's datasheet; bench/gpu_headline.sh): $peak_card: $peak_bf16 TFLOP/s bf16, $peak_tf32 TFLOP/s TF32 (the fp32 rows' mfu)"
else
  echo "# peak: '${gpu_name:-no GPU name from nvidia-smi}' is not in bench/gpu_headline.sh's table: mfu=n/a"
fi
# Training FLOPs per image: counted here by PyTorch when it can, else the committed table.
flops_file=$tmp/flops
# shellcheck disable=SC2086
if OMP_NUM_THREADS=$cpus timeout -k 5 "${FLOPS_TIMEOUT:-120}" "$python" "$here/model_flops.py" $models >"$flops_file" 2>"$tmp/flops.err"; then
  echo "# flops per image: bench/model_flops.py on this machine ($(awk '{print $NF}' "$flops_file" | sort -u | paste -sd, -)); $(awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $4}' "$flops_file")"
else
  echo "# flops per image: bench/model_flops.txt, committed (bench/model_flops.py failed here: $(tail -n1 "$tmp/flops.err"))"
  flops_file=$here/model_flops.txt
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
  # TRAIN_ARGS: more scalebench-train options for every run (e.g. --memory-format channels_last);
  # TRAIN_ARGS_BF16: more for the bf16 runs only (e.g. --activation-type bf16).
  # shellcheck disable=SC2206
  [[ -z ${TRAIN_ARGS:-} ]] || cmd+=($TRAIN_ARGS)
  # shellcheck disable=SC2206
  [[ -z ${TRAIN_ARGS_BF16:-} || " $* " != *" --precision bf16 "* ]] || cmd+=($TRAIN_ARGS_BF16)
  ((np == 1)) || cmd=(mpirun -np "$np" --bind-to none -x OMP_NUM_THREADS "${cmd[@]}")
  run_timed "scalebench-train ($model batch=$b np=$np overlap=$overlap${*:+ $*})" "${cmd[@]}" || return 1
  rate=$(awk '/images\/s:/ {n++; if (n > 1) {for (i = 1; i <= NF; i++) if ($i == "images/s:") print $(i+1)}}' "$tmp/out" | median)
  if (($(grep -c 'images/s:' "$tmp/out") < 2)); then
    echo "error: scalebench-train ($model) printed fewer than 2 end-of-epoch lines (EPOCHS >= 2)" >&2
    return 1
  fi
}

# torch_rates MODEL SHAPE CLASSES BATCH STEPS PRECISION: PyTorch's set-ups in one process; sets
# nchw, cl and host (empty without HOST_INPUT=1).
torch_rates() {
  local variants=nchw,channels_last
  ((host_input == 0)) || variants+=,host
  run_timed "PyTorch ($1 batch=$4 $6)" "$python" "$here/torch_train.py" "$threads" --device cuda \
    --model "$1" --input "$2" --classes "$3" --batch "$4" --optimizer momentum --steps "$5" \
    --warmup "$warmup" --precision "$6" --variants "$variants" || return 1
  nchw=$(awk '/^images\/s .* variant=nchw$/ {print $2}' "$tmp/out")
  cl=$(awk '/^images\/s .* variant=channels_last$/ {print $2}' "$tmp/out")
  host=$(awk '/^images\/s .* variant=host$/ {print $2}' "$tmp/out")
  if [[ -z $nchw || -z $cl ]] || { ((host_input == 1)) && [[ -z $host ]]; }; then
    echo "error: PyTorch ($1 batch=$4 $6) did not print images/s for each of $variants" >&2
    return 1
  fi
}

# compare MODEL SHAPE CLASSES BATCH STEPS ROUNDS PRECISION: the headline line for one row in one
# precision (graphs off), then its target and graph lines. With CUDA_GRAPH=1 and MODEL in
# CUDA_GRAPH_MODELS each round also runs scalebench with --cuda-graph on, right after its
# graph-off run; a failed graph run ends the graph runs (returns 1 at the end) but not the headline's.
compare() {
  local model=$1 shape=$2 classes=$3 b=$4 n=$5 r_count=$6 prec=$7 torch_side=$torch_ok
  if ((torch_side)) && [[ $model != mnist_cnn && $torch_info == *"no torchvision"* ]]; then
    echo "# $model: pytorch side skipped (torchvision is not installed)"
    torch_side=0
  fi
  local graph_side=0
  if ((cuda_graph)) && [[ " $graph_models " == *" $model "* ]]; then graph_side=1; fi
  local s_rates=() g_rates=() n_rates=() c_rates=() h_rates=() r graph_failed=0
  for ((r = 0; r < r_count; r++)); do
    scalebench_rate 1 off "$model" "$shape" "$classes" "$b" "$n" --precision "$prec" || return 1
    s_rates+=("$rate")
    if ((graph_side)); then
      if scalebench_rate 1 off "$model" "$shape" "$classes" "$b" "$n" --precision "$prec" --cuda-graph on &&
        { grep -qE ' cuda_graph=on( |$)' "$tmp/out" ||
          { echo "error: scalebench-train ($model --cuda-graph on): its header does not end with cuda_graph=on" >&2; false; }; }; then
        g_rates+=("$rate")
      else
        echo "# $model batch=$b $prec --cuda-graph on failed in round $((r + 1)): no more graph runs for it (see stderr)"
        graph_side=0 graph_failed=1 g_rates=()
      fi
    fi
    if ((torch_side)); then
      torch_rates "$model" "$shape" "$classes" "$b" "$n" "$prec" || return 1
      n_rates+=("$nchw") c_rates+=("$cl")
      ((host_input == 0)) || h_rates+=("$host")
    fi
  done
  local s g="" pn="" pc="" best="" flops peak
  s=$(printf '%s\n' "${s_rates[@]}" | median)
  echo "# $model batch=$b $prec scalebench rounds: ${s_rates[*]}"
  if ((graph_side)); then
    g=$(printf '%s\n' "${g_rates[@]}" | median)
    echo "# $model batch=$b $prec scalebench rounds with --cuda-graph on: ${g_rates[*]}"
  fi
  if ((torch_side)); then
    pn=$(printf '%s\n' "${n_rates[@]}" | median)
    pc=$(printf '%s\n' "${c_rates[@]}" | median)
    best=$(awk -v a="$pn" -v b="$pc" 'BEGIN {print (b > a ? b : a)}')
    echo "# $model batch=$b $prec pytorch rounds, batch on the GPU, NCHW: ${n_rates[*]}; median $pn"
    echo "# $model batch=$b $prec pytorch rounds, batch on the GPU, channels-last: ${c_rates[*]}; median $pc"
    if ((host_input)); then
      echo "# $model batch=$b $prec pytorch rounds, batch copied from host memory every step, NCHW (not in the headline): ${h_rates[*]}; median $(printf '%s\n' "${h_rates[@]}" | median)"
    fi
  fi
  flops=$(flops_of "$model" "$flops_file")
  peak=$(peak_for "$prec")
  headline "$model" "$prec" "$b" "$s" "$pn" "$pc" "$flops" "$peak"
  graph_line "$model" "$prec" "$b" "$s" "$g" "$best"
  return $graph_failed
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

# steps_for MODEL BATCH: steps per epoch. mnist_cnn: STEPS. The ImageNet models: RESNET_STEPS at
# batch 64 and the same images at other batches; vgg16 (4x ResNet-50's FLOPs per image) half of
# that, so its epochs last about as long; at least 8.
steps_for() {
  [[ $1 != mnist_cnn ]] || { echo "${STEPS:-200}"; return; }
  local n=$((${RESNET_STEPS:-50} * 64 / $2))
  [[ $1 != vgg16 ]] || n=$((n / 2))
  echo $((n < 8 ? 8 : n))
}

failed=0
for model in $models; do
  batches=64 shape=3x224x224 classes=1000 r_count=${RESNET_ROUNDS:-3}
  case $model in
    resnet50) batches=$resnet_batches ;;
    inception_v3) shape=3x299x299 ;;
    mnist_cnn) batches=128 shape=1x28x28 classes=10 r_count=${ROUNDS:-5} ;;
  esac
  for b in $batches; do
    for precision in $precisions; do
      compare "$model" "$shape" "$classes" "$b" "$(steps_for "$model" "$b")" "$r_count" "$precision" || failed=1
    done
  done
  if [[ -n $overlap_np ]]; then
    b=${batches%% *}
    overlap_compare "$model" "$shape" "$classes" "$b" "$(steps_for "$model" "$b")" "$r_count" "$overlap_np" || failed=1
  fi
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $failed
