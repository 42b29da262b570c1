"""The RL algorithms (fgx.algos.rl), one module each: RLOO's advantages by hand, and every registered
algorithm held to the shape both engines call and run by both."""

import json
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from fgx.algos.rl import ALGORITHMS, algorithm
from fgx.engines import get_engine
from fgx.engines.verl import commands as C
from fgx.plan import params
from fgx.settings import RL
from toy import rl_settings, toy_score

ROOT = Path(__file__).resolve().parents[1]


def close(a, b, tol=1e-6):
    return torch.allclose(torch.as_tensor(a, dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32), atol=tol)


def test_rloo_subtracts_the_mean_of_the_other_rollouts():
    # groups 7 (n = 4, interleaved with group 2), 2 (n = 3) and 9 (n = 1)
    r = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.7])
    g = torch.tensor([7, 2, 7, 2, 7, 2, 7, 9])
    # group 7, rewards 1 0 0 1: 1 - (0 + 0 + 1) / 3 = 2/3 and 0 - (1 + 0 + 1) / 3 = -2/3
    # group 2, rewards 1 1 0: 1 - (1 + 0) / 2 = 1/2 and 0 - (1 + 1) / 2 = -1
    # group 9, one rollout: its reward unchanged, as verl's rloo estimator
    want = [2 / 3, 0.5, -2 / 3, 0.5, -2 / 3, -1.0, 2 / 3, 0.7]
    assert close(algorithm("rloo").advantages(r, g), want)
    # the string task's score reward (-1 unparsable) with the overlong penalty's fractions
    assert close(algorithm("rloo").advantages(torch.tensor([-1.0, 0.0, 1.0, 0.25]), torch.zeros(4)),
                 [-1.0 - 1.25 / 3, 0.0 - 0.25 / 3, 1.0 + 0.75 / 3, 0.25 - 0.0])


def test_rloo_is_the_group_mean_baseline_scaled_by_n_over_n_minus_1():
    gen = torch.Generator().manual_seed(0)
    for n in (2, 4, 8):
        r = torch.randint(0, 2, (6 * n,), generator=gen).float() + torch.rand(6 * n, generator=gen)
        g = torch.arange(6 * n) // n
        assert close(algorithm("rloo").advantages(r, g), n / (n - 1) * algorithm("reinforce").advantages(r, g), 1e-5)


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_algorithm_module_has_the_shape_both_engines_call(name):
    alg = algorithm(name)
    assert alg.__name__ == f"fgx.algos.rl.{name}"
    r, g = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0]), torch.tensor([0, 0, 0, 0, 1, 1])
    adv = alg.advantages(r, g)
    assert adv.shape == (6,) and adv.dtype == torch.float32
    # a group whose rewards all agree has no signal (dynamic sampling drops it; the torch engine skips
    # sequences of advantage 0): every baseline makes its advantages exactly 0
    assert adv[4:].tolist() == [0.0, 0.0] and (adv[:4] > 0).tolist() == [True, False, False, True]
    assert callable(alg.policy_loss)
    assert isinstance(alg.VERL_OVERRIDES.get("algorithm.adv_estimator"), str)


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_the_verl_command_selects_each_algorithm_and_reads_back_as_it(name):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    cfg = {**cfg, "engine": "verl", "rl": {**cfg["rl"], "algorithm": name}}
    settings = json.loads(params.rl_settings(cfg, "level2"))
    overrides = C.ppo_overrides(settings, model_dir="/m", train_files=["/t.parquet"], val_files=["/v.parquet"],
                                checkpoint_dir="/c", experiment_name="x", reward_path="/r.py", n_gpus_per_node=8)
    for key, value in algorithm(name).VERL_OVERRIDES.items():
        assert C._ov(key, value) in overrides
    assert C.effective_settings(overrides)["algorithm"] == name


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_the_torch_engine_trains_with_each_algorithm(base_dir, name):
    metrics = base_dir / f"{name}.parquet"
    get_engine("torch").rl(base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet", base_dir / name,
                           metrics, base_dir / "work", rl_settings(algorithm=name, steps=2, eval_every=2),
                           score_fn=toy_score)
    m = pd.read_parquet(metrics)
    assert m[m.metric == "num_groups_trained"]["value"].min() > 0 and m[m.metric == "grad_norm"]["value"].min() > 0
    assert json.loads((base_dir / name / "resolved_config.json").read_text())["algorithm"] == name


def test_an_unknown_algorithm_is_refused_naming_the_registered_ones():
    with pytest.raises(ValueError, match="rl.algorithm 'ppo2' unknown; choose one of grpo, reinforce, rloo"):
        algorithm("ppo2")
    with pytest.raises(ValueError, match="key 'algorithm': got \"ppo2\"; allowed values: \"grpo\", \"reinforce\""):
        RL.from_settings(rl_settings(algorithm="ppo2"))
