"""Helpers for tests that ask Snakemake what it would run."""

import subprocess
import sys


def planned_jobs(workdir, *args) -> dict[str, int]:
    """Jobs per rule that `snakemake -n` would run in ``workdir`` (empty dict: nothing to do)."""
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", *args],
                          cwd=workdir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    jobs = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] not in ("total", "job"):
            jobs[parts[0]] = int(parts[1])
    return jobs
