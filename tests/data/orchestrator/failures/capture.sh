#!/usr/bin/env bash
# Captures what mpirun and srun print when a run fails across emulated nodes (root): a node's
# processes killed, its link down, a program that is missing, a rank that segfaults. Each fault's
# stdout and stderr go to NAME.stdout / NAME.stderr beside this script, as the launcher wrote
# them; tests/orchestrator/test_failure_reasons.cpp replays them through the run analyzer.
#   capture.sh [path/to/scalebench]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
scalebench="${1:-$here/../../../../build/scalebench}"
name=fc$$
name=${name:0:6}
dir=/tmp/scalebench-capture-$name
trap '"$scalebench" cluster down --name "$name" --dir "$dir" >/dev/null 2>&1' EXIT
"$scalebench" cluster up --name "$name" --nodes 2 --slurm --dir "$dir" --subnet 231 >/dev/null
. "$dir/env"
mpi=(mpirun --allow-run-as-root --hostfile "$dir/hostfile" --map-by node -np 2 --tag-output)
segv='if [ "${OMPI_COMM_WORLD_RANK:-$SLURM_PROCID}" = 1 ]; then sleep 1; kill -SEGV $$; fi; sleep 5'
capture() {  # NAME COMMAND...
  local out="$1"
  shift
  timeout 60 "$@" >"$here/$out.stdout" 2>"$here/$out.stderr"
  echo "$out: exit $?"
}
# Kills every process in node 2's namespace 2 s into a run (its daemons and ranks).
kill_node2_later() { (sleep 5; ip netns pids "sb-$name-node2" | xargs -r kill -9) & }
# Takes node 2's link down 2 s into a run (for good: the cluster goes down after).
link_down_later() { (sleep 2; ip link set "sb${name}h2" down) & }

capture mpirun-segfault "${mpi[@]}" sh -c "$segv"
capture mpirun-missing "${mpi[@]}" /nonexistent/train
capture srun-segfault srun -N 2 -n 2 --label sh -c "$segv"
capture srun-missing srun -N 2 -n 2 --label /nonexistent/train
kill_node2_later
capture mpirun-node-killed "${mpi[@]}" sleep 20
"$scalebench" cluster down --name "$name" --dir "$dir" >/dev/null
"$scalebench" cluster up --name "$name" --nodes 2 --slurm --dir "$dir" --subnet 231 >/dev/null
kill_node2_later
capture srun-node-killed srun -N 2 -n 2 --label sleep 20
"$scalebench" cluster down --name "$name" --dir "$dir" >/dev/null
"$scalebench" cluster up --name "$name" --nodes 2 --dir "$dir" --subnet 231 >/dev/null
link_down_later
capture mpirun-link-down "${mpi[@]}" sleep 30
