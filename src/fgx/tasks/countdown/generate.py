"""Countdown problems and their verl rows: reasoning-gym's (paper style) or fgx's own sampler (compact).

Paper style: ``reasoning_gym.create_dataset("countdown", ...)`` with upstream's settings (values 1-100,
targets 1-999, + - * /, shuffled numbers; upstream uses seed 42, 2-number problems for training and
3/4/5-number problems for evaluation) and upstream's prompt. Rows follow verl's schema with
``data_source = reasoning-gym-countdown-depth{n}`` and ground truth JSON ``{"answer": target,
"numbers": [...]}`` (upstream's layout).

Compact style (``style="compact"``, for the tiny char-level model; same data_source, ground truth
and reward): the prompt is ``cd <numbers separated by spaces>=<target>`` and a newline, e.g.
``cd 25 4 7=93\\n``; ``extra_info["solution"]`` is the reference response
(:func:`fgx.tasks.countdown.trace.solution_text`). Compact problems come from fgx's own sampler
(:func:`sample_compact_problems`: numbers 1-100, a random linear chain of + - * / with positive
integer intermediates, target 1-999, no duplicate problems), which is deterministic for (numbers,
seed) and takes milliseconds per problem; reasoning-gym (sympy-based, far slower per problem) stays
the source of the paper-style data.

Held-out splits: ``partition="train"|"test"`` keeps only the problems whose hash (of the sorted
numbers and the target) falls in that half (``test``: hash % 8 == 0), so a 2-number test set
never shares a problem with 2-number training data and neither file reads the other.
"""

from __future__ import annotations

import hashlib
import random

from fgx.settings import STYLES

from .ground_truth import ground_truth
from .trace import TRACES, solution_text

DATA_SOURCE_PREFIX = "reasoning-gym-countdown"
PARTITIONS = ("none", "train", "test")
SPLITS = ("train", "test")  # extra_info.split
COMPACT_PREFIX = "cd "

TEMPLATE = (
    "Using the numbers {numbers}, create an equation that equals {target}. You can use basic arithmetic "
    "operations (+, -, *, /) and each number can only be used once. Show your work in <think> </think> tags. "
    "And return the final answer in <answer> </answer> tags, for example <answer> (1 + 2) / 3 * 4 </answer>."
)


def data_source(numbers: int) -> str:
    return f"{DATA_SOURCE_PREFIX}-depth{numbers}"


def prompt_text(numbers: list[int], target: int) -> str:
    return TEMPLATE.format(numbers=str(list(numbers)), target=target)


def in_partition(numbers, target: int, partition: str) -> bool:
    """Whether problem (numbers, target) belongs to ``partition`` (see the module docstring)."""
    if partition == "none":
        return True
    if partition not in PARTITIONS:
        raise ValueError(f"unknown partition {partition!r}: use one of {', '.join(PARTITIONS)}")
    key = " ".join(str(int(v)) for v in sorted(numbers)) + f"={int(target)}"
    test = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little") % 8 == 0
    return test if partition == "test" else not test


def _check_args(numbers: int, num: int, style: str) -> None:
    if not isinstance(numbers, int) or isinstance(numbers, bool) or numbers < 2:
        raise ValueError(f"numbers must be an integer >= 2, got {numbers!r}")
    if not isinstance(num, int) or num < 1:
        raise ValueError(f"num must be >= 1, got {num!r}")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: use one of {', '.join(STYLES)}")


def _row(nums: list[int], target: int, *, numbers: int, index: int, split: str, style: str,
         trace: str = "target") -> dict:
    if style == "paper":
        content, solution = prompt_text(nums, target), None
    else:
        content, solution = compact_prompt(nums, target), solution_text(nums, target, trace)
    # paper style: upstream's extra_info, so fgx's rows load together with upstream's
    extra = ({"index": index, "split": split, "depth": numbers} if style == "paper" else
             {"depth": numbers, "index": index, "split": split, "solution": solution, "stage": 0, "style": style})
    return {
        "data_source": data_source(numbers),
        "prompt": [{"role": "user", "content": content}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": ground_truth(target, nums)},
        "extra_info": extra,
    }


def generate(*, numbers: int, num: int, seed: int = 42, split: str | None = None, progress: bool = False,
             style: str = "paper", partition: str = "none", max_value: int = 100, trace: str = "target"):
    """A verl-schema DataFrame of ``num`` countdown problems with ``numbers`` numbers.

    ``style="paper"``: reasoning-gym problems with upstream's prompt (no reference solution).
    ``style="compact"``: fgx's own sampler, the compact prompt and a step-by-step reference
    solution in ``extra_info["solution"]`` (see the module docstring).
    ``partition``: keep only that hash half (``none``: everything; see :func:`in_partition`).
    ``max_value``: numbers are drawn from 1..max_value (upstream: 100; smaller numbers scale the task
    down for a tiny model). ``trace`` (compact style): the reference trace of a 2-number problem,
    see :func:`solution_text`.
    """
    import pandas as pd

    _check_args(numbers, num, style)
    if trace not in TRACES:
        raise ValueError(f"unknown trace {trace!r}: use one of {', '.join(TRACES)}")
    if not isinstance(max_value, int) or max_value < 2:
        raise ValueError(f"max_value must be an integer >= 2, got {max_value!r}")
    split = split or ("train" if numbers == 2 else "test")
    if style == "compact":
        problems = sample_compact_problems(numbers=numbers, num=num, seed=seed, progress=progress,
                                           partition=partition, max_value=max_value)
    else:
        import reasoning_gym

        # a partition keeps ~1/8 (test) or ~7/8 (train) of the draws: draw enough, keep the first num
        size = num if partition == "none" else 10 * num + 100
        ds = reasoning_gym.create_dataset("countdown", min_numbers=numbers, max_numbers=numbers, min_value=1,
                                          max_value=max_value, min_target=1, max_target=999,
                                          operators=("+", "-", "*", "/"), shuffle=True, seed=seed, size=size)
        items = range(size)
        if progress:
            from tqdm import tqdm
            items = tqdm(items, desc=f"countdown-{numbers}", mininterval=1.0)
        problems = []
        for i in items:
            meta = ds[i]["metadata"]
            nums, target = [int(v) for v in meta["numbers"]], int(meta["target"])
            if in_partition(nums, target, partition):
                problems.append((nums, target))
                if len(problems) == num:
                    break
        if len(problems) < num:
            raise ValueError(f"only {len(problems)}/{num} {numbers}-number problems in partition {partition!r}")
    rows = [_row(nums, target, numbers=numbers, index=i, split=split, style=style, trace=trace)
            for i, (nums, target) in enumerate(problems)]
    return pd.DataFrame(rows, columns=["data_source", "prompt", "ability", "reward_model", "extra_info"])



# ----------------------------------------------------------------------------- compact style
def compact_prompt(numbers: list[int], target: int) -> str:
    """``cd 25 4 7=93\\n``: the numbers in the given order, then the target."""
    return COMPACT_PREFIX + " ".join(str(int(v)) for v in numbers) + f"={int(target)}\n"


def _random_chain_target(rng: random.Random, nums: list[int]) -> int:
    """Fold ``nums`` left to right with random + - * / steps on positive integers."""
    run = nums[0]
    for x in nums[1:]:
        choices = [run + x, run * x]
        if run != x:
            choices.append(abs(run - x))
        if run % x == 0:
            choices.append(run // x)
        elif x % run == 0:
            choices.append(x // run)
        run = rng.choice(choices)
    return run


def sample_compact_problems(*, numbers: int, num: int, seed: int, min_value: int = 1, max_value: int = 100,
                            min_target: int = 1, max_target: int = 999, max_misses: int = 100_000,
                            progress: bool = False, partition: str = "none") -> list[tuple[list[int], int]]:
    """``num`` distinct (numbers, target) problems, each solvable by a linear integer chain.

    Numbers are drawn uniformly from min_value..max_value, folded by a random chain of steps
    (each on the running result and the next number, positive integer results), and kept when
    the result lies in min_target..max_target; the shown order is reshuffled. Deterministic for
    (numbers, seed): the stream is ``random.Random("countdown-compact-{numbers}-{seed}")``.
    Raises ValueError after ``max_misses`` rejected draws in a row (e.g. asking for more than the
    12,000 distinct 2-number problems). ``partition`` keeps only the draws in that hash half
    (the stream of draws is the same; ``none`` keeps every draw).
    """
    _check_args(numbers, num, "compact")
    rng = random.Random(f"countdown-compact-{numbers}-{seed}")
    seen: set = set()
    out: list[tuple[list[int], int]] = []
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=num, desc=f"countdown-compact-{numbers}", mininterval=1.0)
    misses = 0
    while len(out) < num:
        if misses >= max_misses:
            raise ValueError(f"only {len(out)}/{num} distinct {numbers}-number countdown problems: {max_misses} "
                             f"draws in a row gave nothing new (seed {seed}); ask for fewer problems")
        misses += 1
        nums = [rng.randint(min_value, max_value) for _ in range(numbers)]
        target = _random_chain_target(rng, nums)
        if not min_target <= target <= max_target:
            continue
        rng.shuffle(nums)
        key = (tuple(sorted(nums)), target)
        if key in seen or not in_partition(nums, target, partition):
            continue
        seen.add(key)
        out.append((nums, target))
        misses = 0
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out

