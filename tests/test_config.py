import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fgx.config import ConfigError, _semantic_checks, validate_config

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    return yaml.safe_load((ROOT / name).read_text())


@pytest.mark.parametrize("name", ["config.yaml", ".test/config.yaml"])
def test_shipped_configs_are_valid(name):
    validate_config(load(name), source=name)


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


def test_previous_default_overlay_is_valid_on_the_default_and_changes_only_its_keys():
    merged, changed, overlay_keys = _merge_overlay("config.chars.yaml")
    assert changed == overlay_keys  # every overlay key is a change, nothing else moves
    assert merged["rl"]["steps"] == 40 and merged["base"]["tokenizer"] == "chars"
    assert merged["countdown"]["rl_steps"] == 40  # the Countdown lineage's RL as before


def test_quick_overlay_is_valid_on_the_default_and_changes_only_its_keys():
    merged, changed, overlay_keys = _merge_overlay("config.quick.yaml")
    assert changed == overlay_keys
    assert 4 * merged["base"]["train"]["steps"] == load("config.yaml")["base"]["train"]["steps"]
    assert merged["data"]["pretrain_step_problems"] == 0  # no first-step problems: one problem set less


def test_half_atomic_overlay_is_sessions_25_to_29_default():
    merged, changed, overlay_keys = _merge_overlay("config.half-atomic.yaml")
    assert changed == overlay_keys == {"data.pretrain_problems", "data.pretrain_step_unmarked", "base.train.steps"}
    assert 2 * merged["base"]["train"]["steps"] == load("config.yaml")["base"]["train"]["steps"]
    # the composing prior and first-step problems are the default's: only the atomic set and the steps differ
    default = load("config.yaml")["data"]
    assert (merged["data"]["pretrain_prior_problems"], merged["data"]["pretrain_step_problems"]) == \
        (default["pretrain_prior_problems"], default["pretrain_step_problems"])
    assert merged["data"]["pretrain_problems"] < default["pretrain_problems"]


def test_marked_overlay_is_sessions_30_to_35_default():
    merged, changed, overlay_keys = _merge_overlay("config.marked.yaml")
    assert changed == overlay_keys == {"data.pretrain_step_unmarked"}
    assert merged["data"]["pretrain_step_unmarked"] == 0 < load("config.yaml")["data"]["pretrain_step_unmarked"]


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


def test_cross_key_rules():
    cfg = load("config.yaml")
    bad = copy.deepcopy(cfg)
    bad["model"] = {"source": "path", "path": None}
    with pytest.raises(ConfigError, match="model.path"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["test_levels"] = [5, 2]
    with pytest.raises(ConfigError, match="test_levels"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["pretrain_prior_levels"] = [4, 2]
    with pytest.raises(ConfigError, match="pretrain_prior_levels"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["pretrain_prior_levels"] = [2, 4]  # three depths, config.yaml's two shares
    with pytest.raises(ConfigError, match="pretrain_prior_level_shares.*one per depth, 3 in all"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["pretrain_prior_level_shares"] = [3, 0]
    with pytest.raises(ConfigError, match="pretrain_prior_level_shares"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["pretrain_step_levels"] = [6, 2]
    with pytest.raises(ConfigError, match="pretrain_step_levels"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["data"]["pretrain_step_problems"] = 100
    bad["task"].update(style="paper", render="nested", trace="redex")
    with pytest.raises(ConfigError, match="pretrain_step_problems.*compact style"):
        validate_config(bad)
    bad["model"] = {"source": "path", "path": "/models/llama"}  # a pretrained model never reads them
    assert not [p for p in _semantic_checks(bad) if "pretrain_step_problems" in p]
    bad = copy.deepcopy(cfg)
    bad["task"].update(render="chain", trace="rewrite")
    with pytest.raises(ConfigError, match="task.render.*task.trace: rewrite; set task.trace: redex"):
        validate_config(bad)
    bad["task"].update(trace="redex", style="paper")
    with pytest.raises(ConfigError, match="task.render': chain is a compact-style rendering"):
        validate_config(bad)
    bad["task"].update(style="compact", render="tree")
    with pytest.raises(ConfigError, match="render"):
        validate_config(bad)
    bad = copy.deepcopy(cfg)
    bad["task"].update(render="nested", trace="steps")
    with pytest.raises(ConfigError, match="task.trace': steps traces are written for chain prompts only"):
        validate_config(bad)
    good = copy.deepcopy(cfg)
    good["task"].update(render="chain", trace="redex")
    validate_config(good)
    good["task"].update(trace="steps")
    validate_config(good)
    good["task"].update(trace="call_steps")
    validate_config(good)
    bad["task"].update(trace="call_steps")
    with pytest.raises(ConfigError, match="task.trace': call_steps traces are written for chain prompts only"):
        validate_config(bad)
    paper = copy.deepcopy(cfg)  # config.paper.yaml over config.yaml: nested paper prompts, the default's trace
    paper["task"].update(style="paper", render="nested", trace="steps", max_value_len=None)
    paper["model"] = {"source": "path", "path": "/models/llama"}  # as config.paper.yaml: nothing to pretrain
    validate_config(paper)


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


def test_readme_change_a_knob_example_changes_exactly_rl_lr():
    """The README's `sed` example must keep matching config.yaml as its defaults move on."""
    import re

    readme = (ROOT / "README.md").read_text()
    m = re.search(r"sed -i 's/(\^[^/]+)/([^/]+)/' config\.yaml", readme)
    assert m, "README's 'Changing a knob' section lost its sed example"
    text = (ROOT / "config.yaml").read_text()
    changed = re.sub(m[1], m[2], text, flags=re.M)
    assert changed != text, f"README's sed pattern {m[1]!r} matches nothing in config.yaml"
    before, after = yaml.safe_load(text), yaml.safe_load(changed)
    assert after["rl"]["lr"] != before["rl"]["lr"]
    after["rl"]["lr"] = before["rl"]["lr"]
    assert after == before, "README's sed example changes more than rl.lr"


def test_position_knobs_reach_pretraining_only_when_set():
    import json

    from fgx import workflow as wf
    from fgx.engines.torch.dag import pretrain_settings

    cfg = load("config.yaml")
    assert "position_jitter" not in pretrain_settings(json.loads(wf.pretrain_settings(cfg)))
    jit = copy.deepcopy(cfg)
    jit["base"]["train"]["position_jitter"] = 0.3
    validate_config(jit, source="config.yaml")
    assert pretrain_settings(json.loads(wf.pretrain_settings(jit)))["position_jitter"] == 0.3
    jit["base"]["train"]["position_jitter"] = 1.0
    with pytest.raises(Exception, match="position_jitter"):
        validate_config(jit, source="config.yaml")
    assert "answer_gap" not in pretrain_settings(json.loads(wf.pretrain_settings(cfg)))
    gap = copy.deepcopy(cfg)
    gap["base"]["train"]["answer_gap"] = 12
    validate_config(gap, source="config.yaml")
    assert pretrain_settings(json.loads(wf.pretrain_settings(gap)))["answer_gap"] == 12
    gap["base"]["train"]["answer_gap"] = -1
    with pytest.raises(Exception, match="answer_gap"):
        validate_config(gap, source="config.yaml")


def test_base_tokenizer_key_reaches_pretraining():
    import json

    from fgx import workflow as wf
    from fgx.engines.torch.dag import pretrain_settings

    cfg = load("config.yaml")
    assert cfg["base"]["tokenizer"] == "chars+names"  # the default (README "Status")
    chars = copy.deepcopy(cfg)
    chars["base"]["tokenizer"] = "chars"
    plain = wf.pretrain_settings(chars)
    assert "tokenizer" not in json.loads(plain)  # so results built before the key existed stay current
    assert pretrain_settings(json.loads(plain))["token_names"] == []
    del chars["base"]["tokenizer"]
    assert wf.pretrain_settings(chars) == plain  # a config without the key gets chars
    named = copy.deepcopy(cfg)
    named["base"]["tokenizer"] = "chars+names"
    validate_config(named, source="config.yaml")
    names = pretrain_settings(json.loads(wf.pretrain_settings(named)))["token_names"]
    assert {"f0", "f24", "upper", "swapcase"} <= set(names) and len(names) == 29
    named["base"]["tokenizer"] = "chars+calls"
    validate_config(named, source="config.yaml")
    calls = pretrain_settings(json.loads(wf.pretrain_settings(named)))["token_names"]
    assert calls == [n + "(" for n in names]
    named["base"]["tokenizer"] = "bpe"
    with pytest.raises(ConfigError, match=r"key 'base.tokenizer'.*chars\+names"):
        validate_config(named, source="config.yaml")


def test_rl_frozen_groups_are_checked():
    import json

    from fgx import workflow as wf
    from fgx.config import load_schema
    from fgx.engines.torch.dag import rl_settings
    from fgx.engines.torch.model import PARAMETER_GROUPS

    # the schema's choices are the groups the torch engine knows
    assert load_schema()["properties"]["rl"]["properties"]["frozen"]["items"]["enum"] == list(PARAMETER_GROUPS)
    cfg = load("config.yaml")
    good = copy.deepcopy(cfg)
    good["rl"]["frozen"] = ["embeddings", "mlp"]
    validate_config(good)
    bad = copy.deepcopy(cfg)
    bad["rl"]["frozen"] = ["heads"]
    with pytest.raises(ConfigError, match="frozen"):
        validate_config(bad)
    assert "frozen" not in rl_settings(json.loads(wf.rl_settings(cfg, "level2")), None)  # old hashes kept
    assert rl_settings(json.loads(wf.rl_settings(good, "level2")), None)["frozen"] == ["embeddings", "mlp"]
    verl = load("config.paper.yaml")
    verl["rl"]["frozen"] = ["embeddings"]
    with pytest.raises(ConfigError, match="rl.frozen': holding parameters fixed is a torch-engine setting"):
        validate_config(verl)
