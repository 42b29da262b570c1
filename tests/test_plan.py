"""fgx.plan's own contracts: every artifact path written once and parsed back by the same pattern, the
rules wiring files through `plan` (fgx.dag.Plan) only, every figure declaring its inputs and settings."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from fgx.dag import Plan
from fgx.dag.targets import spec
from fgx.plan import models, paths
from fgx.plan.figures import FigureSpec, figure_names

ROOT = Path(__file__).resolve().parents[1]
RULE_FILES = [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]


def test_every_pattern_parses_back_what_it_was_filled_with():
    patterns = {name: value for name, value in vars(paths).items()
                if name.isupper() and isinstance(value, str) and "{" in value}
    assert len(patterns) >= 15, sorted(patterns)
    for name, pattern in patterns.items():
        wildcards = re.findall(r"\{(\w+)\}", pattern)
        names = {w: f"x{i}_{w}" for i, w in enumerate(wildcards)}
        path = paths.fill(pattern, **names)
        assert paths.parse(pattern, path) == names, name
        # the trailing components decide, so a copy of results/ elsewhere parses the same
        assert paths.parse(pattern, "/elsewhere/" + path) == names, name
    assert paths.parse(paths.EVAL, "results/eval/rl_level2/test_full_trace.parquet") == {
        "model": "rl_level2", "split": "test_full_trace"}
    with pytest.raises(ValueError, match="not a path of the form"):
        paths.parse(paths.EVAL, "results/eval/stage1/test.csv")


def test_rl_directories_and_models_invert_each_other():
    pairs = [(lineage, run) for lineage in models.rl_lineages() for run in models.RL_RUNS]
    assert set(models.rl_lineages()) == {"string", "multi", "arithmetic", "arithmetic_multi"} and len(pairs) == 12
    for lineage, run in pairs:
        rl_dir = paths.parse(paths.RL_METRICS, models.rl_metrics(run, lineage))["rl_dir"]
        assert models.rl_model_of_dir(rl_dir) == models.rl_model(run, lineage)
        assert models.rl_models()[models.rl_model(run, lineage)] == (lineage, run)
    with pytest.raises(ValueError, match="not the directory of an RL run"):
        models.rl_model_of_dir("level3")


def test_rules_take_every_path_from_the_plan_and_hold_no_logic():
    assert len(RULE_FILES) == 10
    for f in RULE_FILES:
        text = f.read_text()
        assert "results/" not in text, f"{f.name}: an artifact path spelt out (take it from fgx.plan.paths)"
        assert "lambda" not in text, f"{f.name}: a lambda in the rules (a method of fgx.dag.Plan instead)"
    common = (ROOT / "rules" / "common.smk").read_text()
    assert not re.search(r"^def ", common, re.M), "common.smk: adapters belong in fgx.dag.Plan"


def test_every_figure_declares_its_inputs_and_settings():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert len(figure_names()) == 10
    for name in figure_names():
        s = spec(name)
        assert isinstance(s, FigureSpec), name
        assert all(k in config["figures"] for k in s.keys), name
        assert all(isinstance(p, str) for p in s.inputs(config)) and s.inputs(config), name
    with pytest.raises(ValueError, match="unknown figure"):
        spec("fig_7")


def test_plan_methods_read_the_wildcards():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    plan = Plan(config)
    w = SimpleNamespace(model="stage1", split="level2_chunk1", run="level2", figure="rft_vs_rl")
    assert plan.data(w) == "results/data/strings/level2_chunk1.parquet"
    assert plan.model(w) == "results/models/stage1"
    assert plan.rl_inputs("string")(w)["train"] == "results/data/strings/level2.parquet"
    assert plan.rl_inputs("multi")(w)["init"] == "results/models/stage1_multi"
    assert plan.rl_settings("multi")(w) != plan.rl_settings("string")(w)  # countdown.rl_steps
    assert plan.figure_inputs(w)[0] == "results/metrics/stage1/test.parquet"
    assert plan.all_targets(w)[-3:] == [paths.LEAKAGE, paths.SAMPLE_BROWSER, paths.FINDINGS]
