#!/usr/bin/env bash
# scalebench-train against PyTorch on the same model, batch, thread count and synthetic input, for
# every model of the zoo (trainer/model/zoo.*): mlp, mnist_cnn and lenet5 on 1x28x28, batch 128,
# Adadelta; vgg16, resnet50 and mobilenet_v2 on 3x224x224 and inception_v3 on 3x299x299, 1000
# classes, SGD momentum (batch 32; vgg16 and inception_v3 16, BIG_BATCH). The two alternate within
# each round (the machine is noisy); medians over the rounds are printed, one line per model and
# thread count:
#   MODEL threads=T scalebench=X img/s pytorch=Y img/s ratio=R
# scalebench's number is the median end-of-epoch images/s of epochs 2..4 on a synthetic set with
# no test set (epoch 1, with the primitive creation, is the warm-up); PyTorch's is its timed
# steps after warm-up steps (bench/torch_train.py).
#
# usage: bench/trainer_vs_pytorch.sh [BUILD_DIR]
#   env: MODELS="mlp mnist_cnn lenet5 vgg16 resnet50 inception_v3 mobilenet_v2" THREADS="1 2"
#        ROUNDS=5 STEPS=30 (the 28x28 models)
#        BIG_ROUNDS=3 BIG_STEPS=2 BIG_THREADS="1 2" BIG_BATCH=16 (the ImageNet-sized models: a
#        ResNet-50 step at batch 32 takes seconds here, PyTorch's longer; RESNET_ROUNDS,
#        RESNET_STEPS and RESNET_THREADS are the old names of the first three)
#        PYTHON=/usr/bin/python3
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/paths.sh" "$@"  # build, train, python, rounds
steps=${STEPS:-30}
source "$here/common.sh"

scalebench_rate() {  # threads model shape classes batch optimizer lr steps
  local t=$1 model=$2 shape=$3 classes=$4 b=$5 opt=$6 lr=$7 n=$8
  OMP_NUM_THREADS=$t "$train" --model "$model" --dataset synthetic --input-shape "$shape" \
    --classes "$classes" --train-images $((b * n)) --test-images 0 --epochs 4 --batch-size "$b" \
    --optimizer "$opt" --lr "$lr" --threads "$t" |
    awk '/images\/s:/ {n++; if (n > 1) {for (i = 1; i <= NF; i++) if ($i == "images/s:") print $(i+1)}}' | median
}

torch_rate() {  # threads model shape classes batch optimizer steps
  OMP_NUM_THREADS=$1 "$python" "$here/torch_train.py" "$1" --model "$2" --input "$3" \
    --classes "$4" --batch "$5" --optimizer "$6" --steps "$7" --warmup $(($7 < 5 ? 1 : 5)) |
    awk '{print $2}'
}

# compare MODEL SHAPE CLASSES BATCH OPTIMIZER LR STEPS ROUNDS THREADS: one line per thread count.
# PyTorch runs twice per round: with glibc's malloc defaults (its activations, megabytes each,
# are mmap'd and unmapped every step, and the page faults slow it by up to 2x on this VM), and
# with freed memory kept in the heap (MALLOC_MMAP_THRESHOLD_ and friends); the headline ratio is
# against the faster of the two medians.
compare() {
  local model=$1 shape=$2 classes=$3 b=$4 opt=$5 lr=$6 n=$7 r_count=$8 thread_counts=$9
  for t in $thread_counts; do
    s_rates=() p_rates=() q_rates=()
    for ((r = 0; r < r_count; r++)); do
      s_rates+=("$(scalebench_rate "$t" "$model" "$shape" "$classes" "$b" "$opt" "$lr" "$n")")
      p_rates+=("$(torch_rate "$t" "$model" "$shape" "$classes" "$b" "$opt" "$n")")
      q_rates+=("$(MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 \
        MALLOC_TOP_PAD_=536870912 torch_rate "$t" "$model" "$shape" "$classes" "$b" "$opt" "$n")")
    done
    s=$(printf '%s\n' "${s_rates[@]}" | median)
    p=$(printf '%s\n' "${p_rates[@]}" | median)
    q=$(printf '%s\n' "${q_rates[@]}" | median)
    echo "# $model threads=$t scalebench rounds: ${s_rates[*]}"
    echo "# $model threads=$t pytorch rounds (glibc malloc defaults): ${p_rates[*]}; median $p"
    echo "# $model threads=$t pytorch rounds (freed memory kept in the heap): ${q_rates[*]}; median $q"
    # The headline takes PyTorch at its better allocator setting.
    best=$(awk -v p="$p" -v q="$q" 'BEGIN {print (q > p ? q : p)}')
    awk -v m="$model" -v t="$t" -v s="$s" -v p="$best" \
      'BEGIN {printf "%s threads=%s scalebench=%.1f img/s pytorch=%.1f img/s ratio=%.2f\n", m, t, s, p, s / p}'
  done
}

models=${MODELS:-mlp mnist_cnn lenet5 vgg16 resnet50 inception_v3 mobilenet_v2}
big_steps=${BIG_STEPS:-${RESNET_STEPS:-2}}
big_rounds=${BIG_ROUNDS:-${RESNET_ROUNDS:-3}}
big_threads=${BIG_THREADS:-${RESNET_THREADS:-1 2}}
big_batch=${BIG_BATCH:-16}
echo "# $(date -Is) $(uname -n) $(nproc) cpus; load: $(cut -d' ' -f1-3 /proc/loadavg); rounds=$rounds (ImageNet-sized: $big_rounds)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); isa: $(grep -q avx512f /proc/cpuinfo && echo avx512f || echo avx2)"
for model in $models; do
  case $model in
    # The 28x28 models: batch 128, Adadelta (lr 1, as the Databricks notebook).
    mlp | mnist_cnn | lenet5)
      compare "$model" 1x28x28 10 128 adadelta 1.0 "$steps" "$rounds" "${THREADS:-1 2}" ;;
    # torchvision's models against ours (the same structures and parameter counts,
    # tests/trainer/test_models.cpp), SGD with momentum 0.9.
    resnet50 | mobilenet_v2)
      compare "$model" 3x224x224 1000 32 momentum 0.01 "$big_steps" "$big_rounds" "$big_threads" ;;
    vgg16)
      compare "$model" 3x224x224 1000 "$big_batch" momentum 0.01 "$big_steps" "$big_rounds" "$big_threads" ;;
    inception_v3)
      compare "$model" 3x299x299 1000 "$big_batch" momentum 0.01 "$big_steps" "$big_rounds" "$big_threads" ;;
    *) echo "error: unknown model $model" >&2; exit 1 ;;
  esac
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
