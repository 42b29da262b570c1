"""The RL objective both engines train (fgx.algos.objective, fgx.algos.rl): advantages, the policy loss, the
overlong penalty."""

import math

import pytest
import torch

from fgx.algos import objective
from fgx.algos.rl import algorithm


def close(a, b, tol=1e-4):
    return torch.allclose(torch.as_tensor(a, dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32), atol=tol)


def _batch():
    lp = torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.5]]))
    return {"logprobs": lp, "old_logprobs": lp.clone(), "ref_logprobs": lp.clone(),
            "mask": torch.tensor([[1.0, 1.0], [1.0, 0.0]]), "advantages": torch.tensor([1.0, -2.0]),
            "entropy": torch.ones(2, 2)}


def test_grpo_normalises_by_the_group_std_and_reinforce_does_not():
    r, g = torch.tensor([1.0, 0.0, 1.0, 1.0]), torch.tensor([0, 0, 1, 1])
    assert close(algorithm("reinforce").advantages(r, g), [0.5, -0.5, 0.0, 0.0])
    assert close(algorithm("grpo").advantages(r, g), [0.7071, -0.7071, 0.0, 0.0])
    with pytest.raises(ValueError, match="rl.algorithm 'ppo2' unknown"):
        algorithm("ppo2")


def test_on_policy_loss_is_minus_advantage_times_logprob():
    b = _batch()
    loss, st = objective.policy_loss(b, kl_coef=0.0, entropy_coef=0.0, loss_agg_mode="token-mean")
    # ratio 1: token-mean of -A over 3 tokens = -(1 + 1 - 2) / 3 = 0, with the entropy reported
    assert close(loss, 0.0) and close(st["entropy"], 1.0) and "kl" not in st
    # its gradient is the REINFORCE gradient -A * grad log pi
    lp = b["logprobs"].clone().requires_grad_(True)
    loss, _ = objective.policy_loss({**b, "logprobs": lp, "old_logprobs": lp.detach()}, kl_coef=0.0,
                                    entropy_coef=0.0, loss_agg_mode="token-mean")
    loss.backward()
    assert close(lp.grad, [[-1 / 3, -1 / 3], [2 / 3, 0.0]])


def test_kl_and_entropy_terms():
    b = _batch()
    b["ref_logprobs"] = torch.log(torch.tensor([[0.25, 0.5], [0.25, 0.5]]))
    loss, st = objective.policy_loss(b, kl_coef=0.5, entropy_coef=0.1, loss_agg_mode="token-mean")
    kl_token0 = 0.5 + math.log(2) - 1  # exp(ref - lp) - (ref - lp) - 1 with lp = ln .5, ref = ln .25
    assert close(st["kl"], kl_token0 / 3)
    assert close(loss, 0.0 + 0.5 * kl_token0 / 3 - 0.1 * 1.0)


def test_overlong_penalty_is_dapos_soft_ramp():
    lengths = torch.tensor([10, 96, 100, 112, 128])
    assert close(objective.overlong_penalty(lengths, 128, 32), [0.0, 0.0, -0.125, -0.5, -1.0])
    assert close(objective.overlong_penalty(lengths, 128, 0), [0.0] * 5)


def test_a_group_whose_rewards_all_agree_is_dropped_by_dynamic_sampling():
    assert not objective.informative_group([1.0, 1.0, 1.0]) and not objective.informative_group([-1.0] * 8)
    assert not objective.informative_group(torch.tensor([0.5, 0.5]))
    assert objective.informative_group([1.0, -1.0, 1.0]) and objective.informative_group(torch.tensor([0.0, 1e-3]))
