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
# Environment: SLURM_JOB_ID (the allocation, looked up with squeue), FGX_GPUS_PER_NODE (GPUs per
# node, default: this node's CUDA_VISIBLE_DEVICES count), FGX_RAY_PORT (default 6379 +
# SLURM_JOB_ID % 1000, so two jobs sharing a node do not collide), FGX_RAY_WAIT_S (60).
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
mapfile -t nodes < <(scontrol show hostnames "$nodelist")
head_node=${nodes[0]}
this_node=$(hostname -s)
if [ "$this_node" != "${head_node%%.*}" ]; then
  echo "ray_slurm.sh: expected to run on the first node $head_node, running on $this_node" >&2
fi
head_ip=$(hostname --ip-address | awk '{print $1}')
port=${FGX_RAY_PORT:-$((6379 + ${SLURM_JOB_ID:-0} % 1000))}
gpus=${FGX_GPUS_PER_NODE:-$(echo "${CUDA_VISIBLE_DEVICES:-}" | awk -F, '{print (NF ? NF : 0)}')}
cpus=${SLURM_CPUS_ON_NODE:-$(nproc)}
address="$head_ip:$port"
wait_s=${FGX_RAY_WAIT_S:-60}
echo "ray_slurm.sh: head $head_node ($address), ${#nodes[@]} nodes, $gpus GPUs and $cpus CPUs per node"

pids=()
cleanup() {  # by PID only: `ray start --block` takes its own Ray processes down with it
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

ray start --head --node-ip-address="$head_ip" --port="$port" --num-cpus="$cpus" --num-gpus="$gpus" \
  --disable-usage-stats --block &
pids+=($!)
for _ in $(seq "$wait_s"); do ray status --address="$address" >/dev/null 2>&1 && break; sleep 1; done

for node in "${nodes[@]:1}"; do
  srun --overlap --nodes=1 --ntasks=1 -w "$node" \
    ray start --address="$address" --num-cpus="$cpus" --num-gpus="$gpus" --disable-usage-stats --block &
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
