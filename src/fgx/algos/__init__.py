"""RL algorithms: pure tensor functions (:mod:`fgx.algos.core`), one small class per algorithm,
and RFT filtering of rollouts (:mod:`fgx.algos.rft`)."""

from __future__ import annotations

from fgx.algos.base import Algorithm
from fgx.algos.grpo import GRPO
from fgx.algos.reinforce import Reinforce

ALGORITHMS: dict[str, type[Algorithm]] = {"grpo": GRPO, "reinforce": Reinforce}


def get_algorithm(name: str, settings) -> Algorithm:
    try:
        cls = ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"rl settings: algorithm {name!r} unknown; choose one of {sorted(ALGORITHMS)}") from None
    return cls(settings)


__all__ = ["ALGORITHMS", "Algorithm", "GRPO", "Reinforce", "get_algorithm"]
