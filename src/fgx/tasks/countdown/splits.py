"""Countdown's problem sets (paper Section 4.3) and the generator's command line for each (the DAG's rule
generate_countdown): 2-number training data (the atomic skill), a held-out 2-number check, and one test
set per evaluated number count."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from fgx.tasks.family import Split

COUNTDOWN_TRAIN = "countdown_train"          # 2-number problems (the atomic skill), train partition
COUNTDOWN_TEST = "countdown{n}"              # n-number test problems
_COUNTDOWN_TEST = re.compile(r"^countdown(\d+)$")
ATOMIC_CHECK = 2                             # held-out 2-number problems: does the Multi-Base have the skill?
EVALUATE = ("countdown", "evaluate")         # the sampling settings of every Countdown evaluation


def test_split(n: int) -> str:
    return COUNTDOWN_TEST.format(n=n)


def test_splits(config: Mapping) -> list[str]:
    """countdown{n} for every evaluated number count (paper: 3, 4, 5)."""
    return [test_split(n) for n in config["countdown"]["test_numbers"]]


def split_names(config: Mapping) -> list[str]:
    """Every Countdown split: the 2-number training data, the 2-number held-out check, the tests."""
    return [COUNTDOWN_TRAIN, *dict.fromkeys([test_split(ATOMIC_CHECK), *test_splits(config)])]


def splits(config: Mapping) -> dict[str, Split]:
    """The family's problem sets as the DAG sees them (fgx.tasks.family.Split). The training data is
    sampled for RFT as Stage 1's data is (paper style: the Multi-Base's Countdown data are the base's
    correct rollouts); every test is sampled with countdown.evaluate."""
    return {name: Split("train", rollout="stage1") if name == COUNTDOWN_TRAIN else Split("eval", evaluate=EVALUATE)
            for name in split_names(config)}


def split_spec(config: Mapping, split: str) -> dict:
    """Generator arguments of one Countdown split (the CLI of ``fgx.tasks.countdown generate``), less its
    seed.

    Training data has 2 numbers only (one arithmetic step: the atomic skill); its problems and
    the 2-number check's come from disjoint hash partitions, so the check is held out. The
    3/4/5-number tests cannot share a problem with 2-number data. The style follows the string
    task's (compact: fgx's sampler with step-by-step reference solutions; paper: reasoning-gym
    problems with upstream's prompt)."""
    cd = config["countdown"]
    style = config["task"]["style"]
    if split == COUNTDOWN_TRAIN:
        return {"numbers": 2, "num": cd["train_problems"], "split": "train", "partition": "train",
                "style": style, "max_value": cd["max_value"], "trace": cd["trace"]}
    m = _COUNTDOWN_TEST.match(split)
    if m and split in split_names(config):
        n = int(m[1])
        return {"numbers": n, "num": cd["test_problems"], "split": "test",
                "partition": "test" if n == 2 else "none", "style": style,
                "max_value": cd["max_value"], "trace": "target"}  # a test set's trace is never trained on
    raise ValueError(f"unknown countdown split {split!r}; known: {', '.join(split_names(config))}")


def generate_args(config: Mapping, split: str, seed: int, excluded: Sequence[str]) -> str:
    """``fgx.tasks.countdown generate`` command-line arguments for one split (no split excludes another's
    problems: the hash partition keeps them apart)."""
    s = split_spec(config, split)
    return (f"--numbers {s['numbers']} --num {s['num']} --seed {seed} --split {s['split']} "
            f"--style {s['style']} --partition {s['partition']} --max-value {s['max_value']} --trace {s['trace']}")
