"""Pure tensor functions of policy-gradient RL for LLMs (no model, no I/O).

Shapes: ``(B, T)`` for per-token tensors (B sequences, T response positions) with a 0/1
``mask`` marking real response tokens; ``(B,)`` for per-sequence tensors.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from fgx.algos.rl import LOSS_AGG_MODES
KL_KINDS = ("k1", "k2", "k3", "low_var_kl", "abs")


def masked_sum(x: torch.Tensor, mask: torch.Tensor, dim=None) -> torch.Tensor:
    mask = mask.to(x.dtype)
    return (x * mask).sum() if dim is None else (x * mask).sum(dim)


def masked_mean(x: torch.Tensor, mask: torch.Tensor, dim=None, eps: float = 1e-8) -> torch.Tensor:
    """Mean of ``x`` over positions where ``mask`` is 1 (all of them, or along ``dim``)."""
    mask = mask.to(x.dtype)
    return masked_sum(x, mask, dim) / (mask.sum() if dim is None else mask.sum(dim)).clamp_min(eps)


def agg_loss(loss_mat: torch.Tensor, mask: torch.Tensor, mode: str = "token-mean",
             denom: float | torch.Tensor | None = None) -> torch.Tensor:
    """Aggregate a per-token loss into a scalar.

    token-mean: sum over all valid tokens / number of valid tokens (``denom`` overrides the count,
    e.g. the token count of the whole mini-batch when this is one micro-batch of it);
    seq-mean-token-sum: mean over sequences of the per-sequence token sum;
    seq-mean-token-mean: mean over sequences of the per-sequence token mean.
    For the seq-mean modes ``denom`` overrides the number of sequences.
    """
    mask = mask.to(loss_mat.dtype)
    if mode == "token-mean":
        d = mask.sum().clamp_min(1.0) if denom is None else denom
        return (loss_mat * mask).sum() / d
    if mode == "seq-mean-token-sum":
        per_seq = (loss_mat * mask).sum(-1)
    elif mode == "seq-mean-token-mean":
        per_seq = (loss_mat * mask).sum(-1) / mask.sum(-1).clamp_min(1.0)
    else:
        raise ValueError(f"loss_agg_mode {mode!r} not in {LOSS_AGG_MODES}")
    d = per_seq.shape[0] if denom is None else denom
    return per_seq.sum() / d


def token_logprobs(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """log p(labels) under ``logits`` (..., V) -> (...); computed in float32."""
    logits = logits.float()
    return torch.gather(logits, -1, labels.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the softmax distribution of ``logits`` (..., V) -> (...), float32."""
    logits = logits.float()
    logp = F.log_softmax(logits, -1)
    return -(logp.exp() * logp).sum(-1)


def group_advantages(rewards: torch.Tensor, group: torch.Tensor | None = None, group_size: int | None = None,
                     eps: float = 1e-6, norm_by_std: bool = True) -> torch.Tensor:
    """GRPO outcome advantages: (r - mean_group) / (std_group + eps), std unbiased as in verl.

    Groups are given by ``group`` ids (B,) or by consecutive blocks of ``group_size``. A group of
    one sample gets mean 0 and std 1 (verl's convention). ``norm_by_std=False`` gives Dr.GRPO's
    r - mean.
    """
    r = rewards.float()
    if group is None:
        if not group_size or r.numel() % group_size:
            raise ValueError(f"{r.numel()} rewards cannot be split into groups of {group_size}")
        group = torch.arange(r.numel(), device=r.device) // group_size
    _, inv, counts = torch.unique(group, return_inverse=True, return_counts=True)
    n_groups = counts.numel()
    sums = torch.zeros(n_groups, device=r.device).index_add_(0, inv, r)
    means = sums / counts
    sq = torch.zeros(n_groups, device=r.device).index_add_(0, inv, (r - means[inv]) ** 2)
    std = torch.sqrt(sq / (counts - 1).clamp_min(1))
    mean_i = torch.where(counts[inv] > 1, means[inv], torch.zeros_like(r))
    std_i = torch.where(counts[inv] > 1, std[inv], torch.ones_like(r))
    adv = r - mean_i
    if norm_by_std:
        adv = adv / (std_i + eps)
    return adv


def ppo_clip_loss(logprobs: torch.Tensor, old_logprobs: torch.Tensor, advantages: torch.Tensor,
                  mask: torch.Tensor, clip_low: float = 0.2, clip_high: float = 0.2,
                  clip_ratio_c: float | None = 3.0, loss_agg_mode: str = "token-mean",
                  denom=None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """PPO clipped surrogate with decoupled clip range (DAPO's clip-higher) and dual clip.

    ratio = exp(logprobs - old_logprobs); per token
    loss = max(-A * ratio, -A * clip(ratio, 1 - clip_low, 1 + clip_high)), and for A < 0 it is
    additionally capped at -A * clip_ratio_c (dual-clip, as verl; None disables).
    ``advantages`` is (B, T) or (B,) (broadcast over tokens). Returns (loss, stats).
    """
    if advantages.dim() == 1:
        advantages = advantages[:, None].expand_as(logprobs)
    log_ratio = (logprobs - old_logprobs).clamp(-20.0, 20.0)
    ratio = torch.exp(log_ratio)
    l1 = -advantages * ratio
    l2 = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    clipped = torch.maximum(l1, l2)
    pg = clipped
    if clip_ratio_c is not None:
        l3 = -advantages * clip_ratio_c
        pg = torch.where(advantages < 0, torch.minimum(l3, clipped), clipped)
    loss = agg_loss(pg, mask, loss_agg_mode, denom)
    with torch.no_grad():
        stats = {
            "clipfrac": masked_mean((l2 > l1).float(), mask),
            "approx_kl": masked_mean(-log_ratio, mask),
            "ratio": masked_mean(ratio, mask),
        }
    return loss, stats


def kl_penalty(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, kind: str = "low_var_kl") -> torch.Tensor:
    """Per-token KL(pi || ref) estimate from sampled-token log-probs.

    k1: logp - logp_ref; abs: |k1|; k2: 0.5 (logp - logp_ref)^2;
    k3 / low_var_kl: exp(logp_ref - logp) - (logp_ref - logp) - 1 (low_var_kl clamps to [-10, 10]
    as verl does).
    """
    d = logprobs - ref_logprobs
    if kind == "k1":
        return d
    if kind == "abs":
        return d.abs()
    if kind == "k2":
        return 0.5 * d.square()
    if kind in ("k3", "low_var_kl"):
        x = (-d).clamp(-20.0, 20.0)
        k = torch.exp(x) - x - 1.0
        return k.clamp(-10.0, 10.0) if kind == "low_var_kl" else k
    raise ValueError(f"kl kind {kind!r} not in {KL_KINDS}")
