"""The string task's problem sets: one row per split (generator arguments, hash partition, what it must
not contain), and the generator's command line for each (the DAG's rule generate_strings)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from fgx.tasks.family import Split

# A second test set over the *train* functions (new expressions only): the function_transfer figure
# compares each RL gain there with the same gain on the held-out functions of the main test set.
TEST_TRAIN_FUNCS = "test_train_funcs"
# A test set of deep prompts that only a full trace solves (no one-step wrong trace reaches their
# answer), disjoint from the main test set: the model_contrasts figure's measure of composition at a
# depth where the main test set holds few such prompts.
TEST_FULL_TRACE = "test_full_trace"
# Stage-2 train splits: (min level, max level) over the train functions.
TRAIN_SPLIT_LEVELS = {"level1": (1, 1), "level2": (2, 2), "level1to2": (1, 2)}
# the iterative-RFT baseline's Level-2 data, one chunk per iteration: level2_chunk{i}
RFT_CHUNK = "level2_chunk{i}"
_RFT_CHUNK = re.compile(r"^level2_chunk(\d+)$")
# splits a user may point at an existing parquet file (e.g. upstream's released data) with data.external
EXTERNAL_SPLITS = ("stage1", "level1", "level2", "level1to2", "test", "val")


def _always(config: Mapping) -> bool:
    return True


def _scratch(config: Mapping) -> bool:
    return config["model"]["source"] == "scratch"


def _levels(data: Mapping, key: str, per_level: str) -> dict:
    lo, hi = data[key]
    return dict(min_level=lo, max_level=hi, num=data[per_level] * (hi - lo + 1))


@dataclass(frozen=True)
class StringSplit:
    """One string-task split: its generator arguments (``args(data)``, data = config["data"]), whether
    the config asks for it, whether models learn from it (``role``: pretrain, train or eval), which config
    section samples a model on it for RFT (``rollout``) and its hash partition
    (fgx.tasks.strings.generate.in_partition: test, val and the Stage-2 training splits never share an
    expression, and none of them reads another's file, so regenerating the test set does not invalidate
    training; Stage-1/pretraining data may share Level-1 expressions with the test set by design, and the
    leakage check reports them as expected overlap)."""

    args: Callable[[Mapping], dict]
    role: str
    partition: str = "none"
    enabled: Callable[[Mapping], bool] = _always
    # other splits whose expressions this one must not contain (see excludes)
    excludes: Callable[[Mapping], list[str]] = field(default=lambda config: [])
    rollout: str | None = None


def _stage2_train(a: int, b: int) -> StringSplit:
    return StringSplit(lambda d: dict(stage=2, split="train", min_level=a, max_level=b, num=d["stage2_train_problems"]),
                       role="train", partition="train")


# every string-task split, in the order the DAG lists them; level2_chunk{i} rows come from rft_chunk
STRING_SPLITS: dict[str, StringSplit] = {
    "stage1": StringSplit(lambda d: dict(stage=1, split="train", min_level=1, max_level=1, num=d["stage1_problems"]),
                          role="train", rollout="stage1"),
    "test": StringSplit(lambda d: dict(stage=2, split="test", **_levels(d, "test_levels", "test_per_level")),
                        role="eval", partition="test"),
    "val": StringSplit(lambda d: dict(stage=2, split="test", min_level=d["test_levels"][0],
                                      max_level=d["test_levels"][1], num=sum(d["val_per_level"]),
                                      level_shares=d["val_per_level"]),
                       role="eval", partition="val"),
    TEST_TRAIN_FUNCS: StringSplit(
        lambda d: dict(stage=2, split="train", **_levels(d, "test_train_funcs_levels", "test_train_funcs_per_level")),
        role="eval", partition="test", enabled=lambda c: c["data"]["test_train_funcs_per_level"] > 0,
        excludes=lambda c: [s for s in split_names(c) if split_partition(s) == "train"]),
    TEST_FULL_TRACE: StringSplit(
        lambda d: dict(stage=2, split="test", **_levels(d, "test_full_trace_levels", "test_full_trace_per_level"),
                       full_trace_only=True),
        role="eval", partition="test", enabled=lambda c: c["data"]["test_full_trace_per_level"] > 0,
        excludes=lambda c: ["test"]),
    **{name: _stage2_train(a, b) for name, (a, b) in TRAIN_SPLIT_LEVELS.items()},
    "pretrain": StringSplit(lambda d: dict(stage=1, split="train", min_level=1, max_level=1,
                                           num=d["pretrain_problems"], inputs="carried"),
                            role="pretrain", enabled=_scratch),
    "pretrain_prior": StringSplit(
        lambda d: dict(stage=1, split="train", min_level=d["pretrain_prior_levels"][0],
                       max_level=d["pretrain_prior_levels"][1], num=d["pretrain_prior_problems"], grammar="prior",
                       level_shares=d["pretrain_prior_level_shares"]),
        role="pretrain", enabled=lambda c: _scratch(c) and bool(c["data"]["pretrain_prior_problems"])),
    "pretrain_steps": StringSplit(
        lambda d: dict(stage=1, split="train", min_level=d["pretrain_step_levels"][0],
                       max_level=d["pretrain_step_levels"][1], num=d["pretrain_step_problems"], first_step=True,
                       first_step_unmarked=d["pretrain_step_unmarked"]),
        role="pretrain", enabled=lambda c: _scratch(c) and bool(c["data"]["pretrain_step_problems"])),
}
# level2_chunk{i}: the iterative-RFT baseline trains on the same kind of Level-2 data as RL on Level 2
_CHUNK = StringSplit(lambda d: dict(stage=2, split="train", min_level=2, max_level=2, num=d["rft_chunk_problems"]),
                     role="train", partition="train", rollout="rft_baseline")
# the test and validation sets leave out the pretraining prior's nested expressions and the first-step
# problems' compositions (see excludes)
_PRETRAIN_EXCLUDED = ("pretrain_prior", "pretrain_steps")


def rft_chunk(i: int) -> str:
    return RFT_CHUNK.format(i=i)


def _row(config: Mapping, split: str) -> StringSplit | None:
    if split in STRING_SPLITS:
        row = STRING_SPLITS[split]
        return row if row.enabled(config) else None
    m = _RFT_CHUNK.match(split)
    return _CHUNK if m and 1 <= int(m[1]) <= config["data"]["rft_chunks"] else None


def split_names(config: Mapping) -> list[str]:
    """Every string-task split the config asks for."""
    return ([name for name, row in STRING_SPLITS.items() if row.enabled(config)]
            + [rft_chunk(i) for i in range(1, config["data"]["rft_chunks"] + 1)])


def split_partition(split: str) -> str:
    """Hash partition of a split (see StringSplit)."""
    row = STRING_SPLITS.get(split) or (_CHUNK if _RFT_CHUNK.match(split) else None)
    return row.partition if row else "none"


def excludes(config: Mapping, split: str) -> list[str]:
    """The splits whose expressions ``split`` must not contain: the test and validation sets leave out the
    pretraining prior's nested expressions and the first-step problems' compositions (drawn over all 25
    functions, they can hit an exact test expression, such as ``func_0((x + x))``, once values are short;
    the leakage check would then fail). The test set over the train functions also leaves out every
    Stage-2 training split (the hash partition keeps only function-free expressions apart; these share
    the train functions). The full-trace test set leaves out the main test set's expressions, so the two
    are independent samples. Only this direction: a test-set knob never reruns training."""
    row = _row(config, split)
    if row is None or row.role != "eval":
        return []
    return [s for s in split_names(config) if s in _PRETRAIN_EXCLUDED] + row.excludes(config)


def splits(config: Mapping) -> dict[str, Split]:
    """The family's problem sets as the DAG sees them (fgx.tasks.family.Split), in the DAG's order."""
    out = {}
    for name in split_names(config):
        row = _row(config, name)
        out[name] = Split(row.role, excludes=tuple(excludes(config, name)), rollout=row.rollout)
    return out


def split_spec(config: Mapping, split: str) -> dict:
    """Generator arguments of one split (the CLI of ``fgx.tasks.strings generate``), less its seed."""
    row = _row(config, split)
    if row is None:
        raise ValueError(f"unknown string-task split {split!r}; known: {', '.join(split_names(config))}")
    task = config["task"]
    return {**row.args(config["data"]), "style": task["style"], "max_value_len": task["max_value_len"]}


def generate_args(config: Mapping, split: str, seed: int, excluded: Sequence[str]) -> str:
    """``fgx.tasks.strings generate`` command-line arguments for one split (``excluded``: the files of its
    excluded splits, which may come from the config, shell-quoted: the rule puts the arguments into its
    command)."""
    spec = split_spec(config, split)
    args = [f"--stage {spec['stage']}", f"--split {spec['split']}",
            f"--min-level {spec['min_level']}", f"--max-level {spec['max_level']}",
            f"--num {spec['num']}", f"--seed {seed}", f"--style {spec['style']}"]
    if spec["max_value_len"]:
        args.append(f"--max-value-len {spec['max_value_len']}")
    if split_partition(split) != "none":
        args.append(f"--partition {split_partition(split)}")
    if "grammar" in spec:
        args.append(f"--grammar {spec['grammar']}")
    if "inputs" in spec:
        args.append(f"--inputs {spec['inputs']}")
    if spec.get("full_trace_only"):
        args.append("--full-trace-only")
    if spec.get("first_step"):
        args.append("--first-step")
        args.append(f"--first-step-unmarked {spec['first_step_unmarked']}")
    # equal shares are the even split: the command (and so the split's file) stays that of no shares
    if spec.get("level_shares") and len(set(spec["level_shares"])) > 1:
        args.append("--level-shares " + " ".join(str(s) for s in spec["level_shares"]))
    if excluded:
        args.append("--exclude " + " ".join(map(shlex.quote, excluded)))
    return " ".join(args)


def external(config: Mapping) -> dict[str, str | None]:
    """``data.external``: the splits the config points at an existing file instead of generating them."""
    return dict(config["data"]["external"])
