#!/usr/bin/env bash
# The emulated cluster's own validation (issue 24, item 2; docs/cluster.md, "The links deliver
# their rate"): for each --rate, `scalebench cluster up --nodes 4` and then
#   - one TCP stream node2 -> node1 (bench/link_stream.py): the link's payload rate;
#   - scalebench-train's allreduce benchmark across 2 and across 4 nodes (one rank each) through
#     `mpirun --hostfile`: its bus bandwidth at the largest three sizes (about 0.5 to 2 s per
#     allreduce), the figure the scaling model fits; across 4 nodes with the ring algorithm
#     (bandwidth-optimal, what busbw assumes) and with Open MPI's own choice;
#   - the same benchmark's 8-byte allreduce: the latency a message sees across the link;
# and prints configured against measured. TCP over 1500-byte frames carries at most 1448 payload
# bytes per 1514 on the wire: 95.6% of the shaped rate is the ceiling. Root, Linux, iproute2.
#
# usage: bench/cluster_links.sh [BUILD_DIR] [RATES...]   (default ../build, rates 20 100 200)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
shift || true
rates=("$@")
[[ ${#rates[@]} -gt 0 ]] || rates=(20 100 200)
sb=$build/scalebench
train=$build/scalebench-train
[[ -x $sb && -x $train ]] || { echo "error: build scalebench and scalebench-train in $build first" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "error: needs root (network namespaces)" >&2; exit 1; }

name=blv
subnet=241
dir=$(mktemp -d /tmp/scalebench-links-XXXXXX)
cleanup() { "$sb" cluster down --name $name --dir "$dir/c" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

# The mean busbw (GB/s) of the benchmark's rows from MIN bytes up, and its 8-byte time (us).
allreduce() {  # NP MIN MAX [MPIRUN OPTIONS...]
  local np=$1 min=$2 max=$3
  shift 3
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
    mpirun "$@" --hostfile "$dir/c/hostfile" -np "$np" "$train" --benchmark allreduce \
    --min-bytes "$min" --max-bytes "$max" --step-factor 2 --warmup-iterations 1 --iterations 3 |
    awk '!/^#/ {sum += $7; n++} END {if (n) printf "%.5f", sum / n}'
}
latency_us() {  # NP
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 \
    mpirun --hostfile "$dir/c/hostfile" -np "$1" "$train" --benchmark allreduce \
    --min-bytes 8 --max-bytes 8 --warmup-iterations 20 --iterations 200 |
    awk '!/^#/ {printf "%.0f", $5}'
}

echo "# $(date -u +%F) $(uname -n), $(nproc) cores; scalebench cluster --nodes 4, one rank per node"
printf '| rate (Mbit/s) | rate (MB/s) | one TCP stream (MB/s) | allreduce busbw, 2 nodes (MB/s) | 4 nodes, ring (MB/s) | 4 nodes, Open MPI'"'"'s choice (MB/s) | of the rate (2 / 4 ring) | 8-byte allreduce, 2 / 4 nodes (us) |\n'
printf '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
for rate in "${rates[@]}"; do
  "$sb" cluster up --name $name --nodes 4 --rate "$rate" --subnet $subnet --dir "$dir/c" >/dev/null
  # shellcheck disable=SC1091
  source "$dir/c/env"
  mib=$(awk -v r="$rate" 'BEGIN {m = int(r / 8); print (m < 4 ? 4 : m)}')  # about 8 s of stream
  ip netns exec sb-$name-node1 timeout 120 python3 "$here/link_stream.py" recv >"$dir/stream" &
  sleep 0.5
  ip netns exec sb-$name-node2 timeout 120 python3 "$here/link_stream.py" send 10.$subnet.0.1 "$mib"
  wait
  stream=$(awk '{print $7}' "$dir/stream")  # "received B bytes in S s: X MB/s (...)"
  # About 2 s per allreduce at the largest size.
  max=$(awk -v r="$rate" 'BEGIN {b = r * 1e6 / 8 * 2; s = 1048576; while (s * 2 <= b) s *= 2; print s}')
  two=$(allreduce 2 $((max / 4)) "$max")
  ring=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4)
  four=$(allreduce 4 $((max / 4)) "$max" "${ring[@]}")
  chosen=$(allreduce 4 $((max / 4)) "$max")
  lat2=$(latency_us 2)
  lat4=$(latency_us 4)
  awk -v r="$rate" -v s="$stream" -v a="$two" -v b="$four" -v c="$chosen" -v l2="$lat2" \
    -v l4="$lat4" 'BEGIN {
    mb = r / 8; printf "| %g | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f%% / %.0f%% | %s / %s |\n",
      r, mb, s, a * 1000, b * 1000, c * 1000, a * 1000 / mb * 100, b * 1000 / mb * 100, l2, l4 }'
  "$sb" cluster down --name $name --dir "$dir/c" >/dev/null
done
