"""REINFORCE with the group-mean baseline: advantages r - mean over each prompt's rollouts (GRPO
without the std, as Dr. GRPO; verl's ``grpo`` estimator with ``norm_adv_by_std_in_grpo=false``),
trained with the PPO clipped surrogate (with ``rl.kl_coef``: REINFORCE with a KL to the start)."""

from __future__ import annotations

import torch

from fgx.algos import core
from fgx.algos.objective import policy_loss

__all__ = ["VERL_OVERRIDES", "advantages", "policy_loss"]

VERL_OVERRIDES = {"algorithm.adv_estimator": "grpo", "algorithm.norm_adv_by_std_in_grpo": False}


def advantages(rewards: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    return core.group_advantages(rewards, group, norm_by_std=False)
