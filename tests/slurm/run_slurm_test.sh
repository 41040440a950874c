#!/usr/bin/env bash
# A sharded sweep on a real Slurm, on this machine: the README's job array (4 tasks), `merge`,
# and a byte-for-byte comparison with the unsharded sweep; then one task requeued mid-run
# (`scontrol requeue`), whose --resume must give the same bytes again.
#
#   tests/slurm/run_slurm_test.sh [SHARDSIM_BINARY]     (default: build/shardsim)
#
# Installs Debian's slurm-wlm and munge when missing (apt-get, with sudo when not root), starts
# munged (unless one runs), slurmctld and slurmd on localhost with a slurm.conf of its own (ports
# 16817/16818, state under a temporary folder), and stops what it started on exit. Bounded: each
# wait gives up after its own limit, the whole run after $SLURM_TEST_LIMIT_S (default 600 s).
# Exit 0 when every comparison holds, non-zero otherwise. CI runs it (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
binary="$(realpath "${1:-build/shardsim}")"
spec="$root/tests/slurm/sweep.yaml"
limit_s="${SLURM_TEST_LIMIT_S:-600}"
start_s=$SECONDS
[ -x "$binary" ] || { echo "slurm test: no shardsim binary at $binary (build it first)" >&2; exit 2; }

log() { printf '[slurm test %3ds] %s\n' $((SECONDS - start_s)) "$*"; }
fail() { log "FAIL: $*"; exit 1; }
check_time() { [ $((SECONDS - start_s)) -lt "$limit_s" ] || fail "over the ${limit_s}s limit"; }

# ---------------------------------------------------------------- packages
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  # policy-rc.d: the packages' own services are not started (this script starts its daemons).
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# ---------------------------------------------------------------- daemons
work="$(mktemp -d /tmp/shardsim-slurm.XXXXXX)"
chmod 755 "$work"
started=()  # pids of the daemons this script started, stopped on exit
cleanup() {
  local rc=$?
  for pid in "${started[@]}"; do
    $sudo_cmd kill "$pid" 2>/dev/null || true
  done
  for pid in "${started[@]}"; do
    for _ in $(seq 50); do $sudo_cmd kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    $sudo_cmd kill -9 "$pid" 2>/dev/null || true
  done
  if [ $rc -ne 0 ]; then
    for f in slurmctld.log slurmd.log; do
      [ -f "$work/$f" ] && { echo "--- $f (last lines)"; tail -n 20 "$work/$f"; }
    done
    for f in "$work"/logs/*; do [ -f "$f" ] && { echo "--- $f"; tail -n 5 "$f"; }; done
  fi
  $sudo_cmd rm -rf "$work"
  log "daemons stopped; exit $rc"
}
trap cleanup EXIT

# munge: the key the package made (or a new one), the daemon as the munge user.
if ! munge -n >/dev/null 2>&1; then
  if [ ! -s /etc/munge/munge.key ]; then
    $sudo_cmd mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
      $sudo_cmd dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    $sudo_cmd chown munge:munge /etc/munge/munge.key
    $sudo_cmd chmod 400 /etc/munge/munge.key
  fi
  $sudo_cmd mkdir -p /run/munge /var/log/munge /var/lib/munge
  $sudo_cmd chown munge:munge /run/munge /var/log/munge /var/lib/munge
  $sudo_cmd runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/shardsim-test.pid
  for _ in $(seq 50); do [ -s /run/munge/shardsim-test.pid ] && break; sleep 0.1; done
  started+=("$(cat /run/munge/shardsim-test.pid)")
  munge -n >/dev/null || fail "munged does not answer"
fi

host="$(hostname -s)"
cpus="$(nproc)"
mkdir -p "$work/state" "$work/spool" "$work/logs" "$work/results" "$work/requeue"
export SLURM_CONF="$work/slurm.conf"
cat > "$SLURM_CONF" <<CONF
ClusterName=shardsim-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# A requeued task may start again after cred_expire + 1 s (Slurm's default: 120 s).
AuthInfo=cred_expire=5
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
JobRequeue=1
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1024 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

$sudo_cmd slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
for _ in $(seq 100); do [ -s "$work/slurmctld.pid" ] && break; sleep 0.1; done
[ -s "$work/slurmctld.pid" ] || fail "slurmctld did not start"
started+=("$(cat "$work/slurmctld.pid")")
$sudo_cmd slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 100); do [ -s "$work/slurmd.pid" ] && break; sleep 0.1; done
[ -s "$work/slurmd.pid" ] || fail "slurmd did not start"
started+=("$(cat "$work/slurmd.pid")")
for _ in $(seq 300); do
  state="$(sinfo -h -n "$host" -o %t 2>/dev/null || true)"
  [ "$state" = idle ] && break
  sleep 0.1
done
[ "$state" = idle ] || fail "node $host is '$state', not idle, 30 s after slurmd started"
log "slurmctld and slurmd up ($cpus CPUs on $host)"

# ---------------------------------------------------------------- the sweeps
# The unsharded reference, then the README's array job (4 tasks, one CPU each).
cd "$work"
"$binary" sweep "$spec" -j 1 -o "$work/unsharded.csv" --progress none >/dev/null
points=$(($(wc -l < "$work/unsharded.csv") - 1))
log "unsharded sweep: $points points"

# The job script of README.md (Sweeps and claims: "On a SLURM cluster"), 4 tasks.
cat > "$work/sweep.sbatch" <<JOB
#!/bin/bash
#SBATCH --job-name=shardsim-sweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$work/logs/task-%a-%j.out
# Each task runs 1/4 of the points (from SLURM_ARRAY_TASK_ID / _COUNT); --resume lets a
# requeued task continue where it stopped.
"$binary" sweep "$spec" -j "\$SLURM_CPUS_PER_TASK" \\
    -o "results/shard-\${SLURM_ARRAY_TASK_ID}.csv" --resume --progress plain
JOB

# Waits for every task of job $1 to leave the queue, then checks that each COMPLETED.
wait_job() {
  local job=$1 limit=$2 t0=$SECONDS
  while squeue -h -j "$job" 2>/dev/null | grep -q .; do
    [ $((SECONDS - t0)) -lt "$limit" ] || fail "job $job still queued after ${limit}s"
    check_time
    sleep 0.2
  done
  local bad
  bad="$(scontrol -o show job "$job" 2>/dev/null | grep -v 'JobState=COMPLETED' || true)"
  # Finished jobs leave slurmctld's memory after MinJobAge (300 s); none may have failed.
  [ -z "$bad" ] || fail "tasks of job $job did not complete: $bad"
}

job="$(sbatch --parsable --chdir="$work" "$work/sweep.sbatch")"
log "submitted array job $job (4 tasks)"
wait_job "$job" 300
"$binary" merge --sweep "$spec" -o "$work/merged.csv" "$work"/results/shard-*.csv >/dev/null
cmp "$work/unsharded.csv" "$work/merged.csv" || fail "merged shards differ from the unsharded sweep"
log "4 shards merged: byte-identical to the unsharded sweep"

# ---------------------------------------------------------------- requeue mid-run
# Task 2 of a second array is requeued once it has written some rows and before it ends; its
# second run resumes from the rows its first left (at most one torn line is dropped).
rm -f "$work"/results/*
cat "$work/sweep.sbatch" > "$work/requeue.sbatch"
job="$(sbatch --parsable --chdir="$work" "$work/requeue.sbatch")"
task_file="$work/results/shard-2.csv"
shard_points=$(( (points - 2 + 3) / 4 ))  # points i with i % 4 == 2
log "submitted array job $job; waiting for task 2 to be mid-run ($shard_points points)"
t0=$SECONDS
rows_before=0
while :; do
  [ $((SECONDS - t0)) -lt 120 ] || fail "task 2 of job $job never ran mid-sweep"
  st="$(squeue -h -j "${job}_2" -o %T 2>/dev/null || true)"
  if [ "$st" = RUNNING ] && [ -f "$task_file" ]; then
    rows_before=$(($(wc -l < "$task_file") - 1))
    if [ "$rows_before" -ge 1 ] && [ "$rows_before" -lt "$shard_points" ]; then
      scontrol requeue "${job}_2" || fail "scontrol requeue ${job}_2 failed (did it just end?)"
      break
    fi
  fi
  [ -z "$st" ] && fail "task 2 of job $job finished before it could be requeued"
  sleep 0.05
done
rows_left=$(($(wc -l < "$task_file") - 1))
log "requeued task 2 after $rows_before of $shard_points rows (file holds $rows_left rows)"
wait_job "$job" 300
grep -q "rows resumed" "$work"/logs/task-2-*.out ||
  fail "task 2's second run did not resume (logs: $(cat "$work"/logs/task-2-*.out))"
resumed_line="$(grep -h "points evaluated" "$work"/logs/task-2-*.out | tail -n 1)"
"$binary" merge --sweep "$spec" -o "$work/merged-requeued.csv" "$work"/results/shard-*.csv >/dev/null
cmp "$work/unsharded.csv" "$work/merged-requeued.csv" ||
  fail "after the requeue, merged shards differ from the unsharded sweep"
log "task 2 resumed ($resumed_line); merged: byte-identical to the unsharded sweep"
log "PASS in $((SECONDS - start_s)) s"
