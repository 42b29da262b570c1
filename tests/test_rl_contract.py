"""One RL contract for both engines: from the same config, the torch engine and the verl engine
optimise the same objective (compared key by key), and score a response with the same reward."""

import json
from pathlib import Path

import pytest
import yaml

from fgx.plan import params
from fgx.engines.torch import rl as torch_rl
from fgx.engines.verl import commands as C
from fgx.settings import RL

ROOT = Path(__file__).resolve().parents[1]


def _config(paper: bool) -> dict:
    from snakemake.utils import update_config

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    if paper:
        update_config(cfg, yaml.safe_load((ROOT / "config.paper.yaml").read_text()))
    return cfg


def _both(cfg: dict, run: str = "level2") -> tuple[dict, dict]:
    settings = json.loads(params.rl_settings(cfg, run))
    torch_side = torch_rl.effective_settings(RL.from_settings(settings))
    # the same run on the verl engine: its settings carry the config's verl: section
    settings = json.loads(params.rl_settings({**cfg, "engine": "verl"}, run))
    overrides = C.ppo_overrides(settings, model_dir="/m", train_files=["/t.parquet"], val_files=["/v.parquet"],
                                checkpoint_dir="/c", experiment_name="x", reward_path="/r.py", n_gpus_per_node=8)
    return torch_side, C.effective_settings(overrides)


@pytest.mark.parametrize("paper", [False, True], ids=["tiny default", "paper scale"])
def test_both_engines_optimise_the_same_objective(paper):
    torch_side, verl_side = _both(_config(paper))
    assert torch_side.keys() == verl_side.keys()
    for key in torch_side:
        assert torch_side[key] == verl_side[key], f"{key}: torch {torch_side[key]!r}, verl {verl_side[key]!r}"


@pytest.mark.parametrize("change", [
    {"algorithm": "reinforce"}, {"algorithm": "rloo"}, {"reward": "score"}, {"kl_coef": 0.05}, {"entropy_coef": 0.01},
    {"loss_agg_mode": "seq-mean-token-mean"}, {"dynamic_sampling": False}, {"overlong_buffer": 32},
    {"lr": 3e-5}, {"group_size": 4}, {"temperature": 0.7}, {"max_generation_batches": 7}, {"batch_size": 6},
])
def test_a_changed_rl_key_reaches_both_engines_alike(change):
    cfg = _config(False)
    cfg["rl"].update(change)
    torch_side, verl_side = _both(cfg)
    assert torch_side == verl_side
    base_torch, _ = _both(_config(False))
    assert torch_side != base_torch  # the key reached the engines at all


def test_one_reward_function_for_both_engines():
    from fgx.engines.verl.reward import compute_score as verl_reward
    from fgx.tasks import compute_score, reward
    from fgx.tasks.strings.ground_truth import ground_truth

    gt = ground_truth("abc", "cba", "def main_solution(x):\n    return func_17(x)")
    ds = "codeio-forward-incomplete-depth1"
    for response in ('{"output": "cba"}', '{"output": "abc"}', "no answer"):
        result = compute_score(ds, response, gt)
        for kind in ("acc", "score"):
            assert verl_reward(ds, response, gt, reward=kind)["score"] == reward(result, kind)
    assert reward(compute_score(ds, "no answer", gt), "score") == -1.0
    assert reward(compute_score(ds, "no answer", gt), "acc") == 0.0


def test_both_engines_take_the_optimizer_constants_from_one_module():
    """AdamW's weight decay and betas and the gradient clip are written once, in fgx.algos.optimizer."""
    import ast

    from fgx.algos import optimizer

    torch_side, verl_side = _both(_config(False))
    for side in (torch_side, verl_side):
        assert (side["weight_decay"], tuple(side["betas"]), side["grad_clip"]) == (
            optimizer.RL_WEIGHT_DECAY, optimizer.RL_BETAS, optimizer.GRAD_CLIP)
    home = ROOT / "src/fgx/algos/optimizer.py"
    written = {}
    for path in sorted((ROOT / "src/fgx").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
            constant = ("WEIGHT_DECAY", "BETAS", "GRAD_CLIP", "LR_RATIO")
            if (isinstance(node, ast.Assign) and any(n.endswith(constant) for n in names)
                    and any(isinstance(c, ast.Constant) and isinstance(c.value, float) for c in ast.walk(node.value))):
                written.setdefault(str(path.relative_to(ROOT)), []).extend(names)
    assert written.pop(str(home.relative_to(ROOT))) == ["GRAD_CLIP", "RL_WEIGHT_DECAY", "RL_BETAS", "SUPERVISED_BETAS",
                                                              "SFT_WEIGHT_DECAY", "MIN_LR_RATIO"]
    assert written == {}, f"an optimizer constant written outside fgx.algos.optimizer: {written}"
