"""CI's skip guard (tests/skip_guard.py) on throwaway test files in a pytest of their own: with
FGX_FORBID_SKIPS=1 every skip but a CUDA test's fails, as a skip while collecting does; without it the same
files pass with their skips listed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

SKIPPING = '''
import pytest

@pytest.fixture()
def cluster():
    pytest.skip("no SLURM cluster")

def test_runs():
    assert True

def test_skips_in_its_body():
    pytest.skip("needs a package")

@pytest.mark.skipif(True, reason="needs verl")
def test_skipped_by_a_mark():
    pass

def test_skips_in_a_fixture(cluster):
    pass

@pytest.mark.gpu
@pytest.mark.skipif(True, reason="needs a CUDA device")
def test_cuda():
    pass

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_known_bug():
    assert False
'''

MODULE_SKIP = '''
import pytest

pytest.importorskip("fgx_no_such_package")

def test_never_collected():
    pass
'''
PASSING = "def test_runs():\n    assert True\n"


def run_pytest(tmp_path: Path, source: str, forbid: bool) -> subprocess.CompletedProcess:
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    gpu: needs a CUDA device\n")
    (tmp_path / "test_throwaway.py").write_text(source)
    (tmp_path / "test_passing.py").write_text(PASSING)
    env = {**os.environ, "PYTHONPATH": str(TESTS), "FGX_FORBID_SKIPS": "1" if forbid else ""}
    argv = [sys.executable, "-m", "pytest", "-p", "skip_guard", "-p", "no:cacheprovider", "-p", "no:asyncio", "-rfEsx",
            "-q", str(tmp_path)]
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)


def test_without_the_guard_skips_pass(tmp_path):
    proc = run_pytest(tmp_path, SKIPPING, forbid=False)
    assert proc.returncode == 0, proc.stdout
    assert "2 passed, 4 skipped, 1 xfailed" in proc.stdout, proc.stdout


def test_the_guard_fails_every_skip_but_the_cuda_tiers(tmp_path):
    proc = run_pytest(tmp_path, SKIPPING, forbid=True)
    assert proc.returncode == 1, proc.stdout
    failed = sorted(line.split("::")[1].split(" ")[0] for line in proc.stdout.splitlines()
                    if line.startswith(("FAILED", "ERROR")))
    assert failed == ["test_skipped_by_a_mark", "test_skips_in_a_fixture", "test_skips_in_its_body"], proc.stdout
    # a skip in a fixture fails the test's setup: pytest counts it an error
    assert "1 failed, 2 passed, 1 skipped, 1 xfailed, 2 errors" in proc.stdout, proc.stdout
    assert "SKIPPED [1] test_throwaway.py" in proc.stdout and "needs a CUDA device" in proc.stdout
    assert "FGX_FORBID_SKIPS forbids a skip outside the CUDA tier" in proc.stdout


def test_the_guard_fails_a_module_skipped_while_collected(tmp_path):
    proc = run_pytest(tmp_path, MODULE_SKIP, forbid=False)
    assert proc.returncode == 0 and "1 passed, 1 skipped" in proc.stdout, proc.stdout
    proc = run_pytest(tmp_path, MODULE_SKIP, forbid=True)
    assert proc.returncode != 0 and "1 error" in proc.stdout and "fgx_no_such_package" in proc.stdout, proc.stdout
    assert "forbids it" in proc.stdout, proc.stdout


def test_the_suite_loads_the_guard_and_ci_turns_it_on():
    """The project's own conftest wires the guard in: the SLURM tier without a cluster (no ``SLURM_CONF``)
    skips, and with ``FGX_FORBID_SKIPS=1`` fails; ``.ci/run`` sets it before the README's test command."""
    env = {k: v for k, v in os.environ.items() if k not in ("SLURM_CONF", "FGX_FORBID_SKIPS")}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", str(TESTS / "test_slurm_e2e.py")]
    allowed = subprocess.run(argv, cwd=TESTS.parent, env=env, capture_output=True, text=True)
    assert allowed.returncode == 0 and " skipped" in allowed.stdout and "failed" not in allowed.stdout, allowed.stdout
    forbidden = subprocess.run(argv, cwd=TESTS.parent, env={**env, "FGX_FORBID_SKIPS": "1"}, capture_output=True,
                               text=True)
    assert forbidden.returncode == 1 and "no SLURM cluster" in forbidden.stdout, forbidden.stdout
    assert " skipped" not in forbidden.stdout.splitlines()[-1], forbidden.stdout
    ci = (TESTS.parent / ".ci" / "run").read_text().splitlines()
    assert ci.index("export FGX_FORBID_SKIPS=1") < ci.index(".venv/bin/python -m pytest -ra"), ci
