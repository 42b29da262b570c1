"""The arithmetic-chain family's problem sets (the DAG's rule generate_arithmetic) and the generator's
command line for each.

As the string task's: Stage-1 Level-1 problems over every operation (the atomic skills), Stage-2 training
splits over the train operations (one per RL run), a fresh Level-2 chunk per iterative-RFT iteration, and
the held-out test and validation sets over the held-out operations, kept apart by a hash partition. The
training splits compose other operations than the held-out sets, so no split reads another's file."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from fgx.tasks.family import Split

PREFIX = "arithmetic_"
STAGE1 = "arithmetic_stage1"      # Level 1, every operation: the atomic skills
STAGE1_CHAINS = "arithmetic_stage1_chains"  # Level 2, train operations, full traces: exposure to composition
TEST = "arithmetic_test"          # held-out operations, arithmetic.test_levels
VAL = "arithmetic_val"            # the same levels, the other hash partition: what RL validates on
TRAIN = "arithmetic_{run}"        # an RL run's train split: arithmetic_level1, arithmetic_level2, ...
RFT_CHUNK = "arithmetic_level2_chunk{i}"
_RFT_CHUNK = re.compile(r"^arithmetic_level2_chunk(\d+)$")
TRAIN_LEVELS = {"level1": (1, 1), "level2": (2, 2), "level1to2": (1, 2)}
EVALUATE = ("arithmetic", "evaluate")  # the sampling settings of every arithmetic evaluation


def train_split(run: str) -> str:
    return TRAIN.format(run=run)


def rft_chunk(i: int) -> str:
    return RFT_CHUNK.format(i=i)


def split_names(config: Mapping) -> list[str]:
    """Every arithmetic split the config asks for (none unless arithmetic.enabled)."""
    a = config["arithmetic"]
    if not a["enabled"]:
        return []
    chains = [STAGE1_CHAINS] if a["stage1_chain_problems"] else []
    return [STAGE1, *chains, *(train_split(run) for run in a["rl_runs"]),
            *(rft_chunk(i) for i in range(1, a["rft_chunks"] + 1)), TEST, VAL]


def splits(config: Mapping) -> dict[str, Split]:
    """The family's problem sets as the DAG sees them (fgx.tasks.family.Split). Stage-1 data are sampled
    as the string task's Stage 1 where the style asks for rollouts (paper: an LLM's correct answers), and
    each chunk as the string task's iterative-RFT chunks are; every held-out set is sampled with
    arithmetic.evaluate."""
    out = {}
    for name in split_names(config):
        if name in (TEST, VAL):
            out[name] = Split("eval", evaluate=EVALUATE)
        elif name in (STAGE1, STAGE1_CHAINS):
            out[name] = Split("train", rollout="stage1")
        else:
            out[name] = Split("train", rollout="rft_baseline" if _RFT_CHUNK.match(name) else None)
    return out


def split_spec(config: Mapping, split: str) -> dict:
    """Generator arguments of one split (the CLI of ``fgx.tasks.arithmetic generate``), less its seed."""
    if split not in split_names(config):
        raise ValueError(f"unknown arithmetic split {split!r}; the config asks for: "
                         f"{', '.join(split_names(config)) or 'none (arithmetic.enabled is false)'}")
    a = config["arithmetic"]
    common = {"style": config["task"]["style"], "max_value": a["max_value"], "partition": "none"}
    if split == STAGE1:
        return {**common, "stage": 1, "split": "train", "min_level": 1, "max_level": 1, "num": a["stage1_problems"]}
    if split == STAGE1_CHAINS:
        return {**common, "stage": 2, "split": "train", "min_level": 2, "max_level": 2,
                "num": a["stage1_chain_problems"]}
    if split in (TEST, VAL):
        lo, hi = a["test_levels"]
        per_level = a["test_per_level"] if split == TEST else a["val_per_level"]
        return {**common, "stage": 2, "split": "test", "min_level": lo, "max_level": hi,
                "num": per_level * (hi - lo + 1), "partition": "test" if split == TEST else "val"}
    if _RFT_CHUNK.match(split):
        return {**common, "stage": 2, "split": "train", "min_level": 2, "max_level": 2, "num": a["rft_chunk_problems"]}
    lo, hi = TRAIN_LEVELS[split[len(PREFIX):]]
    return {**common, "stage": 2, "split": "train", "min_level": lo, "max_level": hi, "num": a["train_problems"]}


def generate_args(config: Mapping, split: str, seed: int, excluded: Sequence[str]) -> str:
    """``fgx.tasks.arithmetic generate`` command-line arguments for one split (no split excludes another's
    problems: the operation split and the hash partition keep them apart)."""
    s = split_spec(config, split)
    return (f"--stage {s['stage']} --split {s['split']} --min-level {s['min_level']} --max-level {s['max_level']} "
            f"--num {s['num']} --seed {seed} --style {s['style']} --max-value {s['max_value']} "
            f"--partition {s['partition']}")
