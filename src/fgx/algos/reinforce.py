"""Stable REINFORCE: -A * log pi(a) with a baseline, plus a KL penalty to a reference policy that
is reset to the current policy every ``ref_update_every`` steps (gym-style RL-for-LLM recipe).

It is here to show that an algorithm is one small class."""

from __future__ import annotations


from fgx.algos import core
from fgx.algos.base import Algorithm


class Reinforce(Algorithm):
    name = "reinforce"
    default_kl_coef = 0.05

    def refresh_ref(self, step: int) -> bool:
        k = self.s.ref_update_every
        return bool(k) and step % k == 0

    def advantages(self, rewards, group):
        r = rewards.float()
        baseline = self.s.baseline
        if baseline == "group":
            return core.group_advantages(r, group, norm_by_std=False)
        if baseline == "batch":
            return r - r.mean()
        if baseline == "none":
            return r
        raise ValueError(f"reinforce baseline {baseline!r} not in group | batch | none")

    def loss(self, batch, denom=None):
        adv = batch["advantages"][:, None].expand_as(batch["logprobs"])
        pg = core.agg_loss(-adv * batch["logprobs"], batch["mask"], self.s.loss_agg_mode, denom)
        extra, stats = self._kl_and_entropy(batch, denom)
        stats["pg_loss"] = pg.detach()
        return pg + extra, stats
