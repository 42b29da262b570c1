"""GRPO as the paper ran it (verl): group-normalised outcome advantages, PPO clipped loss with
separate low/high clip and dual clip, token-mean aggregation, optional KL loss and entropy bonus."""

from __future__ import annotations

from fgx.algos import core
from fgx.algos.base import Algorithm


class GRPO(Algorithm):
    name = "grpo"
    default_kl_coef = 0.0

    def advantages(self, rewards, group):
        return core.group_advantages(rewards, group, eps=self.s.adv_eps, norm_by_std=self.s.norm_adv_by_std)

    def loss(self, batch, denom=None):
        s = self.s
        pg, stats = core.ppo_clip_loss(
            batch["logprobs"], batch["old_logprobs"], batch["advantages"], batch["mask"],
            clip_low=s.clip_low, clip_high=s.clip_high, clip_ratio_c=s.clip_ratio_c,
            loss_agg_mode=s.loss_agg_mode, denom=denom)
        extra, more = self._kl_and_entropy(batch, denom)
        stats.update(more)
        stats["pg_loss"] = pg.detach()
        return pg + extra, stats
