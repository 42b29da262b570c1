"""RLOO, REINFORCE leave-one-out (Ahmadian et al. 2024, arXiv 2402.14740): each rollout's baseline
is the mean reward of the other rollouts of its prompt, trained with the PPO clipped surrogate.

With n rollouts in a group of mean m, r_i minus the mean of the other n - 1 rewards is
n / (n - 1) (r_i - m): REINFORCE's group-mean advantage scaled by n / (n - 1). It is computed as
verl's ``rloo`` estimator writes it, r n / (n - 1) - m n / (n - 1), and like it leaves the reward of
a group of one as its advantage (verl's ``rloo_vectorized`` gives such a group 0; fgx's groups
always hold ``rl.group_size`` >= 2 rollouts, so neither convention is ever used in training).
"""

from __future__ import annotations

import torch

from fgx.algos.objective import policy_loss

__all__ = ["VERL_OVERRIDES", "advantages", "policy_loss"]

VERL_OVERRIDES = {"algorithm.adv_estimator": "rloo"}


def advantages(rewards: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    r = rewards.float()
    _, inv, counts = torch.unique(group, return_inverse=True, return_counts=True)
    sums = torch.zeros(counts.numel(), device=r.device).index_add_(0, inv, r)
    n = counts[inv].to(r.dtype)
    mean = (sums / counts)[inv]
    scale = (n - 1).clamp_min(1)
    return torch.where(n > 1, r * n / scale - mean * n / scale, r)
