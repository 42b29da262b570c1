"""The one small interface every RL algorithm implements.

The trainer owns models, sampling, batching and optimisation; an :class:`Algorithm` only turns
(rewards, log-probs) into advantages and a scalar loss. Adding an algorithm = one small subclass
registered in :data:`fgx.algos.ALGORITHMS`.
"""

from __future__ import annotations

from typing import Any

import torch

from fgx.algos import core


class Algorithm:
    """Base class. Tensors: ``logprobs``/``mask``/``old_logprobs``/``ref_logprobs``/``entropy`` are
    (B, T) over response tokens, ``advantages`` is (B,) per sequence."""

    name = "base"
    default_kl_coef = 0.0

    def __init__(self, settings: Any):
        self.s = settings
        self.kl_coef = self.default_kl_coef if getattr(settings, "kl_coef", None) is None else settings.kl_coef

    # -- what the trainer must compute
    @property
    def needs_ref(self) -> bool:
        """Whether ``ref_logprobs`` (a frozen reference model) is needed."""
        return self.kl_coef > 0

    def refresh_ref(self, step: int) -> bool:
        """True when the reference model should be reset to the current policy after ``step``."""
        return False

    # -- the algorithm
    def advantages(self, rewards: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def loss(self, batch: dict[str, torch.Tensor], denom=None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    # -- shared pieces
    def _kl_and_entropy(self, batch, denom):
        s, mask = self.s, batch["mask"]
        extra = torch.zeros((), device=mask.device)
        stats = {}
        if self.needs_ref and "ref_logprobs" in batch:
            kl = core.kl_penalty(batch["logprobs"], batch["ref_logprobs"], s.kl_kind)
            kl_loss = core.agg_loss(kl, mask, s.loss_agg_mode, denom)
            extra = extra + self.kl_coef * kl_loss
            stats["kl"] = kl_loss.detach()
        if "entropy" in batch:
            ent = core.agg_loss(batch["entropy"], mask, s.loss_agg_mode, denom)
            if s.entropy_coef:
                extra = extra - s.entropy_coef * ent
            stats["entropy"] = ent.detach()
        return extra, stats
