"""Kill it anywhere: the smoke DAG killed during pretraining, RL, an evaluation and a figure, each time
rerun with the same command, ends with the same outputs as an uninterrupted run (marked ``faults``:
`pytest -m "not faults"` skips it; `.ci/run` runs it).

Kill signals differ per point (SIGKILL, SIGTERM, SIGINT to Snakemake's whole process group), as a
machine that dies, a SLURM time limit and a Ctrl-C would; after a SIGKILL Snakemake's lock stays, and
the rerun starts with ``snakemake --unlock`` as Snakemake's own message says. Checkpoints are taken every 0.3 s
(FGX_CHECKPOINT_SECONDS=0.3; the default is 60) so that the tiny jobs have one to resume from. The
comparison covers every parquet table (responses, scores, metrics; step times excepted) and every
model's weights; sampling on the CPU is bitwise repeatable on one machine, so equality is exact.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

from smoke import SNAKEMAKE, fresh_copy

pytestmark = [pytest.mark.slow, pytest.mark.faults]

# (what to wait for, the signal, a name, seconds to let the job run on before the kill): a kill point is
# reached when the glob matches in the run directory. The smoke pretraining lasts a few seconds, so it is
# killed at its first checkpoint (every 0.3 s here) with most of its steps still to go
KILL_POINTS = [
    ("results/work/pretrain_base/step_*", signal.SIGKILL, "pretraining", 0.0),
    ("results/rl/*/work/step_*", signal.SIGTERM, "RL", 0.5),
    ("logs/evaluate/*/*.log", signal.SIGINT, "an evaluation", 0.5),
    ("logs/figure/*.log", signal.SIGKILL, "a figure", 0.5),
]


def _run_until(work: Path, pattern: str, sig, delay: float, timeout: float = 600) -> tuple[bool, float]:
    """Start the smoke DAG; kill its process group with ``sig`` once ``pattern`` matches. Returns whether
    it was killed (False: it finished first) and the seconds it ran."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "FGX_CHECKPOINT_SECONDS": "0.3"}
    # a SIGKILLed Snakemake leaves its lock behind; `--unlock` is what its message tells the user to run
    subprocess.run([*SNAKEMAKE, "--unlock", "--configfile", ".test/config.yaml"], cwd=work, env=env,
                   capture_output=True, check=True)
    t0 = time.time()
    proc = subprocess.Popen([*SNAKEMAKE, "--cores", "2", "--configfile", ".test/config.yaml"], cwd=work, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while proc.poll() is None and time.time() - t0 < timeout:
        if list(work.glob(pattern)):
            time.sleep(delay)  # let the job get going past the point
            os.killpg(proc.pid, sig)
            proc.wait()
            time.sleep(1)
            return True, time.time() - t0
        time.sleep(0.1)
    proc.wait()
    return False, time.time() - t0


def _tables(root: Path) -> dict[str, pd.DataFrame]:
    out = {}
    for p in sorted((root / "results").rglob("*.parquet")):
        rel = p.relative_to(root).as_posix()
        if "/work/" in rel:
            continue
        df = pd.read_parquet(p)
        if "metric" in df.columns:  # RL metrics: wall-clock times differ between runs
            df = df[~df["metric"].str.endswith("time_s")].reset_index(drop=True)
        out[rel] = df
    return out


def _weights(root: Path) -> dict[str, dict[str, torch.Tensor]]:
    from safetensors.torch import load_file

    return {p.relative_to(root).as_posix(): load_file(str(p))
            for p in sorted((root / "results" / "models").rglob("model.safetensors"))}


def test_killed_anywhere_the_rerun_ends_where_an_uninterrupted_run_does(smoke_run, tmp_path):
    import shutil

    work = fresh_copy(tmp_path / "fgx")
    killed = []
    for i, (pattern, sig, name, delay) in enumerate(KILL_POINTS):
        was_killed, secs = _run_until(work, pattern, sig, delay)
        killed.append((name, was_killed, round(secs, 1)))
        shutil.copytree(work / "logs", tmp_path / f"logs_after_kill{i}")  # a rerun rewrites a job's log
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run([*SNAKEMAKE, "--unlock", "--configfile", ".test/config.yaml"], cwd=work, env=env,
                   capture_output=True, check=True)
    final = subprocess.run([*SNAKEMAKE, "--cores", "2", "--configfile", ".test/config.yaml"], cwd=work, env=env,
                           capture_output=True, text=True)
    assert final.returncode == 0, final.stdout[-4000:] + final.stderr[-4000:]
    assert all(k for _, k, _ in killed), f"a kill point was never reached: {killed}"
    print("kill points (name, killed, seconds into that attempt):", killed)
    resumed = sorted({line.strip() for log in tmp_path.glob("logs_after_kill*/**/*.log")
                      for line in log.read_text(errors="replace").splitlines() if "resumed from" in line})
    print("resumed:", resumed)
    assert any(line.startswith("pretrain: resumed from") for line in resumed), resumed
    assert any(line.startswith("rl: resumed from") for line in resumed), resumed
    # nothing half-written stays behind: a killed writer's temporary (.NAME.XXXXXXXX.parquet) is gone
    # (Snakemake marks each directory output with its own .snakemake_timestamp)
    leftovers = [p.relative_to(work).as_posix() for top in ("results", "figures") for p in (work / top).rglob(".*")
                 if "/work/" not in p.relative_to(work).as_posix() and p.name != ".snakemake_timestamp"]
    assert leftovers == [], leftovers
    ref_tables, got_tables = _tables(smoke_run), _tables(work)
    assert ref_tables.keys() == got_tables.keys()
    for name in ref_tables:
        pd.testing.assert_frame_equal(ref_tables[name], got_tables[name], obj=name)
    ref_w, got_w = _weights(smoke_run), _weights(work)
    assert ref_w.keys() == got_w.keys()
    for name in ref_w:
        assert all(torch.equal(ref_w[name][k], got_w[name][k]) for k in ref_w[name]), name
    for fig in (smoke_run / "figures").glob("*.csv"):
        a = pd.read_csv(fig).drop(columns=["source", "config_hash", "source_b", "config_hash_b"], errors="ignore")
        b = pd.read_csv(work / "figures" / fig.name).drop(columns=["source", "config_hash", "source_b",
                                                                     "config_hash_b"], errors="ignore")
        pd.testing.assert_frame_equal(a, b, obj=fig.name)
