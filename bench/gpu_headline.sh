# shellcheck shell=bash
# Sourced by bench/gpu_vs_pytorch.sh: the arithmetic of its headline lines, kept apart so that
# tests/scripts/test_gpu_headline.sh can check it without a GPU. No side effects on sourcing.
# shellcheck disable=SC2034  # gpu_peak's variables are read by the caller

# gpu_peak NAME: the card's dense tensor-core peaks in TFLOP/s, from nvidia-smi's GPU name. Sets
# peak_bf16, peak_tf32 and peak_card (all empty for a card not in the table: mfu is then n/a).
# Dense = NVIDIA's datasheet figures "with sparsity" halved. Sources (NVIDIA datasheets, read
# through copies of their tables: glennklockwood.com/garden/processors/{h100,A100}, hpctech.co.jp's
# H100 page, mullet.se's L40S page; 2026-11):
#   H100 SXM5 (nvidia-smi: "H100 80GB HBM3"): BF16 1,979 sparse -> 989.4 dense, TF32 989 -> 494.7
#   H200 (SXM): the H100 SXM5's GH100 at the same clocks (NVIDIA's H200 datasheet lists the same
#     tensor-core figures) -> 989.4 / 494.7
#   H100 PCIe: BF16 1,513 sparse -> 756, TF32 756 -> 378
#   A100 (SXM4 and PCIe, 40 and 80 GB): BF16 624 sparse -> 312, TF32 312 -> 156
#   L40S: BF16 733 sparse -> 362 (362.05), TF32 366 -> 183
# Left out on purpose (other clocks or power, figures not checked): H100 NVL, H200 NVL, GH200.
gpu_peak() {
  local name=$1
  peak_bf16="" peak_tf32="" peak_card=""
  if [[ $name =~ (GH200|H100[\ -]NVL|H200[\ -]NVL) ]]; then
    return 0
  elif [[ $name =~ H200([^0-9]|$) ]]; then
    peak_bf16=989.4 peak_tf32=494.7 peak_card="H200 SXM"
  elif [[ $name =~ H100([^0-9].*)?PCIe ]]; then
    peak_bf16=756 peak_tf32=378 peak_card="H100 PCIe"
  elif [[ $name =~ H100([^0-9].*)?(80GB\ HBM3|SXM) ]]; then
    peak_bf16=989.4 peak_tf32=494.7 peak_card="H100 SXM5"
  elif [[ $name =~ A100([^0-9]|$) ]]; then
    peak_bf16=312 peak_tf32=156 peak_card="A100"
  elif [[ $name =~ L40S([^0-9]|$) ]]; then
    peak_bf16=362 peak_tf32=183 peak_card="L40S"
  fi
}

# peak_for PRECISION: the peak that precision's arithmetic can reach (after gpu_peak). fp32 is
# measured against TF32, because both sides let cuDNN run fp32 convolutions on TF32 tensor cores
# (PyTorch's default, and scalebench's); bf16 against BF16.
peak_for() {
  case $1 in
    bf16) echo "$peak_bf16" ;;
    *) echo "$peak_tf32" ;;
  esac
}

# target_for MODEL PRECISION BATCH: issue 33's ratio target for that row, or nothing when it has
# none. resnet50 >= 1.0 in bf16 at 64 and 256 and in fp32 at 64; mnist_cnn >= 1.5 in fp32 and
# >= 1.0 in bf16 (at its batch 128); all against PyTorch's best, with scalebench's graphs off.
target_for() {
  case "$1 $2 $3" in
    "resnet50 bf16 64" | "resnet50 bf16 256" | "resnet50 fp32 64") echo 1.0 ;;
    "mnist_cnn fp32 128") echo 1.5 ;;
    "mnist_cnn bf16 128") echo 1.0 ;;
  esac
}

# headline MODEL PRECISION BATCH SCALEBENCH PYTORCH_NCHW PYTORCH_CL TRAIN_FLOPS PEAK_TFLOPS: the
# row's one line, then its target line. Empty PyTorch figures give pytorch_best=n/a ratio=n/a; an
# empty FLOPs count or peak gives mfu=n/a. mfu = FLOPs per image x images/s / peak FLOP/s.
headline() {
  local target
  target=$(target_for "$1" "$2" "$3")
  awk -v m="$1" -v pr="$2" -v b="$3" -v s="$4" -v n="$5" -v c="$6" -v f="$7" -v pk="$8" \
    -v t="$target" 'BEGIN {
    best = ""
    if (n != "") best = n
    if (c != "" && (best == "" || c + 0 > best + 0)) best = c
    ratio = (best == "") ? "n/a" : sprintf("%.2f", s / best)
    mfu = (f == "" || pk == "") ? "n/a" : sprintf("%.2f", 100 * f * s / (pk * 1e12))
    printf "%s precision=%s batch=%d scalebench=%.1f img/s pytorch_best=%s img/s ratio=%s mfu=%s%%\n",
      m, pr, b, s, (best == "" ? "n/a" : sprintf("%.1f", best)), ratio, mfu
    if (t == "")
      printf "# %s precision=%s batch=%d: no target\n", m, pr, b
    else if (best == "")
      printf "# %s precision=%s batch=%d target ratio >= %s: not measured (no PyTorch figure)\n", m, pr, b, t
    else
      printf "# %s precision=%s batch=%d target ratio >= %s: %s\n", m, pr, b, t, (s / best >= t ? "met" : "NOT met")
  }'
}

# graph_line MODEL PRECISION BATCH OFF ON [PYTORCH_BEST]: the --cuda-graph line (nothing when ON
# is empty); with PyTorch's best figure, and graphs faster, a `# ` line with the ratio they give
# (and the row's target, if it has one).
graph_line() {
  [[ -n $5 ]] || return 0
  local target
  target=$(target_for "$1" "$2" "$3")
  awk -v m="$1" -v pr="$2" -v bt="$3" -v a="$4" -v b="$5" -v p="${6:-}" -v t="$target" 'BEGIN {
    printf "%s precision=%s batch=%d cuda_graph_off=%.1f img/s cuda_graph_on=%.1f img/s on/off=%.3f\n", m, pr, bt, a, b, b / a
    if (p == "" || b <= a) exit
    printf "# %s precision=%s batch=%d with --cuda-graph on: scalebench=%.1f img/s pytorch_best=%.1f img/s ratio=%.2f", m, pr, bt, b, p, b / p
    if (t != "") printf " (target >= %s: %s)", t, (b / p >= t ? "met" : "NOT met")
    printf "\n"
  }'
}

# flops_of MODEL FILE: train_flops= of MODEL's line in model_flops.py's output FILE (nothing if absent).
flops_of() {
  awk -v m="$1" '$1 == m { for (i = 2; i <= NF; i++) if ($i ~ /^train_flops=/) { sub(/^train_flops=/, "", $i); print $i; exit } }' "$2"
}
