#!/usr/bin/env bash
# Stop the SLURM daemons .ci/slurm-up.sh started, by the PIDs in their PID files, and wait until
# they are gone. munged and mariadb are left running (shared services, cheap to keep; slurm-up.sh starts them
# holding none of its caller's descriptors).
# The cluster's directory: BASE, else the one SLURM_CONF lies in (BASE/etc/slurm.conf); only a directory
# slurm-up.sh made (.ci/slurm-base.sh: root's, writable by root alone, marked) is trusted with PIDs to kill.
. "$(dirname "$0")/slurm-base.sh"
BASE=${BASE:-${SLURM_CONF:+$(dirname "$(dirname "$SLURM_CONF")")}}
[ -n "$BASE" ] || { echo "slurm-down.sh: set BASE or SLURM_CONF (what slurm-up.sh printed)" >&2; exit 1; }
check_base "$BASE" || exit 1
status=0
for f in "$BASE"/run/slurmd-*.pid "$BASE/run/slurmctld.pid" "$BASE/run/slurmdbd.pid"; do
  [ -s "$f" ] || continue
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || { rm -f "$f"; continue; }
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null   # slurmd ignores TERM while it retries registration
    sleep 0.2
  fi
  if kill -0 "$pid" 2>/dev/null; then
    echo "could not stop $(basename "$f" .pid) (pid $pid)" >&2; status=1
  else
    echo "stopped $(basename "$f" .pid) (pid $pid)"; rm -f "$f"
  fi
done
exit $status
