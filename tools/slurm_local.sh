#!/usr/bin/env bash
# Prove the SLURM profile on a real SLURM: a one-node cluster on localhost.
#
#   sudo tools/slurm_local.sh            (root: installs packages, starts daemons)
#
# 1. installs Debian's slurm-wlm and munge (if missing),
# 2. writes a one-node /etc/slurm/slurm.conf (no cgroups: proctrack/linuxproc, task/none;
#    select/cons_tres; 2 CPUs; memory from `free`; no accounting database); it refuses to replace
#    a slurm.conf it did not write. (It must be the default path: the job step of the executor
#    plugin removes SLURM_* variables, SLURM_CONF included, before its `srun`.)
# 3. starts munged, slurmctld and slurmd, waits until `sinfo` shows the node idle,
# 4. runs the config ($CONFIG: the default one, or e.g. a hardware sweep's,
#    config/sweep_slurm_slice.yaml) with `--cores 2` locally into $OUT/local and through
#    `--profile profiles/slurm` into $OUT/slurm (always from scratch), then checks every number
#    of the two agrees (tools/compare_results.py: every table, per-layer result and sweep point;
#    measured wall times are not compared), and prints the SLURM jobs per rule,
# 5. stops the daemons it started and removes the slurm.conf it wrote (also on failure or Ctrl-C):
#    with a slurm.conf naming a controller that is not running, `scontrol` waits ~10 s, and the
#    SLURM executor plugin calls it whenever Snakemake starts, so every later `snakemake` would
#    pay that wait.
# Rerunning is safe: leftover daemons of an earlier run are stopped first, the controller
# starts with a clean state, the SLURM folder is rebuilt from scratch; the local run is
# Snakemake's usual incremental run (FRESH=1 rebuilds it too).
#
# Environment: PYTHON (default .venv/bin/python), OUT (default results/slurm-proof),
# STATE (default /var/tmp/zigzag-slurm), CPUS (default 2), CONFIG (default config.yaml), FRESH.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
OUT=${OUT:-results/slurm-proof}
STATE=${STATE:-/var/tmp/zigzag-slurm}
CPUS=${CPUS:-2}
CONFIG=${CONFIG:-config.yaml}
NODE=$(hostname -s)
SLURM_CONF=/etc/slurm/slurm.conf
MARKER="# One-node cluster on localhost, written by tools/slurm_local.sh"

log() { printf '[slurm_local %s] %s\n' "$(date +%T)" "$*"; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (installs packages and starts the SLURM daemons)"
[ -x "$PYTHON" ] || die "no Python at $PYTHON (make the venv: python3 -m venv .venv && .venv/bin/pip install -e '.[cluster]')"
"$PYTHON" -c "import snakemake_executor_plugin_slurm" 2>/dev/null \
    || die "snakemake-executor-plugin-slurm missing: $PYTHON -m pip install -e '.[cluster]'"

# --- 1. packages -------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
    || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    log "installing slurm-wlm and munge"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge
fi
log "slurm-wlm $(dpkg-query -W -f='${Version}' slurm-wlm), munge $(dpkg-query -W -f='${Version}' munge)"

# --- 2. configuration --------------------------------------------------------------------
stop_pidfile() {  # stop the daemon whose pid is in $1, if it still runs
    local pid
    [ -f "$1" ] || return 0
    pid=$(cat "$1")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
    rm -f "$1"
}
stop_daemons() {
    stop_pidfile "$STATE/slurmd.pid"
    stop_pidfile "$STATE/slurmctld.pid"
    stop_pidfile "$STATE/munged.pid"
}
stop_daemons  # leftovers of an interrupted earlier run

mkdir -p "$STATE"/{ctld,spool,log} "$(dirname "$SLURM_CONF")"
if [ -s "$SLURM_CONF" ] && ! grep -qxF "$MARKER" "$SLURM_CONF"; then
    die "$SLURM_CONF exists and was not written by this script: not replacing it"
fi
MEM_MB=$(free -m | awk '/^Mem:/ {print $2}')
MEM_MB=$((MEM_MB * 9 / 10))  # leave room for the OS
cat > "$SLURM_CONF" <<EOF
$MARKER
ClusterName=zigzaglocal
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
# containers: no cgroups
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# no slurmdbd: sacct has nothing to read, the profile's status checks use squeue
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
# keep finished jobs visible to squeue/scontrol for 10 min
MinJobAge=600
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
MpiDefault=none
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
log "wrote $SLURM_CONF ($CPUS CPUs, $MEM_MB MB)"

# --- 3. daemons --------------------------------------------------------------------------
remove_own_conf() { if [ -f "$SLURM_CONF" ] && grep -qxF "$MARKER" "$SLURM_CONF"; then rm -f "$SLURM_CONF"; fi; }
trap 'log "stopping daemons, removing $SLURM_CONF"; stop_daemons; remove_own_conf' EXIT
[ -f /etc/munge/munge.key ] || { mungekey --create 2>/dev/null || create-munge-key -f; }
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge/munge.key
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running (not started here, left running)"
else
    runuser -u munge -- /usr/sbin/munged || die "munged did not start (see /var/log/munge/munged.log)"
    cp /run/munge/munged.pid "$STATE/munged.pid"
fi
munge -n | unmunge >/dev/null || die "munge round trip failed"
slurmctld -c -f "$SLURM_CONF" || die "slurmctld did not start (see $STATE/log/slurmctld.log)"
slurmd -f "$SLURM_CONF" || die "slurmd did not start (see $STATE/log/slurmd.log)"
for i in $(seq 60); do
    state=$(sinfo -h -N -o %T 2>/dev/null | head -1 || true)
    [ "$state" = idle ] && break
    [ "$i" = 60 ] && die "node never became idle (state '$state'; see $STATE/log/)"
    sleep 1
done
log "node $NODE idle: $(sinfo -h -o '%P %D %c CPUs %m MB %T')"

# --- 4. the two runs ---------------------------------------------------------------------
rm -rf "$OUT/slurm" "$OUT/slurm-logs"
[ -z "${FRESH:-}" ] || rm -rf "$OUT"
SNAKEMAKE=("$PYTHON" -m snakemake --configfile "$CONFIG" --quiet rules)
log "local run: --cores 2 -> $OUT/local (config $CONFIG; load $(cut -d' ' -f1-3 /proc/loadavg))"
t0=$(date +%s)
"${SNAKEMAKE[@]}" --cores 2 --config results="$OUT/local"
t1=$(date +%s)
log "local run done in $((t1 - t0)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
log "SLURM run: --profile profiles/slurm -> $OUT/slurm"
"${SNAKEMAKE[@]}" --profile profiles/slurm --config results="$OUT/slurm" \
    --slurm-no-account --slurm-status-command squeue --slurm-init-seconds-before-status-checks 5 \
    --slurm-logdir "$OUT/slurm-logs" --slurm-keep-successful-logs
t2=$(date +%s)
log "SLURM run done in $((t2 - t1)) s"
jobs=$(find "$OUT/slurm-logs" -name '*.log' | wc -l)
# the plugin's logs are <logdir>/<rule, or group_<name> for a batch of layer jobs>/...
per_rule=$(find "$OUT/slurm-logs" -name '*.log' -printf '%P\n' | cut -d/ -f1 | sort | uniq -c \
    | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
log "SLURM jobs submitted: $jobs ($per_rule); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" tools/compare_results.py "$OUT/local" "$OUT/slurm"
log "OK: the SLURM run's results equal the local run's"
