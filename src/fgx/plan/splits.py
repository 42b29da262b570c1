"""The problem sets: one row per string-task split (its generator arguments, hash partition, what
it must not contain), the Countdown splits, and where each split's file lies."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, Mapping

from fgx.plan import paths
from fgx.seeds import derive_seed, dumps

# The first prompts of each test level, sampled many times for pass@k at large k (evaluate.many_samples)
TEST_MANY = "test_many"
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
# the many-samples subset's file (rule select_prompts)
TEST_MANY_DATA = paths.fill(paths.SUBSET_DATA, split=TEST_MANY)
# splits a user may point at an existing parquet file (e.g. upstream's released data) with data.external
EXTERNAL_SPLITS = ("stage1", "level1", "level2", "level1to2", "test", "val")

COUNTDOWN_TRAIN = "countdown_train"          # 2-number problems (the atomic skill), train partition
COUNTDOWN_TEST = "countdown{n}"              # n-number test problems
_COUNTDOWN_TEST = re.compile(r"^countdown(\d+)$")
COUNTDOWN_ATOMIC_CHECK = 2                   # held-out 2-number problems: does Multi-Base have the skill?


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
    the config asks for it, whether models learn from it (``role``: pretrain, train or eval) and its hash
    partition (fgx.tasks.strings.generate.in_partition: test, val and the Stage-2 training splits never
    share an expression, and none of them reads another's file, so regenerating the test set does not
    invalidate training; Stage-1/pretraining data may share Level-1 expressions with the test set by
    design, and the leakage check reports them as expected overlap)."""

    args: Callable[[Mapping], dict]
    role: str
    partition: str = "none"
    enabled: Callable[[Mapping], bool] = _always
    # files of other splits whose expressions this one must not contain (see generate_exclusions)
    excludes: Callable[[Mapping], list[str]] = field(default=lambda config: [])


def _stage2_train(a: int, b: int) -> StringSplit:
    return StringSplit(lambda d: dict(stage=2, split="train", min_level=a, max_level=b, num=d["stage2_train_problems"]),
                       role="train", partition="train")


# every string-task split, in the order the DAG lists them; level2_chunk{i} rows come from rft_chunk
STRING_SPLITS: dict[str, StringSplit] = {
    "stage1": StringSplit(lambda d: dict(stage=1, split="train", min_level=1, max_level=1, num=d["stage1_problems"]),
                          role="train"),
    "test": StringSplit(lambda d: dict(stage=2, split="test", **_levels(d, "test_levels", "test_per_level")),
                        role="eval", partition="test"),
    "val": StringSplit(lambda d: dict(stage=2, split="test", min_level=d["test_levels"][0],
                                      max_level=d["test_levels"][1], num=sum(d["val_per_level"]),
                                      level_shares=d["val_per_level"]),
                       role="eval", partition="val"),
    TEST_TRAIN_FUNCS: StringSplit(
        lambda d: dict(stage=2, split="train", **_levels(d, "test_train_funcs_levels", "test_train_funcs_per_level")),
        role="eval", partition="test", enabled=lambda c: c["data"]["test_train_funcs_per_level"] > 0,
        excludes=lambda c: [data_path(c, s) for s in string_splits(c) if split_partition(s) == "train"]),
    TEST_FULL_TRACE: StringSplit(
        lambda d: dict(stage=2, split="test", **_levels(d, "test_full_trace_levels", "test_full_trace_per_level"),
                       full_trace_only=True),
        role="eval", partition="test", enabled=lambda c: c["data"]["test_full_trace_per_level"] > 0,
        excludes=lambda c: [data_path(c, "test")]),
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
                     role="train", partition="train")
# the test and validation sets leave out the pretraining prior's nested expressions and the first-step
# problems' compositions (see generate_exclusions)
_PRETRAIN_EXCLUDED = ("pretrain_prior", "pretrain_steps")


def rft_chunk(i: int) -> str:
    return RFT_CHUNK.format(i=i)


def _row(config: Mapping, split: str) -> StringSplit | None:
    if split in STRING_SPLITS:
        row = STRING_SPLITS[split]
        return row if row.enabled(config) else None
    m = _RFT_CHUNK.match(split)
    return _CHUNK if m and 1 <= int(m[1]) <= config["data"]["rft_chunks"] else None


def string_splits(config: Mapping) -> list[str]:
    """Every string-task split the config asks for."""
    return ([name for name, row in STRING_SPLITS.items() if row.enabled(config)]
            + [rft_chunk(i) for i in range(1, config["data"]["rft_chunks"] + 1)])


def eval_splits(config: Mapping) -> list[str]:
    """The string-task splits no model learns from: the held-out test and validation sets, (if
    data.test_train_funcs_per_level > 0) the test set over the train functions and (if
    data.test_full_trace_per_level > 0) the full-trace test set."""
    return [s for s in string_splits(config) if _row(config, s).role == "eval"]


def pretrain_splits(config: Mapping) -> list[str]:
    """The tiny base model's pretraining data (model.source: scratch): Level-1 traces of all 25
    functions, plus (if data.pretrain_prior_problems > 0) the prior's nested traces, one of the 25
    among builtin methods and helpers, and (if data.pretrain_step_problems > 0) first-step problems:
    compositions of the 25 functions answered with their first reduction step only (a call computed
    inside a longer expression, never a composition evaluated)."""
    data = config["data"]
    return (["pretrain"] + (["pretrain_prior"] if data["pretrain_prior_problems"] else [])
            + (["pretrain_steps"] if data["pretrain_step_problems"] else []))


def training_splits(config: Mapping) -> list[str]:
    """Splits a model may learn from (the leakage check compares the test set against these)."""
    return [s for s in string_splits(config) if s not in eval_splits(config)]


def string_split_spec(config: Mapping, split: str) -> dict:
    """Generator arguments of one split (the CLI of ``fgx.tasks.strings generate``)."""
    row = _row(config, split)
    if row is None:
        raise ValueError(f"unknown string-task split {split!r}; known: {', '.join(string_splits(config))}")
    task = config["task"]
    common = {"style": task["style"], "max_value_len": task["max_value_len"],
              "seed": derive_seed(config["seed"], "data", split)}
    return {**row.args(config["data"]), **common}


def split_partition(split: str) -> str:
    """Hash partition of a split (see StringSplit)."""
    row = STRING_SPLITS.get(split) or (_CHUNK if _RFT_CHUNK.match(split) else None)
    return row.partition if row else "none"


def generate_exclusions(config: Mapping, split: str) -> list[str]:
    """Files whose expressions a split must not contain: the test and validation sets leave out the
    pretraining prior's nested expressions and the first-step problems' compositions (drawn over all
    25 functions, they can hit an exact test expression, such as ``func_0((x + x))``, once values are
    short; the leakage check would then fail). The test set over the train functions also leaves out
    every Stage-2 training file (the hash partition keeps only function-free expressions apart; these
    share the train functions). The full-trace test set leaves out the main test set's expressions, so the
    two are independent samples. Only this direction: a test-set knob never reruns training."""
    if split not in eval_splits(config):
        return []
    pretrain = [data_path(config, s) for s in string_splits(config) if s in _PRETRAIN_EXCLUDED]
    return pretrain + STRING_SPLITS[split].excludes(config)


def generate_args(config: Mapping, split: str) -> str:
    """``fgx.tasks.strings generate`` command-line arguments for one split (the excluded files'
    paths, which may come from the config, shell-quoted: the rule puts the arguments into its command)."""
    spec = string_split_spec(config, split)
    args = [f"--stage {spec['stage']}", f"--split {spec['split']}",
            f"--min-level {spec['min_level']}", f"--max-level {spec['max_level']}",
            f"--num {spec['num']}", f"--seed {spec['seed']}", f"--style {spec['style']}"]
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
    if generate_exclusions(config, split):
        args.append("--exclude " + " ".join(map(shlex.quote, generate_exclusions(config, split))))
    return " ".join(args)


# ---------------------------------------------------------------------------- countdown
def countdown_enabled(config: Mapping) -> bool:
    """Whether the Countdown transfer experiment (its figure and models) is a target."""
    return config["countdown"]["enabled"]


def countdown_split(n: int) -> str:
    return COUNTDOWN_TEST.format(n=n)


def countdown_test_splits(config: Mapping) -> list[str]:
    """countdown{n} for every evaluated number count (paper: 3, 4, 5)."""
    return [countdown_split(n) for n in config["countdown"]["test_numbers"]]


def countdown_splits(config: Mapping) -> list[str]:
    """Every Countdown split: the 2-number training data, the 2-number held-out check, the tests."""
    return [COUNTDOWN_TRAIN, *dict.fromkeys([countdown_split(COUNTDOWN_ATOMIC_CHECK), *countdown_test_splits(config)])]


def is_countdown_split(split: str) -> bool:
    return split == COUNTDOWN_TRAIN or bool(_COUNTDOWN_TEST.match(split))


def countdown_split_spec(config: Mapping, split: str) -> dict:
    """Generator arguments of one Countdown split (the CLI of ``fgx.tasks.countdown generate``).

    Training data has 2 numbers only (one arithmetic step: the atomic skill); its problems and
    the 2-number check's come from disjoint hash partitions, so the check is held out. The
    3/4/5-number tests cannot share a problem with 2-number data. The style follows the string
    task's (compact: fgx's sampler with step-by-step reference solutions; paper: reasoning-gym
    problems with upstream's prompt)."""
    cd = config["countdown"]
    style = config["task"]["style"]
    seed = derive_seed(config["seed"], "countdown", split)
    if split == COUNTDOWN_TRAIN:
        return {"numbers": 2, "num": cd["train_problems"], "split": "train", "partition": "train",
                "style": style, "seed": seed, "max_value": cd["max_value"], "trace": cd["trace"]}
    m = _COUNTDOWN_TEST.match(split)
    if m and split in countdown_splits(config):
        n = int(m[1])
        return {"numbers": n, "num": cd["test_problems"], "split": "test",
                "partition": "test" if n == 2 else "none", "style": style, "seed": seed,
                "max_value": cd["max_value"], "trace": "target"}  # a test set's trace is never trained on
    raise ValueError(f"unknown countdown split {split!r}; known: {', '.join(countdown_splits(config))}")


def countdown_generate_args(config: Mapping, split: str) -> str:
    """``fgx.tasks.countdown generate`` command-line arguments for one split."""
    s = countdown_split_spec(config, split)
    return (f"--numbers {s['numbers']} --num {s['num']} --seed {s['seed']} --split {s['split']} "
            f"--style {s['style']} --partition {s['partition']} --max-value {s['max_value']} --trace {s['trace']}")


# ---------------------------------------------------------------------------- files
def data_path(config: Mapping, split: str) -> str:
    """The problem file of a split (string task or Countdown), as rollout/evaluate read it: the file
    ``data.external`` names for it, or the one the DAG generates."""
    if is_countdown_split(split):
        return paths.fill(paths.COUNTDOWN_DATA, split=split)
    if split == TEST_MANY:
        return TEST_MANY_DATA
    return config["data"]["external"].get(split) or paths.fill(paths.STRING_DATA, split=split)


def check_external_files(config: Mapping) -> None:
    """Check every file ``data.external`` names against the task contract before any job runs."""
    from fgx.tasks.contract import check_problem_file

    for split, path in config["data"]["external"].items():
        if path:
            check_problem_file(path, f"data.external.{split} problem set")


def many_samples_enabled(config: Mapping) -> bool:
    m = config["evaluate"]["many_samples"]
    return m["prompts_per_level"] > 0 and bool(m["models"])


def many_samples_settings(config: Mapping) -> str:
    """Which test prompts the large-k evaluation samples (rule select_prompts)."""
    m = config["evaluate"]["many_samples"]
    return dumps({"levels": m["levels"], "per_level": m["prompts_per_level"]})


def asks_for(config: Mapping, split: str) -> bool:
    """Whether the config asks for string-task split ``split``."""
    return _row(config, split) is not None
