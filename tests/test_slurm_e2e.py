"""End to end through a real SLURM cluster (the one-node localhost cluster of .ci/slurm-up.sh).

Skipped unless ``SLURM_CONF`` is set and ``sinfo`` answers. Each test runs a DAG through
``profiles/slurm`` (its executor, options and set-resources, with sizes shrunk to the CI node and
status checks made fast: :func:`ci_profile`) and the same DAG locally (for the smoke DAG: the session's
``smoke_run``), then asserts that

* every job went through SLURM: it ran under a SLURM job id that Snakemake reported, and SLURM
  lists that id as COMPLETED (``squeue --states=all``, kept by MinJobAge) or in its job-completion
  log; GPU jobs saw their (fake) GPU;
* the outputs match the local run's: the same artifacts, identical problem sets, the same
  columns, rows and prompts in everything a model produced (sampled values are compared and
  reported; CPU sampling is not guaranteed bitwise reproducible across processes).

The first test uses a tiny throwaway workflow (seconds); the second the smoke DAG (.test/config.yaml).
With a cluster of two or more nodes (``NODES=2 bash .ci/slurm-up.sh``: two slurmd on localhost) a
third runs the profile's ``rl`` resources on two nodes and starts Ray over the allocation with
scripts/ray_slurm.sh, as the verl engine does for multi-node RL.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fgx.checkout import copy_checkout
from ray_probe import GCS_PROBE

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "profiles" / "slurm" / "config.yaml"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def _slurm_up() -> bool:
    if not os.environ.get("SLURM_CONF") or not shutil.which("sinfo"):
        return False
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return False
    return out.returncode == 0 and bool(re.search(r"idle|mixed|alloc", out.stdout))


pytestmark = [pytest.mark.slurm,
              pytest.mark.skipif(not _slurm_up(), reason="no SLURM cluster: run `bash .ci/slurm-up.sh` and the "
                                                         "`export SLURM_CONF=...` line it prints last")]


def _node_count() -> int:
    if not shutil.which("sinfo"):
        return 0
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True)
    return len(set(out.stdout.split())) if out.returncode == 0 else 0


def _shrink(res: dict) -> dict:
    """One rule's paper-scale resources, scaled to the 2-core / fake-2-GPU CI node."""
    out = dict(res)
    caps = {"mem_mb": 1500, "runtime": 30, "cpus_per_task": 1, "cpus_per_gpu": 1, "gpu": 1,
            "nodes": max(1, _node_count())}
    for key, cap in caps.items():
        if key in out and isinstance(out[key], int):
            out[key] = min(out[key], cap)
    if str(out.get("gres", "")).startswith("gpu:"):
        out["gres"] = "gpu:1"
    return out


def ci_profile(dst: Path, set_resources: dict | None = None) -> Path:
    """profiles/slurm as it is, with resources shrunk and status checks fast (a CI node, not a cluster)."""
    prof = yaml.safe_load(PROFILE.read_text())
    prof["default-resources"] = _shrink(prof["default-resources"])
    prof["set-resources"] = {rule: _shrink(r) for rule, r in
                             (set_resources if set_resources is not None else prof["set-resources"]).items()}
    if not prof["set-resources"]:
        del prof["set-resources"]
    prof.update({"jobs": 4, "retries": 0, "latency-wait": 10, "keep-going": False,
                 "slurm-status-command": "squeue",            # the CI cluster keeps no accounting database
                 "slurm-init-seconds-before-status-checks": 2,
                 "slurm-no-account": True})
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "config.yaml").write_text(yaml.safe_dump(prof, sort_keys=False))
    return dst


def snakemake(workdir: Path, *args: str, timeout: int = 3000) -> str:
    proc = subprocess.run([*SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        logs = "".join(f"\n--- {p}\n{p.read_text()[-2000:]}"
                       for p in sorted((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))[-4:])
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{text[-6000:]}{logs}")
    return text


def submitted_job_ids(log: str) -> dict[str, str]:
    """{SLURM job id: rule} from Snakemake's "submitted with SLURM jobid N (log: .../rule_<rule>/...)" lines."""
    return dict(re.findall(r"submitted with SLURM jobid (\d+) \(log: \S*?/slurm_logs/rule_(\w+)/", log))


def slurm_states(job_ids) -> dict[str, str]:
    """State of each job id as SLURM records it (squeue --states=all, then the job-completion log)."""
    out = subprocess.run(["squeue", "--states=all", "--noheader", "-o", "%i %T"], capture_output=True, text=True)
    states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
    conf = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True).stdout
    loc = re.search(r"^JobCompLoc\s*=\s*(\S+)", conf, flags=re.M)
    if loc and Path(loc[1]).is_file():
        for m in re.finditer(r"JobId=(\d+) .*?JobState=(\w+)", Path(loc[1]).read_text()):
            states.setdefault(m[1], m[2])
    return {j: states.get(j, "MISSING") for j in job_ids}


# ----------------------------------------------------------------------------- a throwaway DAG
TINY = textwrap.dedent('''
    localrules: all

    rule all:
        input: "out/summary.txt"

    rule gpu_step:
        output: data="out/gpu_{i}.txt", meta="meta/gpu_{i}.txt"
        resources: gpu=1, mem_mb=500, runtime=5
        shell:
            "python -c 'print(sum(range({wildcards.i} * 1000)))' > {output.data}; "
            "echo job=${{SLURM_JOB_ID:-local}} gpus=${{CUDA_VISIBLE_DEVICES:-none}} > {output.meta}"

    rule cpu_step:
        output: data="out/cpu.txt", meta="meta/cpu.txt"
        resources: mem_mb=500, runtime=5
        shell: "echo cpu > {output.data}; echo job=${{SLURM_JOB_ID:-local}} > {output.meta}"

    rule summary:
        input: expand("out/gpu_{i}.txt", i=[1, 2, 3]), "out/cpu.txt"
        output: "out/summary.txt"
        resources: mem_mb=500, runtime=5
        shell: "cat {input} > {output}"
''')


def test_throwaway_dag_runs_through_slurm_like_locally(tmp_path):
    for name in ("slurm", "local"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "Snakefile").write_text(TINY)
    prof = ci_profile(tmp_path / "profile", set_resources={})
    log = snakemake(tmp_path / "slurm", "--profile", str(prof), timeout=600)
    snakemake(tmp_path / "local", "--cores", "2", timeout=600)

    ids = submitted_job_ids(log)
    assert sorted(ids.values()) == ["cpu_step", "gpu_step", "gpu_step", "gpu_step", "summary"], log[-3000:]
    assert set(slurm_states(ids).values()) == {"COMPLETED"}, slurm_states(ids)
    for i in (1, 2, 3):
        meta = (tmp_path / "slurm" / f"meta/gpu_{i}.txt").read_text()
        jid = re.search(r"job=(\d+)", meta)
        assert jid and jid[1] in ids and re.search(r"gpus=\d", meta), meta  # a (fake) GPU was bound
    for f in sorted((tmp_path / "local" / "out").iterdir()):
        assert (tmp_path / "slurm" / "out" / f.name).read_bytes() == f.read_bytes(), f.name


# ----------------------------------------------------------------------------- RL on two nodes
RAY_CHECK = GCS_PROBE + textwrap.dedent(f'''
    import json, os, sys
    from pathlib import Path
    sys.path.insert(0, {str(ROOT / "src")!r})
    import ray
    from fgx.engines.verl.environment import slurm_job_nodes
    ray.init()  # joins the cluster named by RAY_ADDRESS
    address = os.environ["RAY_ADDRESS"]
    print(json.dumps({{"address": address, "nodes": len(ray.nodes()),
                      "gpus": ray.cluster_resources().get("GPU", 0), "engine_nodes": slurm_job_nodes(),
                      "no_token": gcs(address, None),
                      "job_token": gcs(address, Path(os.environ["RAY_AUTH_TOKEN_PATH"]).read_text()),
                      "dashboard": ray._private.worker.get_dashboard_url() or ""}}))
''')
# the rule's command: ray_slurm.sh in the environment the verl engine gives it (fgx.engines.verl.environment)
RAY_RUN = textwrap.dedent('''
    import os, subprocess, sys
    from pathlib import Path
    from fgx.engines.verl.environment import private_ray
    with private_ray(Path.cwd(), one_node=False) as env:
        env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
        sys.exit(subprocess.run(sys.argv[1:], env=env).returncode)
''')


@pytest.mark.skipif(not _slurm_up() or _node_count() < 2,
                    reason="needs a SLURM cluster of >= 2 nodes (NODES=2 bash .ci/slurm-up.sh)")
def test_rl_resources_on_two_nodes_start_ray_over_the_allocation(tmp_path):
    pytest.importorskip("ray")
    venv_bin = Path(sys.executable).parent
    (tmp_path / "check_ray.py").write_text(RAY_CHECK)
    (tmp_path / "run_ray.py").write_text(RAY_RUN)
    (tmp_path / "Snakefile").write_text(textwrap.dedent(f'''
        localrules: all

        rule all:
            input: "ray.json"

        rule rl:
            output: "ray.json"
            resources: gpu=1
            shell:
                "export PATH={venv_bin}:$PATH PYTHONPATH={ROOT / 'src'}; "
                "{sys.executable} run_ray.py bash {ROOT / 'scripts' / 'ray_slurm.sh'} -- {sys.executable} check_ray.py "
                "| tail -n 1 > {{output}}"
    '''))
    rl = {**yaml.safe_load(PROFILE.read_text())["set-resources"]["rl"], "nodes": 2}
    prof = ci_profile(tmp_path / "profile", set_resources={"rl": rl})
    log = snakemake(tmp_path, "--profile", str(prof), timeout=600)
    ids = submitted_job_ids(log)
    assert list(ids.values()) == ["rl"] and set(slurm_states(ids).values()) == {"COMPLETED"}
    got = yaml.safe_load((tmp_path / "ray.json").read_text())
    assert got["nodes"] == 2 and got["gpus"] == 2 and got["address"], got  # gres gpu:1 on each of 2 nodes
    assert got["engine_nodes"] == 2, got  # what the verl engine passes as trainer.nnodes
    assert got["no_token"] == "UNAUTHENTICATED" and got["job_token"] == "OK" and got["dashboard"] == "", got


# ----------------------------------------------------------------------------- the smoke DAG
WALL_CLOCK = re.compile(r"time")  # RL metrics such as step_time_s: wall clock, not results


def _tables(root: Path) -> dict[str, pd.DataFrame]:
    """Every parquet under results/ and CSV under figures/, wall-clock metrics left out."""
    files = [*sorted((root / "results").rglob("*.parquet")), *sorted((root / "figures").glob("*.csv"))]
    out = {}
    for f in files:
        if "/work/" in str(f) or f.name.startswith("."):
            continue
        table = pd.read_parquet(f) if f.suffix == ".parquet" else pd.read_csv(f)
        if "metric" in table.columns:
            table = table[~table["metric"].astype(str).str.contains(WALL_CLOCK)].reset_index(drop=True)
        out[str(f.relative_to(root))] = table
    return out


# What the Countdown lineage adds to the smoke DAG (countdown.enabled): its data, the Multi-Base and its RL runs,
# their evaluations and Table 1
COUNTDOWN_LINEAGE = re.compile(r"countdown|stage1_multi|rl_multi_|results/rl/multi_|results/rft/mix/")


@pytest.mark.slow
def test_smoke_dag_through_slurm_matches_a_local_run(smoke_run, tmp_path):
    """The smoke DAG through SLURM against the local smoke run (conftest's ``smoke_run``). The Countdown lineage
    adds ~20 jobs of the same rules (evaluate, rft_sft, rl) and is left out of the SLURM run, which keeps it
    inside CI's time budget; every other artifact of the local run is compared."""
    if not (ROOT / ".test" / "config.yaml").exists():
        pytest.skip("no smoke config .test/config.yaml")
    runs = {"slurm": tmp_path / "slurm" / "fgx", "local": smoke_run}
    copy_checkout(ROOT, runs["slurm"])
    (runs["slurm"] / "figures").mkdir(exist_ok=True)
    (runs["slurm"] / "no_countdown.yaml").write_text("countdown:\n  enabled: false\n")
    prof = ci_profile(tmp_path / "profile")
    log = snakemake(runs["slurm"], "--profile", str(prof), "--configfile", ".test/config.yaml", "no_countdown.yaml")

    ids = submitted_job_ids(log)
    total = int(re.search(r"^total\s+(\d+)$", log, flags=re.M)[1])
    local = len(re.findall(r"^localrule \w+:", log, flags=re.M))
    assert len(ids) == total - local, f"{len(ids)} SLURM jobs for {total} DAG jobs of which {local} are local rules"
    states = slurm_states(ids)
    assert set(states.values()) == {"COMPLETED"}, {j: s for j, s in states.items() if s != "COMPLETED"}
    assert {"rl", "evaluate", "rft_sft", "rollout"} <= set(ids.values())

    # The same artifacts with the same data. Problem sets are deterministic and must be equal; what
    # models produce must have the same files, columns, rows and prompts. (Values are usually
    # bit-identical too, but CPU sampling is not guaranteed bitwise reproducible across processes:
    # one of 24 eval rows once differed, so equality of sampled values is reported, not required.)
    slurm_tables = _tables(runs["slurm"])
    local_tables = {k: v for k, v in _tables(runs["local"]).items() if not COUNTDOWN_LINEAGE.search(k)}
    assert sorted(slurm_tables) == sorted(local_tables) and len(local_tables) > 10
    differing = []
    for name, local in local_tables.items():
        got = slurm_tables[name]
        if name.startswith("results/data/"):
            pd.testing.assert_frame_equal(got, local, obj=name)
            continue
        assert list(got.columns) == list(local.columns) and len(got) == len(local), name
        for col in ("data_source", "prompt", "step", "metric", "level", "model", "k"):
            if col in local.columns:
                assert got[col].astype(str).tolist() == local[col].astype(str).tolist(), (name, col)
        if not got.equals(local):
            differing.append(name)
    models = sorted(p.name for p in (runs["local"] / "results" / "models").iterdir()
                    if not p.name.startswith(".") and not COUNTDOWN_LINEAGE.search(f"results/models/{p.name}"))
    assert models == sorted(p.name for p in (runs["slurm"] / "results" / "models").iterdir()
                            if not p.name.startswith("."))
    for model in models:
        assert (runs["slurm"] / "results" / "models" / model / "model.safetensors").exists(), model
    print(f"tables with differing sampled values: {differing or 'none'}")
