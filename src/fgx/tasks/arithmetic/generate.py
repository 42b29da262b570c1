"""Problem generator, prompts and verl rows of the arithmetic-chain task.

A Level-k problem applies k operations to a start value, each to the value the last one gave. The
generator draws, from one ``random.Random(seed)`` stream over the levels in increasing order: a start value
(1..max_value), then per step an operation uniformly among those of the active set that can take the step,
and its parameter uniformly among those that can. A step can be taken when its value stays in
0..max_value and is none of the chain's values so far (a step that changes nothing, or steps that undo each
other, would let a trace that skips them reach the answer). A draw that gets stuck starts over; problems
are unique within a file (their chain text, start value included), and none is one of ``exclude``.

Which operations: Stage 1 all twelve (each on its own: Level 1); Stage 2 the train operations (split
``train``) or the held-out ones (split ``test``). Held-out splits: the test and validation sets draw the
same held-out operations and are kept apart by a hash of the chain text (``partition``: ``val`` takes
hash % 8 == 0, ``test`` the rest), so neither reads the other's file; training sets compose other
operations and cannot share a Level >= 2 problem with them.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Container, Iterable, Sequence

from fgx.settings import STYLES

from .chain import DEFAULT_MAX_VALUE, Step, main_solution_code, render_chain, values
from .ground_truth import ground_truth
from .operations import ALL_OPS, HELD_OUT_OPS, NAMES, OPERATIONS, TRAIN_OPS, definition_source
from .trace import solution_text

DATA_SOURCE_PREFIX = "arithmetic-chain"
SPLITS = ("train", "test")
PARTITIONS = ("none", "test", "val")

# the paper style's instruction, the string task's forward prompt with an integer for an answer
FORWARD_PROMPT = (
    "You are given a code:\n\n{code}\n\nCan you predict the output of `main_solution({input})` "
    "without writing any code? Please reason and put your final answer in the following json format: "
    "{{\"output\": <your output>}}, where <your output> should be the final integer."
)


def data_source(level: int) -> str:
    return f"{DATA_SOURCE_PREFIX}-depth{level}"


def operation_set(stage: int, split: str) -> frozenset[str]:
    """Stage 1: all operations; Stage 2: the train operations (train) / the held-out ones (test)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: use one of {', '.join(SPLITS)}")
    if stage == 1:
        return ALL_OPS
    if stage == 2:
        return TRAIN_OPS if split == "train" else HELD_OUT_OPS
    raise ValueError(f"unknown stage {stage!r}: use 1 (every operation) or 2 (train or held-out operations)")


def in_partition(key: str, partition: str) -> bool:
    """Whether the chain ``key`` (its text) belongs to ``partition`` (see the module docstring)."""
    if partition == "none":
        return True
    if partition not in PARTITIONS:
        raise ValueError(f"unknown partition {partition!r}: use one of {', '.join(PARTITIONS)}")
    val = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little") % 8 == 0
    return val if partition == "val" else not val


def feasible(x: int, ops: Sequence[str], max_value: int, seen: Container[int] = ()) -> list[tuple[str, list]]:
    """Per operation of ``ops`` (in order) that can take a step from ``x``, the parameters it can take it
    with: the value stays in 0..max_value and is neither ``x`` nor one of ``seen`` (the chain's values so
    far)."""
    out = []
    for name in ops:
        op = OPERATIONS[name]
        params = [p for p in (op.params or (None,))
                  if 0 <= (y := op(x, p)) <= max_value and y != x and y not in seen]
        if params:
            out.append((name, params))
    return out


@dataclass(frozen=True)
class Problem:
    start: int
    steps: tuple[Step, ...]
    output: int

    @property
    def level(self) -> int:
        return len(self.steps)

    @property
    def key(self) -> str:
        return render_chain(self.start, self.steps)


def _draw(rng: random.Random, level: int, ops: Sequence[str], max_value: int) -> Problem | None:
    x = start = rng.randint(1, max_value)
    steps, seen = [], {x}
    for _ in range(level):
        choices = feasible(x, ops, max_value, seen)
        if not choices:
            return None
        name, params = rng.choice(choices)
        param = rng.choice(params)
        x = OPERATIONS[name](x, param)
        steps.append((name, param))
        seen.add(x)
    return Problem(start, tuple(steps), x)


def per_level(num: int, levels: Sequence[int]) -> list[int]:
    """``num`` problems split evenly over ``levels``, the remainder one each to the lowest levels."""
    counts = [num // len(levels)] * len(levels)
    for i in range(num - sum(counts)):
        counts[i] += 1
    return counts


def generate_problems(*, stage: int, split: str, min_level: int, max_level: int, num: int, seed: int,
                      max_value: int = DEFAULT_MAX_VALUE, ops: Iterable[str] | None = None,
                      exclude: Iterable[str] = (), partition: str = "none",
                      max_attempts_per_problem: int = 1000) -> list[Problem]:
    """Draw ``num`` unique problems over levels min_level..max_level, split evenly (see the module
    docstring). ``exclude``: chain texts (:func:`fgx.tasks.arithmetic.chain.render_chain`) that must not be
    drawn. Raises ValueError when a level cannot be filled within ``max_attempts_per_problem * count``
    draws."""
    if not (isinstance(min_level, int) and isinstance(max_level, int) and 1 <= min_level <= max_level):
        raise ValueError(f"need 1 <= min_level <= max_level, got min_level={min_level}, max_level={max_level}")
    if num < 0:
        raise ValueError(f"num must be >= 0, got {num}")
    if not isinstance(max_value, int) or max_value < 9:
        raise ValueError(f"max_value must be an integer >= 9 (every operation needs room), got {max_value!r}")
    if partition not in PARTITIONS:
        raise ValueError(f"unknown partition {partition!r}: use one of {', '.join(PARTITIONS)}")
    active = operation_set(stage, split) if ops is None else frozenset(ops)
    unknown = sorted(active - ALL_OPS)
    if unknown or not active:
        raise ValueError(f"unknown operations {unknown}: use names from {', '.join(NAMES)}")
    ordered = [name for name in NAMES if name in active]  # the draw's order does not depend on set order
    rng = random.Random(seed)
    seen = set(exclude)
    levels = list(range(min_level, max_level + 1))
    out: list[Problem] = []
    for level, count in zip(levels, per_level(num, levels)):
        made, attempts, limit = 0, 0, max(max_attempts_per_problem * count, 1000)
        while made < count:
            attempts += 1
            if attempts > limit:
                raise ValueError(f"level {level}: only {made}/{count} unique problems after {limit} draws (stage "
                                 f"{stage}, split {split}, max_value {max_value}); ask for fewer problems at this "
                                 "level, or raise max_value")
            p = _draw(rng, level, ordered, max_value)
            if p is None or p.key in seen or not in_partition(p.key, partition):
                continue
            seen.add(p.key)
            out.append(p)
            made += 1
    return out


# ----------------------------------------------------------------------------- prompts and rows
def program_code(p: Problem, stage: int) -> str:
    """The program a paper-style prompt shows: Stage 1 prints the used operations' definitions above it."""
    main = main_solution_code(p.steps)
    if stage == 1:
        used = sorted({name for name, _ in p.steps}, key=NAMES.index)
        return "\n\n".join(definition_source(name).rstrip("\n") for name in used) + "\n\n" + main
    return main


def compact_prompt(p: Problem) -> str:
    return render_chain(p.start, p.steps) + "\n"


def make_row(p: Problem, *, stage: int, split: str, style: str, index: int,
             max_value: int = DEFAULT_MAX_VALUE) -> dict:
    """One verl-schema row; compact rows carry their reference answer in ``extra_info.solution``."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: use one of {', '.join(STYLES)}")
    values(p.start, p.steps, max_value)  # a problem outside the cap is a caller's bug: say so here
    if style == "paper":
        content, solution = FORWARD_PROMPT.format(code=program_code(p, stage), input=p.start), None
    else:
        content, solution = compact_prompt(p), solution_text(p.start, p.steps, max_value)
    # the string task's extra_info keys in its order, so the two tasks' SFT rows merge into one file
    extra = {"depth": p.level, "index": index, "split": split, **({"solution": solution} if solution else {}),
             "stage": stage, "style": style}
    return {
        "data_source": data_source(p.level),
        "prompt": [{"role": "user", "content": content}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": ground_truth(p.start, p.steps, p.output)},
        "extra_info": extra,
    }


def generate(*, stage: int, split: str, min_level: int, max_level: int, num: int, seed: int,
             style: str = "compact", max_value: int = DEFAULT_MAX_VALUE, ops: Iterable[str] | None = None,
             exclude: Iterable[str] = (), partition: str = "none"):
    """A verl-schema DataFrame, one row per problem of :func:`generate_problems`."""
    import pandas as pd

    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: use one of {', '.join(STYLES)}")
    problems = generate_problems(stage=stage, split=split, min_level=min_level, max_level=max_level, num=num,
                                 seed=seed, max_value=max_value, ops=ops, exclude=exclude, partition=partition)
    rows = [make_row(p, stage=stage, split=split, style=style, index=i, max_value=max_value)
            for i, p in enumerate(problems)]
    return pd.DataFrame(rows, columns=["data_source", "prompt", "ability", "reward_model", "extra_info"])
