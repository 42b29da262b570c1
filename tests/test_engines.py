"""The engine plug-in: every engine in ``fgx.engines.ENGINES`` is one class with the operations and declarations
of ``fgx.engines.Engine``, and the DAG asks the engine instead of naming it, so a new engine plans its jobs
with no change to rules/ or plan/."""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path

import pytest
import yaml

import fgx.engines as engines
from fgx.plan import params

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = ("pretrain", "sample", "sft", "rl")


@pytest.mark.parametrize("name", sorted(engines.ENGINES))
def test_every_engine_is_one_class_with_the_protocols_operations_and_declarations(name):
    cls = engines.engine_class(name)
    assert cls.name == name and (ROOT / cls.env_file).is_file() and isinstance(cls.one_rl_job_per_host, bool)
    for op in OPERATIONS:
        want = list(inspect.signature(getattr(engines.Engine, op)).parameters)
        got = [p for p, v in inspect.signature(getattr(cls, op)).parameters.items() if v.default is inspect._empty
               and v.kind is not v.VAR_KEYWORD]
        assert got == want, (name, op, got)
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert isinstance(cls.gpus_per_job(config), int) and set(cls.job_settings(config)) == {"tensor_parallel_size"}
    assert isinstance(engines.get_engine(name), cls)


def test_an_unknown_engine_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match=r"engine 'jax' unknown; set config 'engine' to one of torch, verl"):
        engines.get_engine("jax")


def test_the_dag_names_no_engine():
    """rules/ and plan/ ask the engine (fgx.engines) and never compare its name."""
    names = "|".join(map(re.escape, engines.ENGINES))
    compare = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=)""")
    files = [*sorted((ROOT / "rules").glob("*.smk")), *sorted((ROOT / "src/fgx/plan").glob("*.py")),
             ROOT / "Snakefile"]
    found = [f"{f.relative_to(ROOT)}:{i}" for f in files for i, line in enumerate(f.read_text().splitlines(), 1)
             if compare.search(line)]
    assert found == [] and len(files) > 10


class ToyEngine:
    """An engine from outside src/fgx: what the DAG reads of it."""

    name = "toy"
    env_file = "envs/toy.yaml"
    one_rl_job_per_host = False

    @staticmethod
    def gpus_per_job(config):
        return 4

    @staticmethod
    def job_settings(config):
        return {"tensor_parallel_size": 4}


def test_a_new_engine_reaches_every_job_through_the_registry_alone(monkeypatch):
    """Registered by one line (here from a test module), an engine and its config section reach every job's
    settings through fgx.plan unchanged; the other engines' sections are there, empty."""
    monkeypatch.setitem(engines.ENGINES, "toy", f"{__name__}:ToyEngine")
    monkeypatch.setitem(sys.modules, __name__, sys.modules[__name__])
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config.update(engine="toy", toy={"knob": 1})
    job = json.loads(params.sampling_settings(config, "eval", "stage1", "test"))
    assert job["engine"] == "toy" and job["toy"] == {"knob": 1} and job["verl"] == {}
    assert job["tensor_parallel_size"] == 4 and job["device"] == config["device"]
    config["engine"] = "verl"
    assert json.loads(params.sampling_settings(config, "eval", "stage1", "test"))["toy"] == {}
