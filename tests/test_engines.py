"""The engine plug-in: an engine is one class held to ``fgx.engines.Engine`` (a Protocol) and registered by one
line of ``fgx.settings.ENGINES``; the DAG asks the engine instead of naming it.

A toy engine from outside src/fgx (tests/toy_engine.py: empty responses, models copied) is registered in a
scratch copy of the checkout, its module beside fgx and one registry line, nothing else changed. The DAG then
plans every job it plans for the torch engine, each sampling and training job with the toy's settings and the
resources it declares, and runs a chain of them through the toy (the base, its rollouts, their filter, the
SFT, an evaluation and its metrics, an RL run) whose files fgx's own readers accept."""

from __future__ import annotations

import difflib
import json
import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

import fgx.engines as engines
from dagtools import planned_jobs
from fgx.checkout import OUTPUTS, copy_checkout
from fgx.plan import params
from smoke import snakemake

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = "src/fgx/settings.py"
LAST = '    "verl": "fgx.engines.verl:VerlEngine",\n'
LINE = '    "toy": "toy_engine:ToyEngine",\n'
# the rules whose jobs run an engine operation (the rest run in the torch environment whatever the engine)
ENGINE_RULES = {"pretrain_base", "rollout", "rft_sft", "evaluate", "rl", "rl_multi"}


@pytest.mark.parametrize("name", sorted(engines.ENGINES))
def test_every_registered_engine_implements_the_protocol(name):
    cls = engines.engine_class(name)  # refuses a class that falls short, naming each shortfall
    assert engines.protocol_problems(cls, name) == [] and isinstance(engines.get_engine(name), cls)
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert isinstance(cls.gpus_per_job(config), int) and set(cls.job_settings(config)) == {"tensor_parallel_size"}


class Incomplete:
    """An engine with a wrong declaration, an operation missing and one the DAG cannot call."""

    name = "incomplete"
    env_file = "envs/incomplete.yaml"
    one_rl_job_per_host = "no"

    @staticmethod
    def gpus_per_job(config):
        return 0

    @staticmethod
    def job_settings(config):
        return {"tensor_parallel_size": 1}

    def pretrain(self, data_paths, out_dir, work_dir, settings):
        pass

    def sample(self, model_dir, rows, out_path, work_dir, settings):
        pass

    def sft(self, model_dir, data_path, out_dir, work_dir, settings, epochs):
        pass


def test_an_engine_that_falls_short_of_the_protocol_is_refused_naming_each_shortfall(monkeypatch):
    monkeypatch.setitem(engines.ENGINES, "incomplete", f"{__name__}:Incomplete")
    with pytest.raises(TypeError) as err:
        engines.engine_class("incomplete")
    message = str(err.value)
    assert message.startswith("engine 'incomplete' (test_engines:Incomplete, fgx.settings.ENGINES) does not "
                              "implement fgx.engines.Engine: ")
    for words in ("declaration one_rl_job_per_host must be a bool, found 'no'",
                  "env_file envs/incomplete.yaml is not a file of the checkout",
                  "sft(self, model_dir, data_path, out_dir, work_dir, settings, epochs) cannot be called as sft(",
                  "no rl()"):
        assert words in message, message
    assert "pretrain" not in message and "sample" not in message and "gpus_per_job" not in message


def test_an_unknown_engine_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match=r"engine 'jax' unknown; set config 'engine' to one of torch, verl"):
        engines.get_engine("jax")


def test_the_dag_names_no_engine():
    """rules/, plan/ and dag/ ask the engine (fgx.engines) and never compare its name."""
    names = "|".join(map(re.escape, engines.ENGINES))
    compare = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=)""")
    files = [*sorted((ROOT / "rules").glob("*.smk")), *sorted((ROOT / "src/fgx/plan").glob("*.py")),
             *sorted((ROOT / "src/fgx/dag").glob("*.py")), ROOT / "Snakefile"]
    found = [f"{f.relative_to(ROOT)}:{i}" for f in files for i, line in enumerate(f.read_text().splitlines(), 1)
             if compare.search(line)]
    assert found == [] and len(files) > 10


def test_every_job_carries_the_running_engines_section_and_the_others_empty(monkeypatch):
    """An engine's knobs reach (and rerun) only its own jobs: every job's settings carry each engine's section
    under its name, empty but the running engine's."""
    monkeypatch.setitem(engines.ENGINES, "toy", "toy_engine:ToyEngine")
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config.update(engine="toy", toy={"knob": 1})
    job = json.loads(params.sampling_settings(config, "eval", "stage1", "test"))
    assert job["engine"] == "toy" and job["toy"] == {"knob": 1} and job["verl"] == {}
    assert job["tensor_parallel_size"] == 3 and job["device"] == config["device"]
    config["engine"] = "verl"
    assert json.loads(params.sampling_settings(config, "eval", "stage1", "test"))["toy"] == {}


# ----------------------------------------------------------------------------- a new engine, from outside
@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A copy of the checkout with the toy engine registered: its module beside fgx, one registry line."""
    work = copy_checkout(ROOT, tmp_path_factory.mktemp("engine") / "fgx")
    shutil.copy(ROOT / "tests" / "toy_engine.py", work / "src" / "toy_engine.py")
    registry = work / REGISTRY
    text = registry.read_text()
    assert text.count(LAST) == 1
    registry.write_text(text.replace(LAST, LAST + LINE))
    return work


def _toy(work: Path, *overlays: str) -> list[str]:
    """--configfile arguments: the overlays, then engine: toy (outside the copy, so the copy stays as it is)."""
    toy = work.parent / "engine-toy.yaml"
    toy.write_text("engine: toy\n")
    return ["--configfile", *overlays, str(toy)]


def test_nothing_else_changes(work):
    """Against the checkout: a new module beside fgx and one line added to the registry; every other file is
    byte for byte the same."""
    changed = set()
    for path in work.rglob("*"):
        rel = path.relative_to(work)
        if path.is_file() and rel != Path("src/toy_engine.py") and not ({"__pycache__", ".snakemake"} & set(rel.parts)
                                                                       or rel.parts[0] in OUTPUTS):
            if not (ROOT / rel).is_file() or (ROOT / rel).read_bytes() != path.read_bytes():
                changed.add(str(rel))
    assert changed == {REGISTRY}
    diff = [d for d in difflib.ndiff((ROOT / REGISTRY).read_text().splitlines(True),
                                     (work / REGISTRY).read_text().splitlines(True)) if d[:1] in "+-"]
    assert diff == ["+ " + LINE]


def _jobs(out: str) -> list[tuple[str, dict, dict]]:
    """(rule, resources, --settings) of every job a dry run with --printshellcmds prints."""
    jobs = []
    for block in re.split(r"\n(?=rule \w+:)", out):
        rule = re.match(r"rule (\w+):", block)
        command = re.search(r"^Shell command: (.*)$", block, re.M)
        if not rule or not command:
            continue
        resources = dict(kv.split("=", 1) for kv in re.search(r"resources: (.*)", block)[1].split(", "))
        argv = shlex.split(command[1])
        settings = json.loads(argv[argv.index("--settings") + 1]) if "--settings" in argv else {}
        jobs.append((rule[1], resources, settings))
    return jobs


def test_the_dag_plans_every_job_through_the_new_engine(work):
    """The toy plans the jobs torch plans, and every job that runs an engine operation carries the toy's name,
    the settings it declares and the GPUs it asks for; its RL jobs take turns on a host as it declares."""
    assert planned_jobs(work, "--forceall", *_toy(work)) == planned_jobs(ROOT, "--forceall")
    jobs = _jobs(snakemake(work, "-n", "--forceall", "--printshellcmds", *_toy(work)).stdout)
    ran = {rule for rule, _, _ in jobs}
    assert ENGINE_RULES <= ran
    for rule, resources, settings in jobs:
        if rule in ENGINE_RULES:
            assert settings["engine"] == "toy" and settings["tensor_parallel_size"] == 3, (rule, settings)
            assert settings["verl"] == {} and resources["gpu"] == "3", (rule, resources)
            assert resources.get("verl_rl") == ("1" if rule.startswith("rl") else None), (rule, resources)
        else:
            assert settings.get("engine") is None and resources.get("gpu", "0") == "0", (rule, settings, resources)


def test_its_jobs_run_through_it_and_fgx_reads_what_it_writes(work):
    """The base, its rollouts, the filter and the SFT on them, an evaluation, its metrics and an RL run, on the
    smoke overlay: each engine job's output is the toy's, and the light jobs read its samples."""
    stage1, evaluation, metrics = ("results/models/stage1", "results/eval/stage1/test.parquet",
                                   "results/metrics/stage1/test.parquet")
    rl = "results/rl/level1/validation.parquet"
    # the targets first: --configfile takes every argument after it
    snakemake(work, "--cores", "2", stage1, metrics, rl, *_toy(work, ".test/config.yaml"))
    for model, op in (("base", "pretrain"), ("stage1", "sft"), ("rl_level1", "rl")):
        record = json.loads((work / "results/models" / model / "toy_engine.json").read_text())
        assert record["op"] == op and record["settings"]["engine"] == "toy", (model, record)
    samples = pd.read_parquet(work / evaluation)
    assert set(samples["responses"].map(tuple)) == {("",) * len(samples["responses"][0])}
    assert (pd.read_parquet(work / metrics)["pass_at_k"] == 0).all()
    assert pd.read_parquet(work / rl)["n_correct"].eq(0).all()
