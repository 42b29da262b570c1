"""profiles/gpu: one GPU shared by the torch engine's sampling and training jobs, checked by a dry run of
the main job (no GPU needed): every job that runs the model holds one of ``gpu_jobs`` (pretraining all of
them), no CPU job holds any, and the profile keeps profiles/default's other settings."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from fgx.checkout import copy_checkout

ROOT = Path(__file__).resolve().parents[1]
GPU = yaml.safe_load((ROOT / "profiles" / "gpu" / "config.yaml").read_text())
DEFAULT = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())
MODEL_RULES = {"pretrain_base", "rollout", "rft_sft", "rl", "rl_multi", "evaluate"}


def _limit() -> int:
    return int(next(r.split("=")[1] for r in GPU["resources"] if r.startswith("gpu_jobs=")))


def test_the_gpu_profile_shares_only_model_jobs_and_keeps_the_rest_of_the_default():
    assert set(GPU["set-resources"]) == MODEL_RULES
    assert GPU["set-resources"]["pretrain_base"]["gpu_jobs"] == _limit() > 1
    assert all(GPU["set-resources"][r]["gpu_jobs"] == 1 for r in MODEL_RULES - {"pretrain_base"})
    assert {k: v for k, v in GPU.items() if k not in ("resources", "set-resources")} == \
        {k: v for k, v in DEFAULT.items() if k != "resources"}
    assert set(DEFAULT["resources"]) <= set(GPU["resources"])


def test_a_dry_run_of_the_main_job_under_the_gpu_profile(tmp_path):
    work = tmp_path / "fgx"
    copy_checkout(ROOT, work)  # without figures/ too: a main job run here first must not leave the target made
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--workflow-profile", "profiles/gpu", "--cores",
                           "16", "figures/passk_level_curve.pdf"], cwd=work, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    held: dict[str, set[int]] = {}
    for rule, resources in re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", proc.stdout,
                                      flags=re.M):
        got = re.search(r"gpu_jobs=(\d+)", resources)
        held.setdefault(rule, set()).add(int(got.group(1)) if got else 0)
    assert {"pretrain_base", "rollout", "rft_sft", "rl", "evaluate", "generate_strings", "metrics"} <= set(held)
    for rule, values in held.items():
        want = (_limit() if rule == "pretrain_base" else 1) if rule in MODEL_RULES else 0
        assert values == {want}, (rule, values)
