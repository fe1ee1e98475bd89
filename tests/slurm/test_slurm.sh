#!/usr/bin/env bash
# A real one-node Slurm, started here, runs an experiment through scalebench's srun launcher
# (issue "Other people's trainers", item 4): our trainer under `srun --mpi=pmix` with np 1 and 2,
# and the plain PyTorch DDP script (examples/torch_ddp_train.py) under srun. Then the database
# must hold ok runs with their epochs and rank-labelled lines, and the daemons are stopped.
#
# It needs root (the daemons run as root, as in CI), Debian's slurm-wlm and munge, mpirun and
# python3-torch (scripts/install-deps.sh installs them). Where something is missing, or Slurm
# cannot start, it exits 77 (ctest: skipped) naming the reason; it never passes without running.
#
# usage: test_slurm.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
skip() { echo "SKIPPED: slurm: $*"; exit 77; }
fail() { echo "FAILED: slurm: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root to start munged, slurmctld and slurmd (CI runs as root)"
for tool in munged slurmctld slurmd srun sinfo scontrol; do
  command -v "$tool" >/dev/null || PATH="$PATH:/usr/sbin" command -v "$tool" >/dev/null ||
    skip "no $tool (apt-get install slurm-wlm munge; scripts/install-deps.sh does)"
done
export PATH="$PATH:/usr/sbin"
command -v mpirun >/dev/null || skip "no mpirun"
/usr/bin/python3 -c 'import torch' 2>/dev/null || skip "no python3-torch"
[ -x "$build_dir/scalebench" ] && [ -x "$build_dir/scalebench-train" ] ||
  fail "no scalebench or scalebench-train in $build_dir"

started=$(date +%s.%N)
work=$(mktemp -d /tmp/scalebench-slurm-XXXXXX)
host=$(hostname -s)
cpus=$(nproc)
memory_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
munge_socket="$work/munge.socket"
ctld_port=$((16817 + RANDOM % 1000))

cleanup() {
  [ -f "$work/slurmd.pid" ] && kill "$(cat "$work/slurmd.pid")" 2>/dev/null
  [ -f "$work/slurmctld.pid" ] && kill "$(cat "$work/slurmctld.pid")" 2>/dev/null
  [ -f "$work/munged.pid" ] && kill "$(cat "$work/munged.pid")" 2>/dev/null
  sleep 0.5
  for pidfile in slurmd slurmctld munged; do
    [ -f "$work/$pidfile.pid" ] && kill -9 "$(cat "$work/$pidfile.pid")" 2>/dev/null
  done
  if [ "${keep_logs:-0}" = 1 ]; then
    for log in "$work"/*.log; do echo "---- $log"; tail -n 30 "$log"; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# munge: a key of our own and a socket of our own, so that nothing of the host's is touched.
mkdir -p "$work/munge" && chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$munge_socket" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/seed" ||
  { keep_logs=1; skip "munged does not start here"; }

# slurm.conf for this host alone: root runs everything, no cgroups (containers often lack them).
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<EOF
ClusterName=scalebench-test
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
NodeName=$host CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -f "$SLURM_CONF" || { keep_logs=1; skip "slurmctld does not start here"; }
slurmd -f "$SLURM_CONF" || { keep_logs=1; skip "slurmd does not start here"; }

state=""
for _ in $(seq 1 120); do
  state=$(sinfo -h -N -o %T 2>/dev/null | head -n 1)
  [ "$state" = idle ] && break
  sleep 0.5
done
if [ "$state" != idle ]; then
  keep_logs=1
  skip "the node did not become idle within 60 s (state: '${state:-none}')"
fi
ready=$(date +%s.%N)
echo "slurm: node $host idle after $(awk -v a="$started" -v b="$ready" 'BEGIN {printf "%.1f", b - a}') s"

cat >"$work/slurm.json" <<EOF
{"name": "slurm", "timeout_seconds": 300, "np": [1, 2],
 "trainer": {"model": "mnist_cnn", "dataset": "synthetic", "train-images": 256,
             "test-images": 64, "epochs": 2, "batch-size": 32, "threads": 1},
 "conditions": [
   {"name": "scalebench-train", "launcher": "srun", "launcher_args": ["--mpi=pmix"]},
   {"name": "pytorch-ddp", "launcher": "srun", "program": "$source_dir/examples/torch_ddp_train.py",
    "train_images": 256}
 ]}
EOF
db="$work/slurm.db"
if ! "$build_dir/scalebench" run "$work/slurm.json" --db "$db"; then
  keep_logs=1
  "$build_dir/scalebench" query --db "$db" \
    "SELECT id, condition, np, status, error FROM runs" || true
  fail "scalebench run under Slurm did not store four ok runs"
fi

query() { "$build_dir/scalebench" query --db "$db" --csv "$1" | tail -n +2 | tr -d "\r"; }
ok=$(query "SELECT count(*) FROM runs WHERE status = 'ok' AND launcher = 'srun'")
[ "$ok" = 4 ] || fail "expected 4 ok srun runs, got $ok"
epochs=$(query "SELECT count(*) FROM epochs JOIN runs ON runs.id = epochs.run_id
                WHERE duration_seconds > 0 AND status = 'ok'")
[ "$epochs" = 8 ] || fail "expected 8 measured epochs (4 runs x 2), got $epochs"
# srun --label: every stdout line of a run carries a rank.
unlabelled=$(query "SELECT count(*) FROM lines JOIN runs ON runs.id = lines.run_id
                    WHERE stream = 'stdout' AND rank IS NULL AND text <> ''")
[ "$unlabelled" = 0 ] || fail "$unlabelled stdout lines without a rank"
# Both programs print from rank 0 only: their lines carry rank 0 from srun's label.
ranks=$(query "SELECT group_concat(DISTINCT rank) FROM lines WHERE stream = 'stdout'")
[ "$ranks" = "0" ] || fail "expected stdout lines labelled rank 0, got '$ranks'"
# Our trainer saw the np it was launched for (its header; a mismatch would not be ok).
header_np=$(query "SELECT group_concat(np || ':' || substr(text, instr(text, ' np=') + 4, 1), ' ')
                   FROM lines JOIN runs ON runs.id = lines.run_id
                   WHERE condition = 'scalebench-train' AND text LIKE 'scalebench-train %'")
[ "$header_np" = "1:1 2:2" ] || fail "trainer headers' np against the runs' np: '$header_np'"

scontrol shutdown >/dev/null 2>&1 || true
echo "slurm: passed in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
