"""The models of the arithmetic study.

- ``arithmetic_stage1``: Stage 1 on arithmetic, an SFT of the base on Level-1 problems of every operation
  merged with the string task's Stage-1 data. It answers both questions: findings 1-3 on arithmetic start
  from it, and it is the transfer's Multi-Base, a model that saw arithmetic only at Level 1 (as the
  paper's saw Countdown only with 2 numbers).
- ``rl_arithmetic_<run>``: RL on arithmetic (the rl: settings) from it, one run per train split of
  arithmetic.rl_runs; ``rft_arithmetic_iter<i>``: the iterative-RFT baseline on fresh arithmetic Level-2
  chunks, as the string task's.
- ``rl_arithmetic_multi_<run>``: the string task's RL (its train splits, the rl: settings) from it, for
  arithmetic.transfer_rl_steps steps; never trained on arithmetic beyond Level 1.
"""

from __future__ import annotations

from typing import Mapping

from fgx.tasks.family import RLLineage, SFTModel, Source

from .splits import STAGE1, STAGE1_CHAINS, TRAIN, VAL, rft_chunk

STAGE1_MODEL = "arithmetic_stage1"
RFT_MODEL = "rft_arithmetic_iter{i}"
STRING_STAGE1 = "stage1"  # the string task's Stage-1 split (and the base's filtered rollouts on it)


def rft_model(i: int) -> str:
    return RFT_MODEL.format(i=i)


def atomic_source(config: Mapping, split: str = STAGE1) -> Source:
    """Where Stage 1's arithmetic examples come from. compact style (the tiny default): the reference
    traces themselves. The tiny base has never seen an operation and solves no problem, so rejection
    sampling from it would keep nothing: its atomic skills come from supervised data, as an LLM's come from
    pretraining (the Countdown Multi-Base's recipe). paper style (an LLM that can already do arithmetic):
    the base's correct answers, filtered as Stage 1's string rollouts are."""
    if config["task"]["style"] == "compact":
        return Source(split)
    return Source(split, rollouts_of="base")


def models(config: Mapping) -> list[SFTModel]:
    """Stage 1 on arithmetic and the iterative-RFT iterations (iteration i: SFT of iteration i-1, the first
    from Stage 1, on its own correct rollouts of chunk i, with rft_baseline's settings)."""
    a = config["arithmetic"]
    if not a["enabled"]:
        return []
    data = ((Source(STRING_STAGE1, rollouts_of="base"), a["string_repeats"]),
            (atomic_source(config), a["stage1_repeats"]),
            *([(atomic_source(config, STAGE1_CHAINS), a["stage1_repeats"])] if a["stage1_chain_problems"] else []))
    out = [SFTModel(STAGE1_MODEL, init="base", settings=("arithmetic", "sft"), data=tuple(d for d in data if d[1]))]
    for i in range(1, a["rft_chunks"] + 1):
        prev = STAGE1_MODEL if i == 1 else rft_model(i - 1)
        out.append(SFTModel(rft_model(i), init=prev, data=((Source(rft_chunk(i), rollouts_of=prev), 1),),
                            settings=("rft_baseline", "sft")))
    return out


def _runs(key: str):
    def runs(config: Mapping) -> list[str]:
        a = config["arithmetic"]
        return list(a[key]) if a["enabled"] else []
    return runs


# RL on arithmetic from its Stage 1, validated on the held-out arithmetic set
ARITHMETIC = RLLineage("arithmetic", prefix="arithmetic_", init=STAGE1_MODEL, rule="rl_arithmetic",
                       runs=_runs("rl_runs"), train=TRAIN, val=VAL,
                       steps=lambda config: config["arithmetic"]["rl_steps"])
# the transfer: the string task's RL (its train splits and validation set) from the same model
MULTI = RLLineage("arithmetic_multi", prefix="arithmetic_multi_", init=STAGE1_MODEL, rule="rl_arithmetic_multi",
                  runs=_runs("transfer_runs"), steps=lambda config: config["arithmetic"]["transfer_rl_steps"])
