"""GRPO: group-normalised advantages (r - mean) / (std + eps) over each prompt's rollouts, the std
unbiased and a group of one at mean 0, std 1 (verl's ``grpo`` estimator), trained with the PPO
clipped surrogate."""

from __future__ import annotations

import torch

from fgx.algos import core
from fgx.algos.objective import policy_loss

__all__ = ["ADV_EPS", "VERL_OVERRIDES", "advantages", "policy_loss"]

ADV_EPS = 1e-6  # verl's epsilon
VERL_OVERRIDES = {"algorithm.adv_estimator": "grpo", "algorithm.norm_adv_by_std_in_grpo": True}


def advantages(rewards: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    return core.group_advantages(rewards, group, eps=ADV_EPS, norm_by_std=True)
