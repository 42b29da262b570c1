"""The SLURM profile, checked without a cluster.

* Static: the profile names only real rules, resources the SLURM plugin knows, and options
  Snakemake accepts; every GPU stage asks for GPUs.
* The plugin's own code turns each GPU rule's resources into the sbatch / srun flags we expect
  (``--gpus=8`` for sampling and SFT; ``--gres=gpu:8`` per node and ``--nodes`` for RL, whose job
  step then sees all of its node's GPUs).
* A paper-scale dry run (``snakemake -n --profile profiles/slurm --configfile config.paper.yaml``)
  prints every job with its GPU resources, and RL on two nodes shows ``nodes=2``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from fgx.checkout import copy_checkout

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "profiles" / "slurm" / "config.yaml"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
GPU_RULES = {"rollout", "evaluate", "rft_sft", "rl", "rl_multi"}
# resource names snakemake-executor-plugin-slurm (2.x) reads, plus Snakemake's standard ones
PLUGIN_RESOURCES = {"runtime", "mem_mb", "mem_mb_per_cpu", "cpus_per_task", "cpus_per_gpu", "gpu", "gpu_model",
                    "gres", "nodes", "tasks", "tasks_per_node", "tasks_per_gpu", "slurm_partition",
                    "slurm_account", "slurm_extra", "constraint", "qos", "mpi", "disk_mb", "clusters"}


def profile() -> dict:
    return yaml.safe_load(PROFILE.read_text())


def workflow_rules() -> set[str]:
    """The DAG's rules as Snakemake lists them (some are declared once per task family or RL lineage)."""
    proc = subprocess.run([*SNAKEMAKE, "--list-rules"], cwd=ROOT, capture_output=True, text=True, check=True)
    rules = set(proc.stdout.split())
    assert {"generate_strings", "generate_countdown", "rl", "rl_multi", "evaluate"} <= rules, proc.stdout
    return rules


# ----------------------------------------------------------------------------- static
def test_profile_names_real_rules_and_known_resources():
    p = profile()
    assert p["executor"] == "slurm"
    unknown_rules = set(p["set-resources"]) - workflow_rules()
    assert not unknown_rules, f"set-resources for rules that do not exist: {unknown_rules}"
    for rule, res in [("default-resources", p["default-resources"]), *p["set-resources"].items()]:
        bad = set(res) - PLUGIN_RESOURCES
        assert not bad, f"{rule}: resource(s) the SLURM plugin does not read: {bad}"
    for rule in GPU_RULES:
        res = p["set-resources"][rule]
        assert res.get("gpu", 0) > 0 or str(res.get("gres", "")).startswith("gpu:"), rule
    commented = PROFILE.read_text()
    assert "# slurm_partition:" in commented and "# slurm_account:" in commented


def test_profile_options_are_snakemake_options():
    helptext = subprocess.run([*SNAKEMAKE, "--help"], capture_output=True, text=True, check=True).stdout
    keys = list(profile())
    assert {"executor", "jobs", "default-resources", "set-resources"} <= set(keys), keys
    for key in keys:
        assert f"--{key}" in helptext, f"profile option {key!r} is not a snakemake option"


class _Res(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as err:
            raise AttributeError(name) from err


def _job(rule: str, extra: dict | None = None):
    res = {"gpu": 1, **profile()["default-resources"], **profile()["set-resources"][rule], **(extra or {})}
    return SimpleNamespace(resources=_Res(res), threads=8, name=rule)


def _sbatch(rule, extra=None):
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    job = _job(rule, extra)
    params = dict(run_uuid="uuid", slurm_logfile="log", comment_str="c", account="", partition="", workdir="")
    return get_submit_command(job, params) + set_gres_string(job), job


def test_plugin_turns_gpu_rules_into_the_intended_sbatch_and_srun_flags():
    from snakemake_executor_plugin_slurm_jobstep import get_gpu_setting, get_node_setting

    for rule in ("rollout", "evaluate", "rft_sft"):
        call, job = _sbatch(rule)
        assert "--gpus=8" in call and "--cpus-per-gpu=8" in call and "--ntasks" not in call, call
        assert get_gpu_setting(job) == "--gpus=8"
    call, job = _sbatch("rl")
    assert "--gres=gpu:8" in call and "--nodes=1" in call and "--cpus-per-task=64" in call, call
    assert "--gpus=" not in call
    assert get_gpu_setting(job) == ""  # the step inherits every GPU of its node
    call, job = _sbatch("rl", {"nodes": 2})
    assert "--nodes=2" in call and "--gres=gpu:8" in call  # --gres counts per node: 16 GPUs
    assert get_node_setting(job) == "--nodes=2"


def test_ray_slurm_script_is_valid_bash_and_passes_through_on_one_node(tmp_path):
    script = ROOT / "scripts" / "ray_slurm.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    out = subprocess.run(["bash", str(script), "--", "echo", "ran"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "SLURM_JOB_NUM_NODES": "1"}, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "ran"


# ----------------------------------------------------------------------------- dry runs
@pytest.fixture(scope="module")
def paper_workdir(tmp_path_factory):
    """A copy of the workflow plus a fake local model directory for config.paper.yaml."""
    base = tmp_path_factory.mktemp("paper")
    work = base / "fgx"
    copy_checkout(ROOT, work)
    model = base / "Llama-3.1-8B-Instruct"
    model.mkdir()  # what the config check reads before any job: a config naming its model type, weights, a tokenizer
    (model / "config.json").write_text('{"model_type": "llama"}')
    (model / "model.safetensors").write_bytes(b"")
    (model / "tokenizer.json").write_text("{}")
    (base / "model.yaml").write_text(yaml.safe_dump({"model": {"path": str(model)}}))
    return work, base / "model.yaml"


def dry_run(work: Path, model_cfg: Path, profile_dir: str = "profiles/slurm") -> tuple[list[dict], str]:
    proc = subprocess.run([*SNAKEMAKE, "-n", "--profile", profile_dir, "--configfile", "config.paper.yaml",
                           str(model_cfg)], cwd=work, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    text = proc.stdout + proc.stderr
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m:
            continue
        res = re.search(r"^\s+resources: (.+)$", block, flags=re.M)
        resources = dict(kv.split("=", 1) for kv in res[1].split(", ")) if res else {}
        jobs.append({"rule": m[1], "resources": resources})
    return jobs, text


def test_paper_scale_dry_run_lists_every_job_with_its_gpus(paper_workdir):
    work, model_cfg = paper_workdir
    jobs, text = dry_run(work, model_cfg)
    total = int(re.search(r"^total\s+(\d+)$", text, flags=re.M)[1])
    assert len(jobs) == total, "every job is printed"
    counts = {r: sum(j["rule"] == r for j in jobs) for r in GPU_RULES}
    # Stage-1 rollout + 6 iterative-RFT rollouts + Countdown 2-number rollout (Multi-Base RFT data);
    # Stage-1 + 6 RFT models + Multi-Base; 3 RL runs + 2 from the Multi-Base; evaluation of stage1,
    # 6 RFT iterations and 3 RL models, Countdown 3/4/5 of 4 models + the Multi-Base's 2-number check,
    # and the full-trace test set of the 5 contrast-pair models
    assert counts == {"rollout": 8, "rft_sft": 8, "rl": 3, "rl_multi": 2, "evaluate": 28}
    for job in jobs:
        r = job["resources"]
        if job["rule"] in GPU_RULES:
            gpus = int(r.get("gpu", 0)) or int(r.get("gres", "gpu:0").split(":")[-1])
            assert gpus == 8, job
            assert int(r["runtime"]) >= 240 and int(r["mem_mb"]) >= 200_000, job
        elif job["rule"] != "all":
            assert int(r.get("gpu", 0)) == 0 and "gres" not in r, job
    rl = [j for j in jobs if j["rule"] in ("rl", "rl_multi")]
    assert all(j["resources"]["nodes"] == "1" and j["resources"]["gres"] == "gpu:8" for j in rl)
    assert "--settings" in text and '"engine":"verl"' in text
    assert paper_scale_job_counts() == ({r: sum(j["rule"] == r for j in jobs) for r in {j["rule"] for j in jobs}},
                                         total), "docs/paper-scale.md's GPU-hour table against the dry run"


def paper_scale_job_counts() -> tuple[dict[str, int], int]:
    """The jobs per rule of docs/paper-scale.md's GPU-hour table ("rollout (6), filter_rollouts (6)"; a rule
    without a count is one job) with the rule `all` its total row names, and that total."""
    text = (ROOT / "docs" / "paper-scale.md").read_text()
    table = text.split("### Expected GPU hours (H100-80GB)", 1)[1].split("\n\n", 2)[1]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.strip().splitlines()[2:]]
    *stages, total = rows
    counts: dict[str, int] = {}
    for stage in stages:
        for rule, n in re.findall(r"(\w+)(?: \((\d+)\))?", stage[1]):
            counts[rule] = counts.get(rule, 0) + int(n or 1)
    m = re.match(r"(\d+) jobs: the (\d+) above and `all`", total[1])
    assert m and int(m[2]) == sum(counts.values()), (total[1], sum(counts.values()))
    return {**counts, "all": 1}, int(m[1])


def test_the_paper_scale_table_counts_its_jobs():
    counts, total = paper_scale_job_counts()
    assert sum(counts.values()) == total


def test_dry_run_shows_rl_on_two_nodes(paper_workdir, tmp_path):
    work, model_cfg = paper_workdir
    prof = yaml.safe_load(PROFILE.read_text())
    prof["set-resources"]["rl"]["nodes"] = 2
    two = work / "profiles" / "slurm-2nodes"
    two.mkdir(exist_ok=True)
    (two / "config.yaml").write_text(yaml.safe_dump(prof))
    jobs, _ = dry_run(work, model_cfg, "profiles/slurm-2nodes")
    rl = [j["resources"] for j in jobs if j["rule"] == "rl"]
    assert len(rl) == 3 and all(r["nodes"] == "2" and r["gres"] == "gpu:8" for r in rl)


def test_profile_slurm_by_name_from_the_repository_root(paper_workdir, tmp_path):
    """`snakemake --profile slurm` as the README writes it: the name resolves through the link that
    envs/install.sh makes in Snakemake's user config directory."""
    import os

    work, model_cfg = paper_workdir
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "PYTHON": sys.executable}
    subprocess.run(["bash", str(work / "envs" / "link_slurm_profile.sh")], env=env, check=True, capture_output=True)
    assert (tmp_path / "xdg" / "snakemake" / "slurm").resolve() == (work / "profiles" / "slurm").resolve()
    proc = subprocess.run([*SNAKEMAKE, "--profile", "slurm", "-n", "--configfile", "config.paper.yaml", str(model_cfg)],
                          cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    assert "Using profiles slurm" in text and "gres=gpu:8" in text  # the SLURM profile's resources
    # without the link, the name alone is not found
    bare = subprocess.run([*SNAKEMAKE, "--profile", "slurm", "-n"], cwd=work, capture_output=True, text=True,
                          env={**env, "XDG_CONFIG_HOME": str(tmp_path / "empty")})
    assert bare.returncode != 0 and "no profile.yaml (or config.yaml) found" in bare.stdout + bare.stderr
