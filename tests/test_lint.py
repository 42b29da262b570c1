"""The lint gate: ``ruff check`` (rules in pyproject.toml's [tool.ruff]) passes on all Python code.

ruff is pinned in envs/requirements.txt, so the README's test command runs this gate."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["src", "scripts", "tests", "benchmarks"]


def _ruff() -> str | None:
    try:
        from ruff.__main__ import find_ruff_bin
        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("ruff")


def test_ruff_check_passes():
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed: `bash envs/install.sh` installs the version envs/requirements.txt pins")
    proc = subprocess.run([ruff, "check", "--no-cache", *PATHS], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, f"ruff check {' '.join(PATHS)} fails (fix it or `ruff check --fix`):\n" + proc.stdout
