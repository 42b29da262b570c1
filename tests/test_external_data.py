"""Upstream's released data as drop-in inputs (data.external), and fgx's paper-style rows loading
together with upstream's in one `datasets` call."""

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from dagtools import planned_jobs
from fgx.plan import models, splits
from fgx.io import write_parquet
from fgx.tasks import strings as S
from fgx.tasks.contract import ContractError, check_problem_file

ROOT = Path(__file__).resolve().parents[1]


def upstream_file(path: Path, level_lo: int, level_hi: int, per_level: int, stage: int, seed: int) -> Path:
    """A problem file as upstream's preprocessing writes it (`datasets.Dataset.from_list(...).to_parquet`):
    plain string columns, extra_info = {index, split, depth}; programs from fgx's generator."""
    rows = []
    for p in S.generate_problems(stage=stage, split="train" if stage == 1 else "test", min_level=level_lo,
                                 max_level=level_hi, num=per_level * (level_hi - level_lo + 1), seed=seed):
        code = S.program_code(p.expr, stage)
        rows.append({
            "data_source": f"codeio-forward-incomplete-depth{p.level}",
            "prompt": [{"role": "user", "content": S.FORWARD_PROMPT.format(code=code, input=p.x)}],
            "ability": "reasoning",
            "reward_model": {"style": "rule", "ground_truth": json.dumps(
                {"ref_input": {"x": p.x}, "ref_output": p.output, "ref_code": code, "funcname": "main_solution"})},
            "extra_info": {"index": 0, "split": "dummy", "depth": p.level},
        })
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_paper_rows_load_together_with_upstreams_in_one_datasets_call(tmp_path):
    datasets = pytest.importorskip("datasets")
    up = upstream_file(tmp_path / "upstream.parquet", 1, 2, 4, 2, 0)
    ours = S.generate(stage=2, split="test", min_level=1, max_level=2, num=8, seed=1, style="paper")
    write_parquet(ours, tmp_path / "fgx.parquet")
    both = datasets.load_dataset("parquet", data_files=[str(up), str(tmp_path / "fgx.parquet")], split="train")
    assert len(both) == 16 and both.features == datasets.load_dataset(
        "parquet", data_files=[str(up)], split="train").features


def test_the_contract_check_names_file_field_and_fix(tmp_path):
    good = upstream_file(tmp_path / "good.parquet", 1, 1, 3, 1, 0)
    assert check_problem_file(good) == 3
    table = pq.read_table(good)
    pq.write_table(table.drop_columns(["reward_model"]), tmp_path / "no_rm.parquet")
    with pytest.raises(ContractError, match=r"no_rm.parquet: the problem set lacks column\(s\) reward_model"):
        check_problem_file(tmp_path / "no_rm.parquet")
    rows = table.to_pylist()
    rows[0]["reward_model"]["ground_truth"] = json.dumps({"ref_output": "x"})
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "bad_gt.parquet")
    with pytest.raises(ContractError, match="row 0: field reward_model.ground_truth lacks ref_input, ref_code"):
        check_problem_file(tmp_path / "bad_gt.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(ContractError, match="junk.parquet: the problem set is not readable parquet"):
        check_problem_file(tmp_path / "junk.parquet")
    with pytest.raises(ContractError, match="missing.parquet: the problem set is not a file"):
        check_problem_file(tmp_path / "missing.parquet")


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    d = tmp_path_factory.mktemp("upstream")
    return {"stage1": upstream_file(d / "stage1.parquet", 1, 1, 20, 1, 1),
            "level2": upstream_file(d / "level2.parquet", 2, 2, 20, 2, 2),
            "test": upstream_file(d / "test.parquet", 1, 8, 4, 2, 3), "dir": d}


def test_a_dry_run_with_upstreams_files_plans_the_dag_without_generating_them(upstream, tmp_path):
    overlay = tmp_path / "upstream.yaml"
    external = {k: str(upstream[k]) for k in ("stage1", "level2", "test")}
    overlay.write_text(yaml.safe_dump({"data": {"external": external}}))
    default = planned_jobs(ROOT, "--forceall")
    jobs = planned_jobs(ROOT, "--forceall", "--configfile", str(overlay))
    assert jobs["generate_strings"] == default["generate_strings"] - 3  # stage1, level2 and test are not generated
    assert jobs["rl"] == default["rl"] and jobs["evaluate"] == default["evaluate"]
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    cfg["data"]["external"] = {"test": str(upstream["test"])}
    assert splits.data_path(cfg, "test") == str(upstream["test"])
    assert models.rl_sources(cfg, "rl_level2")["val"] == "results/data/strings/val.parquet"


def test_a_bad_external_file_fails_before_any_job(upstream, tmp_path):
    bad = tmp_path / "bad.parquet"
    pq.write_table(pq.read_table(upstream["test"]).drop_columns(["extra_info"]), bad)
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"data": {"external": {"test": str(bad)}}}))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(overlay)], cwd=ROOT,
                          capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "bad.parquet: the data.external.test problem set lacks column(s) extra_info" in out
    assert "Building DAG" not in out
