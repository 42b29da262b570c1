import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fgx.config import ConfigError, validate_config

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    return yaml.safe_load((ROOT / name).read_text())


def test_default_config_is_valid():
    validate_config(load("config.yaml"), source="config.yaml")


def _leaves(d: dict, prefix=""):
    for k, v in d.items():
        yield from _leaves(v, f"{prefix}{k}.") if isinstance(v, dict) else [(f"{prefix}{k}", v)]


def _merge_overlay(name: str) -> tuple[dict, set[str], set[str]]:
    """config.yaml with the overlay ``name`` merged as `--configfile` does (validated), the keys the
    merge changed and the overlay's own keys."""
    from snakemake.utils import update_config  # what `--configfile OVERLAY` does to config.yaml

    base, overlay = load("config.yaml"), load(name)
    merged = copy.deepcopy(base)
    update_config(merged, overlay)
    validate_config(merged, source=f"config.yaml + {name}")
    base_leaves = dict(_leaves(base))
    changed = {k for k, v in _leaves(merged) if base_leaves.get(k) != v}
    return merged, changed, {k for k, _ in _leaves(overlay)}


EXPERIMENTS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "experiments").glob("*.yaml"))


def test_smoke_config_is_an_overlay_that_only_shrinks():
    merged, changed, overlay_keys = _merge_overlay(".test/config.yaml")
    assert changed == overlay_keys
    assert merged["base"]["train"]["steps"] < load("config.yaml")["base"]["train"]["steps"]


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_overlays_are_valid_on_the_default_and_change_only_their_keys(name):
    merged, changed, overlay_keys = _merge_overlay(name)
    assert changed == overlay_keys  # every overlay key is a change, nothing else moves
    header = (ROOT / name).read_text().split("\n")
    assert header[0].startswith("# Question:"), f"{name}: start with the question it answers"
    text = "\n".join(header)
    assert "# Changes" in text and "# Measurements:" in text and "docs/research-log.md#" in text, \
        f"{name}: say what it changes and where its measurements are"


def test_paper_config_is_valid_over_the_default():
    merged, changed, _ = _merge_overlay("config.paper.yaml")
    assert merged["engine"] == "verl" and merged["task"]["style"] == "paper"


def test_every_key_is_required_so_config_yaml_is_the_one_layer_of_defaults():
    from fgx.config import load_schema

    schema = load_schema()

    def walk(node, where):
        props = node.get("properties")
        if node.get("$ref"):
            name = node["$ref"].rsplit("/", 1)[1]
            return walk(schema["$defs"][name], where)
        # data.external: a map of optional entries (split -> file)
        if props and where != "config.data.external":
            assert set(node.get("required", [])) == set(props), f"{where}: every key required"
            assert node.get("additionalProperties") is False, f"{where}: unknown keys refused"
            for k, v in props.items():
                walk(v, f"{where}.{k}")

    walk(schema, "config")
    cfg = load("config.yaml")
    del cfg["rl"]["reward"]
    with pytest.raises(ConfigError, match="'reward' is a required property"):
        validate_config(cfg)


def test_errors_name_key_and_allowed_values():
    cfg = load("config.yaml")
    cfg["engine"] = "jax"
    cfg["rl"]["algorithm"] = "ppo"
    cfg["rl"]["learning_rate"] = 1e-3
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, source="config.yaml")
    msg = str(err.value)
    assert "config.yaml" in msg
    assert "key 'engine'" in msg and '"torch", "verl"' in msg
    assert "key 'rl.algorithm'" in msg and '"grpo", "reinforce"' in msg
    assert "unknown key(s) learning_rate" in msg
    cfg = load("config.yaml")
    cfg["figures"]["passk_models"] = ["stage1", "rft_level2_iter2"]
    with pytest.raises(ConfigError, match=r"key 'figures.passk_models.1'.*rft_level2_iter2"):
        validate_config(cfg, source="config.yaml")


def test_cross_key_rules():
    cfg = load("config.yaml")
    bad = copy.deepcopy(cfg)
    bad["model"] = {"source": "path", "path": None, "tensor_parallel_size": 1}
    with pytest.raises(ConfigError, match="model.path"):
        validate_config(bad)
    for key in ("test_levels", "pretrain_prior_levels", "pretrain_step_levels", "test_train_funcs_levels"):
        bad = copy.deepcopy(cfg)
        bad["data"][key] = [5, 2]
        with pytest.raises(ConfigError, match=f"data.{key}.*min <= max"):
            validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["pretrain_prior_level_shares"] = [3, 1, 1]  # three shares, two depths
    with pytest.raises(ConfigError, match=r"pretrain_prior_level_shares': got 3 shares .* depths 2..3.*2 in all"):
        validate_config(bad)
    bad["data"]["pretrain_prior_level_shares"] = [3, 0]
    with pytest.raises(ConfigError, match=r"pretrain_prior_level_shares': got \[3, 0\]; want null \(evenly\) or one "
                                          r"positive integer per depth"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["val_per_level"] = [64, 320]  # two counts, six test levels
    with pytest.raises(ConfigError, match=r"val_per_level': got 2 counts \[64, 320\] for levels 1..6 .*6 in all"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["pretrain_step_levels"] = [1, 3]
    with pytest.raises(ConfigError, match="pretrain_step_levels.*compositions"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["task"]["style"] = "paper"
    with pytest.raises(ConfigError, match="task.style.*pretrained from scratch learns the compact style"):
        validate_config(bad)
    bad["model"] = {"source": "path", "path": "/models/llama", "tensor_parallel_size": 1}
    validate_config(bad)  # a pretrained model reads paper prompts
    bad = copy.deepcopy(cfg)
    bad["engine"] = "verl"
    validate_config(bad)  # the torch engine pretrains the tiny base, verl trains on from it
    bad = copy.deepcopy(cfg)
    bad["rl"]["overlong_buffer"] = bad["rl"]["max_new_tokens"]
    with pytest.raises(ConfigError, match="rl.overlong_buffer"):
        validate_config(bad)


def test_bad_config_fails_before_any_job(tmp_path):
    cfg = load("config.yaml")
    cfg["rl"]["loss_agg_mode"] = "mean"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(path)],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "key 'rl.loss_agg_mode'" in out and "token-mean" in out
    assert "Building DAG" not in out


def test_readme_change_a_knob_example_changes_exactly_rl_lr(tmp_path):
    """The README's overlay example must stay a valid overlay that changes rl.lr and nothing else."""
    import re

    readme = (ROOT / "README.md").read_text()
    m = re.search(r"printf '([^']+)' > (\S+\.yaml)", readme)
    assert m, "README's 'Configuration' section lost its overlay example"
    overlay = tmp_path / m[2]
    overlay.write_text(m[1].encode().decode("unicode_escape"))
    merged, changed, _ = _merge_overlay(str(overlay))
    assert changed == {"rl.lr"} and merged["rl"]["lr"] != load("config.yaml")["rl"]["lr"]


def test_every_verl_key_is_typed_and_a_typo_fails_before_any_job():
    """config.yaml's verl: section sets every knob the engine reads (fgx.settings.Verl declares them), so a
    misspelt key, a retired one or a string where a list belongs stops the run at validation, not on a GPU node."""
    import dataclasses

    from configs import verl_section

    from fgx.config import load_schema
    from fgx.settings import Verl, VerlSample, VerlSFT

    verl = load_schema()["properties"]["verl"]
    cfg = load("config.yaml")
    assert verl["additionalProperties"] is False and set(verl["required"]) == set(cfg["verl"])
    for key, cls in (("sft", VerlSFT), ("sample", VerlSample)):
        assert set(verl["properties"][key]["required"]) == set(cfg["verl"][key]) == \
            {f.name for f in dataclasses.fields(cls)}, key
    assert set(cfg["verl"]) == {f.name for f in dataclasses.fields(Verl)}
    validate_config(cfg)
    bad_values = [({"max_prompt_lenght": 1}, "max_prompt_lenght"), ({"ppo_overrides": "a=b"}, "verl.ppo_overrides"),
                  ({"python": "/usr/bin/python"}, "python"), ({"sample": {"chunk": 8}}, "verl.sample"),
                  ({"attn_implementation": "flash"}, "verl.attn_implementation")]
    for bad, named in bad_values:
        cfg["verl"] = verl_section(**bad)
        with pytest.raises(ConfigError, match=named):
            validate_config(cfg)
    assert len(bad_values) == 5
    del cfg["verl"]["sample"]["chunk_prompts"]
    with pytest.raises(ConfigError, match="'chunk_prompts' is a required property"):
        validate_config(cfg)
