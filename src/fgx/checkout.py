"""A scratch copy of a checkout as a fresh clone would have it: no environments, caches or run
outputs (the smoke and fault-injection tests, the SLURM test and benchmarks/main_job.py run in one)."""

from __future__ import annotations

import shutil
from pathlib import Path

CACHES = shutil.ignore_patterns(".venv*", ".git", ".snakemake", "__pycache__", ".pytest_cache", "*.egg-info")
OUTPUTS = {"results", "logs", "figures", "report.html"}  # top level only: src/fgx/figures is code


def copy_checkout(root: str | Path, dest: str | Path) -> Path:
    """Copy the checkout ``root`` to ``dest`` (which may exist, empty) without caches or outputs."""
    root = Path(root).resolve()

    def ignore(directory, names):
        skip = set(CACHES(directory, names))
        if Path(directory).resolve() == root:
            skip |= OUTPUTS & set(names)
        return skip

    shutil.copytree(root, dest, ignore=ignore, dirs_exist_ok=True)
    return Path(dest)
