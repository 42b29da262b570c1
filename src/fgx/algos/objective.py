"""The RL objective both engines train, apart from the advantages (one module per algorithm,
:mod:`fgx.algos.rl`): the policy loss, the overlong penalty and dynamic sampling's rules.

An algorithm of :mod:`fgx.algos.rl` turns each prompt's group of outcome rewards into advantages and
minimises :func:`policy_loss` (unless it brings a loss of its own): the PPO clipped surrogate of one
on-policy update per batch (the paper's batch = mini-batch: the ratio is 1, so the clip never binds
and the gradient is -A * grad log pi), aggregated by ``loss_agg_mode``, plus ``kl_coef`` times a
low-variance KL to the starting model and minus ``entropy_coef`` times the entropy. The verl engine
maps the same keys onto verl's trainer (``fgx.engines.verl.commands.ppo_overrides``);
``tests/test_rl_contract.py`` holds the two side by side.
"""

from __future__ import annotations

import torch

from fgx.algos import core

CLIP_RATIO = 0.2      # PPO clip range, both sides (never binds with one on-policy update per batch)
CLIP_RATIO_C = 3.0    # dual-clip bound for negative advantages (verl's default)
KL_KIND = "low_var_kl"


def informative_group(rewards) -> bool:
    """Whether one prompt's group of rewards carries a learning signal: when they all agree every
    advantage is 0, so dynamic sampling (DAPO) drops the group and samples another prompt; verl's
    replay buffer drops a group by the same rule on the same reward."""
    return len(set(float(r) for r in rewards)) > 1


def another_generation_batch(kept_groups: int, batches: int, *, batch_size: int, max_batches: int,
                             dynamic_sampling: bool) -> bool:
    """Whether an RL step samples one more generation batch of ``batch_size`` prompts, having kept
    ``kept_groups`` informative groups from ``batches`` batches: with dynamic sampling, until the batch
    is full or ``max_batches`` (``rl.max_generation_batches``) are spent, after which the step trains
    on the groups it kept (a policy that solves every prompt or none would otherwise sample forever).
    Both engines' samplers stop by this rule."""
    return dynamic_sampling and kept_groups < batch_size and batches < max_batches


def policy_loss(batch: dict[str, torch.Tensor], *, kl_coef: float, entropy_coef: float, loss_agg_mode: str,
                denom=None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Loss of one micro-batch: ``logprobs``/``old_logprobs``/``mask``/``entropy`` (B, T),
    ``advantages`` (B,), ``ref_logprobs`` (B, T) when ``kl_coef`` > 0. ``denom``: the mini-batch's
    token (or sequence) count, so micro-batch losses add up to the mini-batch's."""
    pg, stats = core.ppo_clip_loss(batch["logprobs"], batch["old_logprobs"], batch["advantages"], batch["mask"],
                                   clip_low=CLIP_RATIO, clip_high=CLIP_RATIO, clip_ratio_c=CLIP_RATIO_C,
                                   loss_agg_mode=loss_agg_mode, denom=denom)
    loss = pg
    mask = batch["mask"]
    if kl_coef > 0:
        kl = core.agg_loss(core.kl_penalty(batch["logprobs"], batch["ref_logprobs"], KL_KIND), mask,
                           loss_agg_mode, denom)
        loss = loss + kl_coef * kl
        stats["kl"] = kl.detach()
    ent = core.agg_loss(batch["entropy"], mask, loss_agg_mode, denom)
    if entropy_coef:
        loss = loss - entropy_coef * ent
    stats["entropy"] = ent.detach()
    stats["pg_loss"] = pg.detach()
    return loss, stats


def overlong_penalty(lengths: torch.Tensor, max_new_tokens: int, buffer: int, factor: float = 1.0) -> torch.Tensor:
    """DAPO's soft overlong penalty: 0 up to ``max_new_tokens - buffer`` tokens, then falling
    linearly to ``-factor`` at ``max_new_tokens`` (as verl's dapo reward manager). ``buffer`` 0: none."""
    if buffer <= 0:
        return torch.zeros_like(lengths, dtype=torch.float32)
    exceed = lengths.float() - (max_new_tokens - buffer)
    return torch.clamp(-exceed / buffer * factor, max=0.0)
