#!/usr/bin/env bash
# Make `snakemake --profile slurm` find profiles/slurm from the repository root. Snakemake looks a
# profile name up in the working directory, then in its user config directory (~/.config/snakemake
# on Linux); this links profiles/slurm there as `slurm`, unless a profile of that name that is not a
# link already exists (then `--profile profiles/slurm` is the way).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
dir=$("$PYTHON" -c "from snakemake.cli import get_appdirs; print(get_appdirs().user_config_dir)")
mkdir -p "$dir"
if [ -e "$dir/slurm" ] && [ ! -L "$dir/slurm" ]; then
  echo "note: $dir/slurm is another profile; use --profile profiles/slurm" >&2
else
  ln -sfn "$PWD/profiles/slurm" "$dir/slurm"
  echo "snakemake --profile slurm -> $dir/slurm -> $PWD/profiles/slurm"
fi
