#!/usr/bin/env bash
# Our scaling claim, measured by the product itself: runs experiments/scaling-vs-ddp.json
# (framework {scalebench-train, examples/torch_ddp_train.py on gloo} x np {1, 2} under mpirun,
# mnist_cnn, batch 128 per rank, 1,280 images per rank per epoch, one thread per rank, PyTorch
# with the malloc setting under which its np=1 is fastest; randomized order, 6 repetitions),
# then prints the report by framework and the verdict: the framework x np interaction on
# log(images/s) per run, with a 95% confidence interval on the ratio of the two speed-ups.
# The last line is
#   ratio of speed-ups, pytorch-ddp / scalebench-train: R, 95% CI [L, U]
# (R > 1: PyTorch DDP scales better here; an interval holding 1: no difference shown).
# bench/scaling_vs_ddp_steps.sh is the older step-level bench (medians of rounds, extras).
#
# usage: bench/scaling_vs_ddp.sh [BUILD_DIR]   env: DB=path (default: a temporary file)
#        EXPERIMENT=experiments/scaling-vs-ddp-quick.json for a quick look
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
experiment=${EXPERIMENT:-$root/experiments/scaling-vs-ddp.json}
db=${DB:-$(mktemp -d)/scaling-vs-ddp.db}
command -v mpirun >/dev/null || { echo "error: mpirun not found (apt-get install openmpi-bin)" >&2; exit 1; }
/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "error: /usr/bin/python3 has no torch with gloo; apt-get install python3-torch" >&2; exit 1; }
name=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$experiment")
"$build/scalebench" run "$experiment" --db "$db" >&2
"$build/scalebench" report --db "$db" --experiment "$name" --by framework
"$build/scalebench" stats --db "$db" --experiment "$name" --factor framework --factor np \
  --response log_images_per_second --contrast | sed -n '/^Interaction contrast/,$p'
