"""Countdown's config section (``countdown:``), declared as fgx.settings declares the others: a field per
key, its type, limits and description (``python -m fgx.knobs`` writes them into the schema and docs)."""

from __future__ import annotations

from dataclasses import dataclass

from fgx.settings import RL_RUNS, SFT, Sampling, knob

from .trace import TRACES


@dataclass(frozen=True)
class Countdown:
    """config ``countdown``: the transfer to Countdown, never trained with RL."""

    enabled: bool = knob("false: no Countdown models, evaluations or figure")
    train_problems: int = knob("2-number problems with step traces: the atomic skill of the Multi-Base", ge=1)
    trace: str = knob("their traces: target (the winning step) | search (every step tried up to it)",
                      choices=TRACES)
    max_value: int = knob("numbers are drawn from 1..max_value in every Countdown set", ge=2)
    train_repeats: int = knob("times each Countdown example appears in one Multi-Base SFT epoch", ge=0)
    string_repeats: int = knob("times each Stage-1 string example appears (keeps the string skill)", ge=0)
    test_problems: int = knob("prompts per number count (and the held-out 2-number check)", ge=1)
    test_numbers: list[int] = knob("number counts with a test set", each={"ge": 3, "le": 6}, min_items=1,
                                   unique=True)
    rl_runs: list[str] = knob("string-task RL runs (rl: settings) started from the Multi-Base",
                              each={"choices": RL_RUNS}, unique=True)
    rl_steps: int = knob("their RL steps", ge=1)
    sft: SFT = knob("the Multi-Base's fine-tuning")
    evaluate: Sampling = knob("Avg@n sampling of every Countdown evaluation")
