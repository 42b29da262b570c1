"""The RL algorithms, one module each, looked up by the name config key ``rl.algorithm`` gives.

An algorithm is a module ``fgx.algos.rl.<name>`` that defines

* ``advantages(rewards, group)``: per-sequence advantages (B,) of outcome rewards (B,) whose prompt
  groups are the ids ``group`` (B,), a pure tensor function;
* ``policy_loss(batch, *, kl_coef, entropy_coef, loss_agg_mode, denom=None)``: the loss of one
  micro-batch (:func:`fgx.algos.objective.policy_loss`, the PPO clipped surrogate, unless the
  algorithm brings its own);
* ``VERL_OVERRIDES``: the Hydra overrides of verl's ``main_ppo`` that make verl compute the same
  advantages and loss (``algorithm.adv_estimator`` and what it needs besides).

The torch engine calls ``advantages`` and ``policy_loss`` (:mod:`fgx.engines.torch.rl`); the verl engine
passes ``VERL_OVERRIDES`` (:func:`fgx.engines.verl.commands.ppo_overrides`), and reads them back to say
which algorithm a verl command trains. Adding one is a module here and a line in :data:`ALGORITHMS`,
then ``python -m fgx.knobs --write`` (the schema's ``rl.algorithm`` choices); tests/test_rl_algorithms.py
holds every registered module to this shape and to both engines.

This file imports no torch: :mod:`fgx.settings` declares config keys ``rl.algorithm`` and
``rl.loss_agg_mode`` from :data:`ALGORITHMS` and :data:`LOSS_AGG_MODES`.
"""

from __future__ import annotations

from types import ModuleType

# name -> what its advantage is, in a few words (the description of config key rl.algorithm)
ALGORITHMS = {
    "grpo": "group-normalised advantages",
    "reinforce": "group-mean baseline, no std",
    "rloo": "leave-one-out baseline",
}

# how every algorithm's token losses are averaged (config key rl.loss_agg_mode; fgx.algos.core.agg_loss)
LOSS_AGG_MODES = ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean")


def algorithm(name: str) -> ModuleType:
    """The module of the RL algorithm ``name`` (imported on first use: it brings torch)."""
    import importlib

    if name not in ALGORITHMS:
        raise ValueError(f"rl.algorithm {name!r} unknown; choose one of {', '.join(ALGORITHMS)}")
    return importlib.import_module(f"{__name__}.{name}")
