#!/usr/bin/env bash
# bench/gpu_vs_pytorch.sh without a GPU: first bench/gpu_headline.sh's arithmetic (peaks by GPU
# name, targets, the headline and graph lines), then the whole script against fake nvidia-smi,
# scalebench-train and Python (PATH, BUILD_DIR and PYTHON point at them) whose images/s are
# fixed here, so every headline figure is known: rows, medians, ratio, mfu, peak and FLOPs lines,
# the committed FLOPs table as the fallback, and exit 77 when nvidia-smi lists no GPU.
# Usage: test_gpu_headline.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() {  # expect WHAT ACTUAL EXPECTED
  [[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
}

# --- gpu_headline.sh on its own --------------------------------------------------------------
source "$source_dir/bench/gpu_headline.sh"
peak_of() { gpu_peak "$1"; echo "${peak_card:-none} ${peak_bf16:-} ${peak_tf32:-}"; }
expect "H100 SXM" "$(peak_of 'NVIDIA H100 80GB HBM3')" "H100 SXM5 989.4 494.7"
expect "H200" "$(peak_of 'NVIDIA H200')" "H200 SXM 989.4 494.7"
expect "H100 PCIe" "$(peak_of 'NVIDIA H100 PCIe')" "H100 PCIe 756 378"
expect "A100 SXM" "$(peak_of 'NVIDIA A100-SXM4-80GB')" "A100 312 156"
expect "A100 PCIe" "$(peak_of 'NVIDIA A100 80GB PCIe')" "A100 312 156"
expect "L40S" "$(peak_of 'NVIDIA L40S')" "L40S 362 183"
for name in 'NVIDIA H200 NVL' 'NVIDIA H100 NVL' 'NVIDIA GH200 480GB' 'NVIDIA RTX A1000' 'NVIDIA L40' 'NVIDIA H100' ''; do
  expect "unknown card '$name'" "$(peak_of "$name")" "none  "
done
gpu_peak 'NVIDIA H200'
expect "bf16 peak" "$(peak_for bf16)" 989.4
expect "fp32 peak (TF32)" "$(peak_for fp32)" 494.7
expect "target resnet50 bf16 256" "$(target_for resnet50 bf16 256)" 1.0
expect "target resnet50 fp32 256" "$(target_for resnet50 fp32 256)" ""
expect "target mnist_cnn fp32" "$(target_for mnist_cnn fp32 128)" 1.5
expect "target mnist_cnn bf16" "$(target_for mnist_cnn bf16 128)" 1.0
expect "target vgg16" "$(target_for vgg16 bf16 64)" ""
# 2.43e10 FLOPs x 1500 img/s / 494.7e12 = 7.368%; best of 1700 and 1800 is 1800: 1500/1800 = 0.83
expect "headline" "$(headline resnet50 fp32 64 1500 1700 1800 2.43e+10 494.7)" \
  "resnet50 precision=fp32 batch=64 scalebench=1500.0 img/s pytorch_best=1800.0 img/s ratio=0.83 mfu=7.37%
# resnet50 precision=fp32 batch=64 target ratio >= 1.0: NOT met"
expect "headline, NCHW faster" "$(headline mnist_cnn bf16 128 90000 60000 50000 7.157e+07 989.4 | head -n1)" \
  "mnist_cnn precision=bf16 batch=128 scalebench=90000.0 img/s pytorch_best=60000.0 img/s ratio=1.50 mfu=0.65%"
expect "headline, target met" "$(headline mnist_cnn bf16 128 90000 60000 50000 7.157e+07 989.4 | tail -n1)" \
  "# mnist_cnn precision=bf16 batch=128 target ratio >= 1.0: met"
expect "headline, no PyTorch, no peak" "$(headline vgg16 bf16 64 300 '' '' 9.265e+10 '')" \
  "vgg16 precision=bf16 batch=64 scalebench=300.0 img/s pytorch_best=n/a img/s ratio=n/a mfu=n/a%
# vgg16 precision=bf16 batch=64: no target"
expect "graph line" "$(graph_line resnet50 bf16 256 500 550 2000)" \
  "resnet50 precision=bf16 batch=256 cuda_graph_off=500.0 img/s cuda_graph_on=550.0 img/s on/off=1.100
# resnet50 precision=bf16 batch=256 with --cuda-graph on: scalebench=550.0 img/s pytorch_best=2000.0 img/s ratio=0.28 (target >= 1.0: NOT met)"
expect "no graph line without graph runs" "$(graph_line resnet50 bf16 256 500 '' 2000)" ""

# --- the whole script against fakes -----------------------------------------------------------
mkdir -p "$work/bin" "$work/build"
cat >"$work/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
case "$*" in
  -L) [[ -n ${FAKE_NO_GPU:-} ]] || echo "GPU 0: $FAKE_GPU_NAME (UUID: GPU-fake)" ;;
  "--query-gpu=name --format=csv,noheader") echo "$FAKE_GPU_NAME" ;;
  "--query-gpu=name,driver_version --format=csv,noheader") echo "$FAKE_GPU_NAME, 580.00" ;;
  *) echo "| NVIDIA-SMI 580.00   Driver Version: 580.00   CUDA Version: 13.0 |" ;;
esac
EOF
# The trainer: images/s per model (fp32, graphs off); bf16 halves it, --cuda-graph on adds 10%;
# epoch 1 (CUDA's start-up, cuDNN's search) is slower and must not count.
cat >"$work/build/scalebench-train" <<'EOF'
#!/usr/bin/env bash
[[ $1 != --help ]] || { echo "backends: this build has: cpu, cuda"; exit 0; }
model="" precision=fp32 graph=off epochs=1 batch=0
while (($#)); do
  case $1 in
    --model) model=$2 ;; --precision) precision=$2 ;; --cuda-graph) graph=$2 ;;
    --epochs) epochs=$2 ;; --batch-size) batch=$2 ;;
  esac
  shift
done
case $model in
  resnet50) rate=$((batch == 256 ? 1600 : 1500)) ;; mnist_cnn) rate=120000 ;;
  mobilenet_v2) rate=3000 ;; inception_v3) rate=1100 ;; vgg16) rate=700 ;;
esac
[[ $precision == fp32 ]] || rate=$((rate / 2))
[[ $graph == off ]] || rate=$((rate * 11 / 10))
echo "scalebench-train model=$model backend=cuda precision=$precision$([[ $graph == on ]] && echo ' cuda_graph=on')"
for ((e = 1; e <= epochs; e++)); do
  echo "Epoch $e/$epochs"
  echo "10/10 - loss: 6.9 - accuracy: 0.001 - images/s: $((e == 1 ? rate / 3 : rate)) - epoch_seconds: 1.0"
done
EOF
# Python: torch's version line, model_flops.py (FlopCounterMode's figures, or failing with
# FAKE_FLOPS_FAIL), torch_train.py --variants (NCHW/channels-last/host per model; bf16 x1.25).
cat >"$work/bin/python" <<'EOF'
#!/usr/bin/env bash
if [[ $1 == - ]]; then
  cat >/dev/null
  [[ -z ${FAKE_CPU_TORCH:-} ]] || { echo "torch 1.13.1 cuda=no (a CPU-only build)"; exit 3; }
  echo "torch 2.11.0+fake cuda=yes (CUDA 13.0, cuDNN 91900, $FAKE_GPU_NAME; torchvision 0.26.0)"
  exit 0
fi
script=$1
shift
case $script in
  */model_flops.py)
    [[ -z ${FAKE_FLOPS_FAIL:-} ]] || { echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1; }
    for m in "$@"; do
      awk -v m="$m" '$1 == m {sub(/counter=hooks/, "counter=flop_counter_mode"); print}' "$FAKE_FLOPS_TABLE"
    done ;;
  */torch_train.py)
    model="" precision=fp32 variants=""
    while (($#)); do
      case $1 in --model) model=$2 ;; --precision) precision=$2 ;; --variants) variants=$2 ;; esac
      shift
    done
    case $model in
      resnet50) set -- 1700 1800 1400 ;; mnist_cnn) set -- 65000 60000 42000 ;;
      mobilenet_v2) set -- 3200 3400 2500 ;; inception_v3) set -- 1200 1300 1000 ;; vgg16) set -- 800 900 600 ;;
    esac
    for v in ${variants//,/ }; do
      case $v in nchw) r=$1 ;; channels_last) r=$2 ;; host) r=$3 ;; esac
      [[ $precision == fp32 ]] || r=$((r * 5 / 4))
      echo "images/s $r.0 variant=$v"
    done ;;
esac
EOF
chmod +x "$work/bin/"* "$work/build/scalebench-train"
export PATH="$work/bin:$PATH" PYTHON="$work/bin/python" FAKE_GPU_NAME="NVIDIA H200"
export FAKE_FLOPS_TABLE="$source_dir/bench/model_flops.txt" ROUNDS=1 RESNET_ROUNDS=2 EPOCHS=3
bench=$source_dir/bench/gpu_vs_pytorch.sh
rc=0
out=$(bash "$bench" "$work/build" 2>"$work/err") || rc=$?
expect "exit status" "$rc" 0
((rc == 0)) || cat "$work/err"
expect "headline rows (6 rows x 2 precisions)" "$(grep -c '^[a-z0-9_]* precision=.* pytorch_best=' <<<"$out")" 12
expect "graph lines (resnet50 at 2 batches, mnist_cnn)" "$(grep -c ' cuda_graph_on=' <<<"$out")" 6
expect "resnet50 fp32 64" "$(grep '^resnet50 precision=fp32 batch=64 scalebench' <<<"$out")" \
  "resnet50 precision=fp32 batch=64 scalebench=1500.0 img/s pytorch_best=1800.0 img/s ratio=0.83 mfu=7.37%"
# bf16: scalebench 1600/2 = 800; PyTorch channels-last 1800 x 1.25 = 2250; 2.43e10 x 800 / 989.4e12
expect "resnet50 bf16 256" "$(grep '^resnet50 precision=bf16 batch=256 scalebench' <<<"$out")" \
  "resnet50 precision=bf16 batch=256 scalebench=800.0 img/s pytorch_best=2250.0 img/s ratio=0.36 mfu=1.96%"
# NCHW is PyTorch's best here: 65000 over 60000
expect "mnist_cnn fp32" "$(grep '^mnist_cnn precision=fp32 batch=128 scalebench' <<<"$out")" \
  "mnist_cnn precision=fp32 batch=128 scalebench=120000.0 img/s pytorch_best=65000.0 img/s ratio=1.85 mfu=1.74%"
expect "inception_v3 fp32" "$(grep '^inception_v3 precision=fp32' <<<"$out")" \
  "inception_v3 precision=fp32 batch=64 scalebench=1100.0 img/s pytorch_best=1300.0 img/s ratio=0.85 mfu=7.61%"
expect "mnist_cnn fp32 target" "$(grep '^# mnist_cnn precision=fp32 batch=128 target' <<<"$out")" \
  "# mnist_cnn precision=fp32 batch=128 target ratio >= 1.5: met"
expect "mnist_cnn graph line" "$(grep '^mnist_cnn precision=fp32 batch=128 cuda_graph' <<<"$out")" \
  "mnist_cnn precision=fp32 batch=128 cuda_graph_off=120000.0 img/s cuda_graph_on=132000.0 img/s on/off=1.100"
expect "resnet50 rounds" "$(grep -c '^# resnet50 batch=64 fp32 scalebench rounds: 1500 1500$' <<<"$out")" 1
expect "host-input line" "$(grep -c '^# vgg16 batch=64 bf16 pytorch rounds, batch copied from host memory every step, NCHW (not in the headline): 750.0 750.0; median 750$' <<<"$out")" 1
expect "peak line" "$(grep -c '^# peak (dense.*H200 SXM: 989.4 TFLOP/s bf16, 494.7 TFLOP/s TF32' <<<"$out")" 1
expect "flops line" "$(grep -c '^# flops per image: bench/model_flops.py on this machine (counter=flop_counter_mode); resnet50 train_flops=2.43e+10, mnist_cnn' <<<"$out")" 1

# The committed table when model_flops.py fails; a card not in the table: mfu=n/a.
out=$(FAKE_FLOPS_FAIL=1 FAKE_GPU_NAME="NVIDIA H100 NVL" MODELS=vgg16 PRECISIONS=bf16 HOST_INPUT=0 \
  bash "$bench" "$work/build" 2>"$work/err") || { fail "fallback run failed"; cat "$work/err"; }
expect "fallback flops line" "$(grep -c '^# flops per image: bench/model_flops.txt, committed (bench/model_flops.py failed here: ModuleNotFoundError' <<<"$out")" 1
expect "unknown card" "$(grep -c "^# peak: 'NVIDIA H100 NVL' is not in" <<<"$out")" 1
expect "vgg16 bf16 without a peak" "$(grep '^vgg16 precision' <<<"$out")" \
  "vgg16 precision=bf16 batch=64 scalebench=350.0 img/s pytorch_best=1125.0 img/s ratio=0.31 mfu=n/a%"
expect "no host-input runs with HOST_INPUT=0" "$(grep -c 'copied from host' <<<"$out")" 0

# A torch that cannot use the GPU: PyTorch's side skipped, said, and n/a in the headline.
out=$(FAKE_CPU_TORCH=1 MODELS=mnist_cnn PRECISIONS=fp32 bash "$bench" "$work/build" 2>"$work/err") ||
  { fail "run with a CPU-only torch failed"; cat "$work/err"; }
expect "CPU-only torch" "$(grep '^mnist_cnn precision=fp32 batch=128 scalebench' <<<"$out")" \
  "mnist_cnn precision=fp32 batch=128 scalebench=120000.0 img/s pytorch_best=n/a img/s ratio=n/a mfu=1.74%"
expect "CPU-only torch said" "$(grep -c '^# pytorch side skipped: torch.cuda is not available' <<<"$out")" 1
expect "CPU-only torch: target not measured" "$(grep -c 'target ratio >= 1.5: not measured' <<<"$out")" 1

# No GPU listed: skipped, exit 77, nothing measured.
rc=0
FAKE_NO_GPU=1 bash "$bench" "$work/build" >"$work/out" 2>&1 || rc=$?
expect "exit without a GPU" "$rc" 77
grep -q 'no GPU: skipped' "$work/out" || fail "no 'no GPU: skipped' line: $(cat "$work/out")"

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "ok: gpu_vs_pytorch.sh's lines from fake runs, its peaks, targets and FLOPs fallback"
