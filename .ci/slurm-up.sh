#!/usr/bin/env bash
# A one-node SLURM cluster on localhost for tests/test_slurm_e2e.py (Debian bookworm, SLURM 22.05,
# run as root, no systemd): munge + slurmctld + slurmd, FAKE_GPUS fake 'gpu' GRES so jobs that
# ask for GPUs schedule, and job-completion records (jobcomp/filetxt, or slurmdbd with WITH_DBD=1
# for `sacct`). Everything but the munge key and socket lives under $BASE.
#
#   eval "$(FAKE_GPUS=2 bash .ci/slurm-up.sh | tail -n 1)"   # exports SLURM_CONF=<its directory>/etc/slurm.conf
#   NODES=2 ... : two slurmd on localhost (nodes n1, n2), so multi-node jobs (RL over Ray) run too
#   ... ; bash .ci/slurm-down.sh        # stops the daemons this script started, by PID (finds them by SLURM_CONF)
#
# Its directory is made fresh (mktemp -d, root's, 0755, marked by .fgx-slurm), never one that exists:
# root writes slurm.conf there, links /etc/slurm/slurm.conf to it, and slurm-down.sh kills the PIDs in
# it, so a directory another user made first (as a fixed name in /tmp allows) must not be it. BASE=DIR
# names one to create (it must not exist), or one this script made before (root's, marked, writable by
# root alone), whose daemons it then leaves running or restarts.
#
# Gotchas kept from the reference recipe:
# - srun inside a job step does not see SLURM_CONF (the jobstep strips it), so the config is also
#   linked at the compiled-in default /etc/slurm/slurm.conf;
# - gres/gpu needs File= devices: char devices aliasing /dev/null (1,3) stand in for GPUs;
# - slurmd ignores SIGTERM while it retries registration: slurm-down.sh escalates to SIGKILL;
# - with slurmdbd the cluster, account and user must exist before slurmctld starts.
set -euo pipefail
FAKE_GPUS=${FAKE_GPUS:-2}
WITH_DBD=${WITH_DBD:-0}
NODES=${NODES:-1}
T0=$(date +%s.%N)
[ "$(id -u)" = 0 ] || { echo "slurm-up.sh: needs root (apt-get, munge, daemons)" >&2; exit 1; }
. "$(dirname "$0")/slurm-base.sh"
if [ -z "${BASE:-}" ]; then
  BASE=$(mktemp -d "${TMPDIR:-/tmp}/fgx-slurm.XXXXXXXX")
  chmod 755 "$BASE" && touch "$BASE/$MARK"
elif mkdir -m 755 "$BASE" 2>/dev/null; then
  touch "$BASE/$MARK"
else
  check_base "$BASE" || exit 1
fi

# 0) packages
export DEBIAN_FRONTEND=noninteractive
pkgs="slurmctld slurmd slurm-client munge"
[ "$WITH_DBD" = 1 ] && pkgs="$pkgs slurmdbd mariadb-server"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
mkdir -p "$BASE"/{etc,state,spool,log,run,dev}
CPUS=$(nproc)
MEM=$(( $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) - 2048 ))

# munged and mariadb outlive this script (slurm-down.sh leaves them running): detached starts one in the
# background holding none of this script's descriptors, so a caller that waits for a pipe or a lock it
# handed down to close does not wait for the daemon.
detached() {
  ( for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
    exec "$@" </dev/null >/dev/null 2>&1 ) &
}

# 1) munge
[ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null \
  || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  detached runuser -u munge -- /usr/sbin/munged --force
  for _ in $(seq 40); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.25; done
fi
munge -n | unmunge >/dev/null

# 2) accounting: job-completion file (default) or slurmdbd + mariadb
if [ "$WITH_DBD" = 1 ]; then
  if ! mysqladmin ping >/dev/null 2>&1; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
    detached mysqld_safe --user=mysql
    for _ in $(seq 60); do mysqladmin ping >/dev/null 2>&1 && break; sleep 0.5; done
  fi
  mysql -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db; CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'fgxslurm'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  cat > "$BASE/etc/slurmdbd.conf" <<EOC
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=fgxslurm
StorageLoc=slurm_acct_db
LogFile=$BASE/log/slurmdbd.log
PidFile=$BASE/run/slurmdbd.pid
EOC
  chmod 600 "$BASE/etc/slurmdbd.conf"
  ACCT="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/linux"
else
  ACCT="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
fi

# 3) slurm.conf with fake GPUs; one node "localhost", or NODES slurmd n1..nN on localhost
if [ "$NODES" -gt 1 ]; then
  NODE_NAMES=$(seq -f "n%g" 1 "$NODES" | tr '\n' ' ')
  NODE_SET="n[1-$NODES]"
else
  NODE_NAMES=localhost
  NODE_SET=localhost
fi
NODE_LINES=""; i=0
for n in $NODE_NAMES; do
  port=""; [ "$NODES" -gt 1 ] && port="NodeHostname=localhost Port=$((17000 + i))"
  NODE_LINES="$NODE_LINES
NodeName=$n $port NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$((MEM / NODES)) GRES_PLACEHOLDER State=UNKNOWN"
  i=$((i + 1))
done
GRES_NODE=""; GRES_TYPES=""
rm -f "$BASE/etc/gres.conf"
if [ "$FAKE_GPUS" -gt 0 ]; then
  for i in $(seq 0 $((FAKE_GPUS - 1))); do [ -e "$BASE/dev/fakegpu$i" ] || mknod "$BASE/dev/fakegpu$i" c 1 3; done
  echo "NodeName=$NODE_SET Name=gpu File=$BASE/dev/fakegpu[0-$((FAKE_GPUS - 1))]" > "$BASE/etc/gres.conf"
  GRES_NODE="Gres=gpu:$FAKE_GPUS"; GRES_TYPES="GresTypes=gpu"
fi
NODE_LINES=${NODE_LINES//GRES_PLACEHOLDER/$GRES_NODE}
cat > "$BASE/etc/slurm.conf" <<EOC
ClusterName=fgx
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/slurmd-%n
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
MpiDefault=none
JobCompType=jobcomp/filetxt
JobCompLoc=$BASE/log/jobcomp.txt
$GRES_TYPES
$ACCT
$NODE_LINES
PartitionName=debug Nodes=$NODE_SET Default=YES MaxTime=INFINITE State=UP
EOC
export SLURM_CONF=$BASE/etc/slurm.conf
mkdir -p /etc/slurm
ln -sf "$SLURM_CONF" /etc/slurm/slurm.conf
if [ "$FAKE_GPUS" -gt 0 ]; then ln -sf "$BASE/etc/gres.conf" /etc/slurm/gres.conf; else rm -f /etc/slurm/gres.conf; fi

# 4) daemons (each started only if its PID file names no live process)
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "$WITH_DBD" = 1 ]; then
  alive "$BASE/run/slurmdbd.pid" || slurmdbd
  for _ in $(seq 40); do (echo > /dev/tcp/127.0.0.1/6819) 2>/dev/null && break; sleep 0.25; done
  sacctmgr -i add cluster fgx >/dev/null 2>&1 || true
  sacctmgr -i add account fgx Description=fgx Organization=fgx >/dev/null 2>&1 || true
  sacctmgr -i add user root Account=fgx >/dev/null 2>&1 || true
fi
alive "$BASE/run/slurmctld.pid" || slurmctld -f "$SLURM_CONF"
for n in $NODE_NAMES; do
  alive "$BASE/run/slurmd-$n.pid" || slurmd -f "$SLURM_CONF" -N "$n"
done
up() { [ "$(sinfo -h -N -o %T 2>/dev/null | grep -cE '^(idle|mixed|allocated)')" -ge "$NODES" ]; }
for _ in $(seq 120); do up && break; sleep 0.5; done
up || {
  echo "slurm-up.sh: node did not come up; tail of the logs:" >&2
  tail -n 20 "$BASE"/log/slurm*.log >&2; exit 1; }
sinfo -N -o "%N %P %T %c %m %G"
echo "cluster up in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $T0}") s under $BASE"
echo "export SLURM_CONF=$SLURM_CONF"
