#!/usr/bin/env bash
# Start a Ray cluster over this SLURM allocation, run a command against it, stop the cluster.
#
#   bash scripts/ray_slurm.sh -- python -m verl.trainer.main_ppo trainer.nnodes=2 ...
#
# The verl engine calls this for the RL rule when its allocation has several nodes (verl's "Ray on
# SLURM" recipe): the Ray head runs here, on the allocation's first node; one Ray worker per
# other node is started with `srun --overlap` (a step inside the same allocation); the command
# then joins the cluster through RAY_ADDRESS (verl's ray.init() connects to it). With one node
# the command simply runs (verl starts its own local Ray).
#
# The cluster is the job's alone (fgx.engines.verl.environment): every Ray process demands the token in
# RAY_AUTH_TOKEN_PATH (RAY_AUTH_MODE=token; a 0600 file in the job's work directory, which every node
# reads; the verl engine writes it and sets both), the dashboard is off, each node keeps Ray's session
# files in a directory of its own that only this user may enter (removed on exit), and the head takes a
# free port (FGX_RAY_PORT to choose one).
#
# Environment: SLURM_JOB_ID (the allocation, looked up with squeue), RAY_AUTH_MODE=token and
# RAY_AUTH_TOKEN_PATH (required), FGX_GPUS_PER_NODE (GPUs per node, default: this node's
# CUDA_VISIBLE_DEVICES count), FGX_RAY_PORT (default: a free port), FGX_RAY_WAIT_S (60).
# Everything it starts is stopped by PID on exit.
set -euo pipefail

[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 -- COMMAND [ARGS...]" >&2; exit 2; }

# The allocation's nodes, asked of SLURM: inside a job step (Snakemake's jobstep runs each job
# under `srun -n1`) SLURM_JOB_NODELIST / SLURM_JOB_NUM_NODES describe the step, not the job.
nnodes=${SLURM_JOB_NUM_NODES:-1}
nodelist=${SLURM_JOB_NODELIST:-}
if [ -n "${SLURM_JOB_ID:-}" ] && command -v squeue >/dev/null; then
  if info=$(squeue -h -j "$SLURM_JOB_ID" -o "%D %N" 2>/dev/null) && [ -n "$info" ]; then
    read -r nnodes nodelist <<<"$info"
  fi
fi
if [ "$nnodes" -le 1 ]; then
  exec "$@"
fi

command -v ray >/dev/null || { echo "ray_slurm.sh: 'ray' is not on PATH (activate the verl env)" >&2; exit 2; }
if [ "${RAY_AUTH_MODE:-}" != token ] || [ ! -r "${RAY_AUTH_TOKEN_PATH:-}" ] || [ ! -s "$RAY_AUTH_TOKEN_PATH" ]; then
  echo "ray_slurm.sh: starts Ray with token authentication only: set RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH" \
       "to a 0600 file holding the token, on a file system every node reads (the verl engine does)" >&2
  exit 2
fi
unset RAY_AUTH_TOKEN  # the file's token, not one the environment carries
mapfile -t nodes < <(scontrol show hostnames "$nodelist")
head_node=${nodes[0]}
this_node=$(hostname -s)
if [ "$this_node" != "${head_node%%.*}" ]; then
  echo "ray_slurm.sh: expected to run on the first node $head_node, running on $this_node" >&2
fi
head_ip=$(hostname --ip-address | awk '{print $1}')
port=${FGX_RAY_PORT:-0}
gpus=${FGX_GPUS_PER_NODE:-$(echo "${CUDA_VISIBLE_DEVICES:-}" | awk -F, '{print (NF ? NF : 0)}')}
cpus=${SLURM_CPUS_ON_NODE:-$(nproc)}
wait_s=${FGX_RAY_WAIT_S:-60}
# a fresh directory (0700) for this node's Ray session files: under $TMPDIR, or /tmp where $TMPDIR is too
# long a path for Ray's sockets (~75 characters below it, 107 bytes at most)
session_base() { if [ "${#TMPDIR}" -gt 0 ] && [ "${#TMPDIR}" -le 30 ]; then echo "$TMPDIR"; else echo /tmp; fi; }
export -f session_base
session=$(mktemp -d "$(session_base)/fgx-ray.XXXXXXXX")

pids=()
cleanup() {  # by PID only: `ray start --block` takes its own Ray processes down with it
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$session"
  if [ -n "${worker_session:-}" ]; then
    for node in "${nodes[@]:1}"; do
      srun --overlap --nodes=1 --ntasks=1 -w "$node" bash -c 'rm -rf -- "$(session_base)/$1"' rm "$worker_session" \
        || true
    done
  fi
}
trap cleanup EXIT

ray start --head --node-ip-address="$head_ip" --port="$port" --num-cpus="$cpus" --num-gpus="$gpus" \
  --include-dashboard=false --temp-dir="$session/ray" --disable-usage-stats --block &
pids+=($!)
address=""
for _ in $(seq "$wait_s"); do  # the head's address, which Ray writes into its session directory
  address=$(cat "$session/ray/ray_current_cluster" 2>/dev/null || true)
  [ -n "$address" ] && ray status --address="$address" >/dev/null 2>&1 && break
  sleep 1
done
[ -n "$address" ] || { echo "ray_slurm.sh: the Ray head did not start within ${wait_s}s" >&2; exit 1; }
echo "ray_slurm.sh: head $head_node ($address), ${#nodes[@]} nodes, $gpus GPUs and $cpus CPUs per node"

# each worker node: Ray's session files in a new directory of its own (0700) named here, so that cleanup can
# remove it: srun ends a step it is told to stop with SIGKILL, which leaves a worker no chance to clean up
ray_worker() {
  mkdir -m 700 "$(session_base)/$4" || exit 1
  exec ray start --address="$1" --num-cpus="$2" --num-gpus="$3" --temp-dir="$(session_base)/$4/ray" \
    --disable-usage-stats --block
}
export -f ray_worker
worker_session=$(basename "$(mktemp -u fgx-ray.XXXXXXXX)")
for node in "${nodes[@]:1}"; do
  srun --overlap --nodes=1 --ntasks=1 -w "$node" bash -c 'ray_worker "$@"' ray-worker "$address" "$cpus" "$gpus" \
    "$worker_session" &
  pids+=($!)
done

want=$(( gpus * ${#nodes[@]} ))
for i in $(seq "$wait_s"); do
  have=$(python - "$address" <<'EOF' 2>/dev/null || echo 0
import sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR")
print(int(ray.cluster_resources().get("GPU", 0)))
EOF
)
  [ "${have:-0}" -ge "$want" ] && break
  [ "$i" = "$wait_s" ] && { echo "ray_slurm.sh: only ${have:-0} of $want GPUs joined after ${wait_s}s" >&2; exit 1; }
  sleep 1
done
echo "ray_slurm.sh: cluster up with $want GPUs"

export RAY_ADDRESS="$address"
"$@"
