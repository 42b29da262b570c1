"""The smoke DAG (.test/config.yaml) run in a scratch copy of the repository (shared by the smoke and
the fault-injection tests through conftest's ``smoke_run``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fgx.checkout import copy_checkout

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def fresh_copy(dest: Path) -> Path:
    copy_checkout(ROOT, dest)
    (dest / "figures").mkdir(exist_ok=True)
    return dest


def snakemake(workdir, *args, check=True):
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run([*SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    return proc
