"""The models of the transfer to Countdown (paper Section 4.3): the Multi-Base, an SFT of the base on
Stage-1's string data merged with Countdown's atomic skill, and the string-task RL runs started from it.
None of them is ever trained with RL on Countdown."""

from __future__ import annotations

from typing import Mapping

from fgx.tasks.family import RLLineage, SFTModel, Source

from .splits import COUNTDOWN_TRAIN

MULTI_BASE = "stage1_multi"


def atomic_source(config: Mapping) -> Source:
    """Where the Multi-Base's Countdown 2-number SFT examples come from.

    compact style (the tiny default): the reference traces themselves (extra_info.solution).
    The tiny base has never seen Countdown and solves no 2-number problem, so rejection sampling
    from it would keep nothing: its atomic skill must come from supervised data, as an LLM's
    comes from pretraining. An SFT of the shared string base rather than a second base pretrained
    on strings + Countdown, because the SFT learns the atomic skill in a small share of the time a
    second pretraining (the DAG's most expensive job) would take (docs/research-log.md#countdown-recipe).
    paper style (an LLM that can already do arithmetic): the paper's recipe, correct rollouts
    of the base on 2-number problems (RFT data), filtered like Stage 1's string rollouts."""
    if config["task"]["style"] == "compact":
        return Source(COUNTDOWN_TRAIN)
    return Source(COUNTDOWN_TRAIN, rollouts_of="base")


def models(config: Mapping) -> list[SFTModel]:
    """The Multi-Base: from the base, on Stage-1's string Level-1 RFT data (the very file the String-Base's
    Stage 1 trains on, countdown.string_repeats times, so the tiny model does not forget strings) merged
    with Countdown 2-number data (countdown.train_repeats times), with countdown.sft's settings."""
    cd = config["countdown"]
    return [SFTModel(MULTI_BASE, init="base", settings=("countdown", "sft"),
                     data=((Source("stage1", rollouts_of="base"), cd["string_repeats"]),
                           (atomic_source(config), cd["train_repeats"])))]


# the same string-task RL as the String-Base's (same data and rl: settings), from the Multi-Base, for
# countdown.rl_steps steps
MULTI = RLLineage("multi", prefix="multi_", init=MULTI_BASE, rule="rl_multi",
                  runs=lambda config: config["countdown"]["rl_runs"],
                  steps=lambda config: config["countdown"]["rl_steps"])
