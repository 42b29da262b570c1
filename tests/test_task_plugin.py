"""The task plug-in: a task family is one package, one line of fgx.tasks.registry.FAMILIES and one config
section, and nothing else changes.

A toy family from outside src/fgx/tasks (tests/sums_task: sums of one-digit numbers, its own generator,
reward, config section, a model trained on its data and a figure) is registered in a scratch copy of the
checkout. The DAG then plans its problem sets, the base's rollouts on its training set, the filter and the
SFT on them, the evaluation and its metrics, and its figure; its generate job runs beside the string task's,
each with its own command; its rows are checked, scored and keyed for the leakage check through its record;
a bad value in its section is refused by name."""

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dagtools import planned_jobs
from fgx.checkout import copy_checkout
from smoke import snakemake

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = "src/fgx/tasks/registry.py"
LINE = '    "sums_task",\n'
SECTION = "\nsums:\n  per_level: 4\n  train_levels: [1, 2]\n  test_levels: [1, 3]\n"


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A copy of the checkout with the toy family registered: its package beside fgx, one registry line,
    one config section."""
    work = copy_checkout(ROOT, tmp_path_factory.mktemp("plugin") / "fgx")
    shutil.copytree(ROOT / "tests" / "sums_task", work / "src" / "sums_task",
                    ignore=shutil.ignore_patterns("__pycache__"))
    registry = work / REGISTRY
    text = registry.read_text()
    last = '    "fgx.tasks.countdown",\n'
    assert text.count(last) == 1
    registry.write_text(text.replace(last, last + LINE))
    with open(work / "config.yaml", "a") as fh:
        fh.write(SECTION)
    return work


def test_nothing_else_changes(work):
    """Against the checkout: a new package outside src/fgx/tasks, one line added to the registry, one
    section appended to config.yaml; every other file is byte for byte the same."""
    changed = set()
    for path in work.rglob("*"):
        rel = path.relative_to(work)
        if path.is_file() and rel.parts[:2] != ("src", "sums_task") and "__pycache__" not in rel.parts:
            if not (ROOT / rel).is_file() or (ROOT / rel).read_bytes() != path.read_bytes():
                changed.add(str(rel))
    assert changed == {REGISTRY, "config.yaml"}
    diff = [d for d in difflib.ndiff((ROOT / REGISTRY).read_text().splitlines(True),
                                     (work / REGISTRY).read_text().splitlines(True)) if d[:1] in "+-"]
    assert diff == ["+ " + LINE]
    assert (work / "config.yaml").read_text() == (ROOT / "config.yaml").read_text() + SECTION


def test_the_dag_plans_its_generate_sample_score_and_evaluate_jobs(work):
    before, after = planned_jobs(ROOT, "--forceall"), planned_jobs(work, "--forceall")
    added = {rule: after.get(rule, 0) - before.get(rule, 0) for rule in after}
    # its two problem sets; the base sampled on its training set, filtered, fine-tuned on (sums_stage1);
    # that model evaluated on its test set and scored; its figure
    assert {r: n for r, n in added.items() if n} == {"generate_sums": 2, "rollout": 1, "filter_rollouts": 1,
                                                     "rft_sft": 1, "evaluate": 1, "metrics": 1, "figure": 1}
    alone = planned_jobs(work, "--forceall", "figures/sums_accuracy.pdf")
    assert alone == {"generate_strings": 3, "pretrain_base": 1, "generate_sums": 2, "rollout": 1,
                     "filter_rollouts": 1, "rft_sft": 1, "evaluate": 1, "metrics": 1, "figure": 1}
    proc = snakemake(work, "-n", "--forceall", "--printshellcmds", "figures/sums_accuracy.pdf")
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    out = proc.stdout
    assert "python -m sums_task generate --split sums_test --num 4 --levels 1 3 --seed " in out
    assert "--out results/data/sums/sums_test.parquet" in out
    assert "sample.py --model results/models/sums_stage1 --data results/data/sums/sums_test.parquet" in out
    assert f'"n":{cfg["stage1"]["rollout"]["n"]},' in out  # the base's rollouts: Stage 1's sampling
    assert "metrics.py --samples results/eval/sums_stage1/sums_test.parquet" in out


def test_its_generate_job_runs_its_own_command_beside_the_string_tasks(work):
    snakemake(work, "results/data/sums/sums_test.parquet", "results/data/strings/stage1.parquet", "--cores", "1",
              "--configfile", ".test/config.yaml")
    script = """
import json, sys
import pandas as pd
from fgx.tasks import compute_score
from fgx.tasks.contract import check_problem_file
from fgx.tasks.leakage import row_keys
sums, strings = (pd.read_parquet(f"results/data/{f}.parquet") for f in ("sums/sums_test", "strings/stage1"))
row = sums.iloc[0]
answer = json.loads(row["reward_model"]["ground_truth"])["answer"]
print(json.dumps({
    "sums": sorted(set(sums["data_source"])), "strings": sorted({d.split("-")[0] for d in strings["data_source"]}),
    "rows": check_problem_file("results/data/sums/sums_test.parquet"),
    "right": compute_score(row["data_source"], f"{answer}\\n", row["reward_model"]["ground_truth"]),
    "wrong": compute_score(row["data_source"], "no", row["reward_model"]["ground_truth"]),
    "key": row_keys("results/data/sums/sums_test.parquet")[0].key}))
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=work, capture_output=True, text=True,
                          env={"PYTHONPATH": str(work / "src"), "PATH": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert got["sums"] == ["toy-sums-depth1", "toy-sums-depth2", "toy-sums-depth3"] and got["strings"] == ["codeio"]
    assert got["rows"] == 12 and got["right"]["acc"] and not got["wrong"]["acc"]
    assert got["key"].startswith("sums:") and got["key"].endswith("=")


def test_a_bad_value_in_its_section_is_named(work, tmp_path):
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"sums": {"per_level": 0}}))
    proc = snakemake(work, "-n", "--configfile", str(overlay), check=False)
    assert proc.returncode != 0 and "key 'sums.per_level': got 0; minimum is 1" in proc.stdout + proc.stderr


def test_knobs_write_publishes_its_section(work):
    """`python -m fgx.knobs --write` (asked here for what it would write) puts its keys into the schema and
    gives docs/knobs.md a table of them: no file but the generated ones needs editing."""
    script = """
import json
from fgx import knobs
print(json.dumps({str(p.relative_to(knobs.ROOT)): text for p, text in knobs.generated().items()}))
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=work, capture_output=True, text=True,
                          env={"PYTHONPATH": str(work / "src"), "PATH": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    schema = yaml.safe_load(got["schemas/config.schema.yaml"])
    assert "sums" in schema["required"] and schema["properties"]["sums"]["properties"]["per_level"]["minimum"] == 1
    assert got["docs/knobs.md"].startswith((ROOT / "docs" / "knobs.md").read_text().rstrip("\n"))
    assert got["docs/knobs.md"].endswith(
        "## `sums`\n\na toy task family: sums of one-digit numbers.\n\n<!-- knobs: sums -->\n"
        "| key | allowed | default | what it is |\n|---|---|---|---|\n"
        "| `per_level` | integer ≥ 1 | `4` | problems per level in each problem set |\n"
        "| `train_levels` | [min, max], integers 1–12 | `[1, 2]` | [min, max] level of the training problems |\n"
        "| `test_levels` | [min, max], integers 1–12 | `[1, 3]` | [min, max] level of the test problems |\n"
        "<!-- /knobs -->\n")
