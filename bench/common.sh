# shellcheck shell=bash
# Sourced by the bench scripts that compare against PyTorch: the shared checks and helpers.
# Needs $python and $train set. The CPU comparisons need torch with a fast BLAS and check it here;
# gpu_vs_pytorch.sh sets common_checks=trainer first (PyTorch's CPU BLAS plays no part on the GPU,
# and a missing torch only skips PyTorch's side there).

[[ -x $train ]] || { echo "error: $train not found; build it first (cmake --build $(dirname "$train") --target scalebench-train)" >&2; exit 1; }

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

if [[ ${common_checks:-all} != trainer ]]; then
  "$python" -c 'import torch' 2>/dev/null || { echo "error: $python has no torch; install python3-torch" >&2; exit 1; }

  # Debian's torch takes its BLAS from the libblas.so.3 alternative: the reference BLAS (~5 GFLOP/s)
  # unless OpenBLAS is installed (~100+ GFLOP/s), which halves PyTorch's speed on mnist_cnn's dense
  # layer, would flatter scalebench and change PyTorch's compute/communication balance. Refuse to
  # compare against the crippled baseline.
  sgemm=$("$python" -c 'import torch,time; torch.set_num_threads(1); a=torch.rand(1024,1024); a@a; t=time.perf_counter(); [a@a for _ in range(5)]; print(int(5*2*1024**3/(time.perf_counter()-t)/1e9))')
  echo "# pytorch single-thread sgemm: $sgemm GFLOP/s"
  if (( sgemm < 30 )); then
    echo "error: PyTorch uses the reference BLAS ($sgemm GFLOP/s): apt-get install libopenblas0-pthread for a fair baseline" >&2
    exit 1
  fi
fi
