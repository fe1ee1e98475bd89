#!/usr/bin/env bash
# The per-operation table (scalebench-train --profile-ops, docs/trainer.md) of each model of
# PROFILE_MODELS (default resnet50) in each precision of PROFILE_PRECISIONS (default fp32 bf16),
# synthetic data at the shapes of bench/gpu_vs_pytorch.sh, SGD momentum, 21 steps a run (the
# first left out, 20 timed). Run by scripts/gpu/device-run.sh's `profile` stage; rehearsed on the
# CPU with BACKEND=cpu PROFILE_PRECISIONS=fp32.
# usage: scripts/gpu/profile-ops.sh [TRAINER]   (default build/scalebench-train)
#   env: PROFILE_MODELS, PROFILE_PRECISIONS, PROFILE_BATCH (default 64; mnist_cnn 128),
#        PROFILE_STEPS (default 21), BACKEND (default cuda), PROFILE_SETUPS (FORMAT:ENGINE or
#        FORMAT:ENGINE:ACTIVATIONS of --memory-format, --conv-engine and --activation-type;
#        default "nchw:legacy channels_last:legacy channels_last:graph channels_last:graph:bf16",
#        the last for bf16 precision only; cuda only), PROFILE_ARGS (more options, word-split)
set -euo pipefail
train=${1:-build/scalebench-train}
steps=${PROFILE_STEPS:-21}
failed=0
for model in ${PROFILE_MODELS:-resnet50}; do
  case $model in
    mnist_cnn) shape=1x28x28 classes=10 batch=${PROFILE_BATCH:-128} ;;
    inception_v3) shape=3x299x299 classes=1000 batch=${PROFILE_BATCH:-64} ;;
    resnet50 | vgg16 | mobilenet_v2) shape=3x224x224 classes=1000 batch=${PROFILE_BATCH:-64} ;;
    *) echo "profile-ops: no input shape for model '$model'" >&2; exit 2 ;;
  esac
  for precision in ${PROFILE_PRECISIONS:-fp32 bf16}; do
    for setup in ${PROFILE_SETUPS:-nchw:legacy channels_last:legacy channels_last:graph channels_last:graph:bf16}; do
      IFS=: read -r format engine activations <<<"$setup"
      activations=${activations:-fp32}
      [[ $activations == fp32 || $precision == bf16 ]] || continue  # bf16 storage: bf16 only
      # One failing set-up (a plan cuDNN refuses) must not cost the others their tables.
      # shellcheck disable=SC2086
      "$train" --backend "${BACKEND:-cuda}" --model "$model" --dataset synthetic \
        --input-shape "$shape" --classes "$classes" --train-images $((steps * batch)) \
        --test-images 0 --epochs 1 --batch-size "$batch" --optimizer momentum --lr 0.01 \
        --precision "$precision" --memory-format "$format" --conv-engine "$engine" \
        --activation-type "$activations" --profile-ops ${PROFILE_ARGS:-} ||
        { echo "profile-ops: $model $precision $setup failed"; failed=1; }
      echo
    done
  done
done
exit $failed
