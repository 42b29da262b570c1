"""The Countdown task (paper Section 4.3): reasoning-gym problems, upstream's prompt, a safe reward.

Problems come from ``reasoning_gym.create_dataset("countdown", ...)`` with upstream's settings
(values 1-100, targets 1-999, + - * /, shuffled numbers; upstream uses seed 42, 2-number problems
for training and 3/4/5-number problems for evaluation). Rows follow verl's schema with
``data_source = reasoning-gym-countdown-depth{n}`` and ground truth JSON
``{"answer": target, "numbers": [...]}`` (upstream's layout).

Reward (``compute_score``, verl's custom signature): the last ``<answer>...</answer>`` block is
parsed with ``ast`` (int literals, + - * /, parentheses and unary minus only; at most
``MAX_ANSWER_CHARS`` characters) and evaluated with exact rationals. It is correct when it uses
every given number exactly once (as a multiset; reasoning-gym's rule) and equals the target.
A trailing ``= <number>`` is tolerated and ignored. Scores follow the string task's convention:
1.0 correct, 0.0 a valid expression that is wrong (numbers, value or division by zero),
-1.0 no answer block or an answer that is not such an expression. Never raises on any response.

Compact style (``style="compact"``, for the tiny char-level model; same data_source, ground truth
and reward): the prompt is ``cd <numbers separated by spaces>=<target>`` and a newline, e.g.
``cd 25 4 7=93\\n``; ``extra_info["solution"]`` is the reference response, one arithmetic step
per line (``<a><op><b>=<value>``, always two available values: original numbers or earlier
results), then the answer line whose expression wraps every earlier step in parentheses::

    prompt:    cd 25 4 7=93\\n
    solution:  25*4=100\\n100-7=93\\n<answer>(25*4)-7</answer>\\n

So a 2-number problem is exactly one step (the atomic skill) and an N-number problem a chain of
N-1 steps (composition). Reference solutions come from :func:`solve` (exact search, positive
integer intermediates first, linear chains first, deterministic), never from the sampler.
Compact problems come from fgx's own sampler (:func:`sample_compact_problems`: numbers 1-100, a
random linear chain of + - * / with positive integer intermediates, target 1-999, no duplicate
problems), which is deterministic for (numbers, seed) and takes milliseconds per problem;
reasoning-gym (sympy-based, far slower per problem) stays the source of the paper-style data.

Held-out splits: ``partition="train"|"test"`` keeps only the problems whose hash (of the sorted
numbers and the target) falls in that half (``test``: hash % 8 == 0), so a 2-number test set
never shares a problem with 2-number training data and neither file reads the other.

CLI: ``python -m fgx.tasks.countdown generate --numbers N --num M --seed S --out FILE
[--style paper|compact] [--partition none|train|test]``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

DATA_SOURCE_PREFIX = "reasoning-gym-countdown"
MAX_ANSWER_CHARS = 512
MAX_NODES = 64
STYLES = ("paper", "compact")
TRACES = ("target", "search")  # 2-number reference traces: the winning step, or every step tried up to it
PARTITIONS = ("none", "train", "test")
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
        "reward_model": {"style": "rule", "ground_truth": json.dumps({"answer": target, "numbers": nums})},
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


@dataclass(frozen=True, slots=True)
class _Node:
    value: int | Fraction
    expr: str  # expression over the original numbers (for the answer line)
    leaf: bool


@dataclass(frozen=True, slots=True)
class Step:
    """One line of a compact solution: ``left op right = value`` (values exact)."""
    left: Fraction
    op: str
    right: Fraction
    value: Fraction

    def text(self) -> str:
        return f"{format_value(self.left)}{self.op}{format_value(self.right)}={format_value(self.value)}"


def format_value(v: Fraction) -> str:
    """An integer as is; a fraction or a negative value in parentheses, e.g. ``(7/2)``, ``(-3)``."""
    if v.denominator == 1 and v >= 0:
        return str(v.numerator)
    return f"({v})"


def _int_ops(a: int, b: int):
    """(left, op, right, value) steps on positive ints a, b with a positive integer result, in
    search order; ``a`` stays on the left when it can."""
    yield a, "+", b, a + b
    if a != b:
        yield (a, "-", b, a - b) if a > b else (b, "-", a, b - a)
    yield a, "*", b, a * b
    if a % b == 0:
        yield a, "/", b, a // b
    elif b % a == 0:
        yield b, "/", a, b // a


def _rational_ops(a: Fraction, b: Fraction):
    """Every step on (a, b) (both orders of - and /, no division by zero), in search order."""
    yield a, "+", b, a + b
    yield a, "-", b, a - b
    yield b, "-", a, b - a
    yield a, "*", b, a * b
    if b != 0:
        yield a, "/", b, a / b
    if a != 0:
        yield b, "/", a, b / a


def _combine(a: _Node, b: _Node, step) -> tuple[Step, _Node]:
    """The step (left, op, right, value) applied to nodes a, b (in whichever order it uses them)."""
    left, op, right, value = step
    x, y = (a, b) if left == a.value and right == b.value else (b, a)
    def wrap(n):
        return n.expr if n.leaf else f"({n.expr})"

    return (Step(Fraction(left), op, Fraction(right), Fraction(value)),
            _Node(value, f"{wrap(x)}{op}{wrap(y)}", False))


def _search_linear(run: _Node, rest: tuple[_Node, ...], target, dead: set) -> list | None:
    """Steps combining the running result with one fresh number at a time (positive integers)."""
    if not rest:
        return [] if run.value == target else None
    key = (run.value, tuple(sorted(n.value for n in rest)))
    if key in dead:
        return None
    for k, x in enumerate(rest):
        for step in _int_ops(run.value, x.value):
            st, node = _combine(run, x, step)
            tail = _search_linear(node, rest[:k] + rest[k + 1:], target, dead)
            if tail is not None:
                return [(st, node), *tail]
    dead.add(key)
    return None


def _search_general(nodes: tuple[_Node, ...], target, ops, dead: set) -> list | None:
    """Steps combining any two available values (each result appended at the end)."""
    if len(nodes) == 1:
        return [] if nodes[0].value == target else None
    key = tuple(sorted(n.value for n in nodes))
    if key in dead:
        return None
    for i in range(len(nodes)):
        for j in range(i + 1, len(nodes)):
            a, b = nodes[i], nodes[j]
            rest = nodes[:i] + nodes[i + 1:j] + nodes[j + 1:]
            for step in ops(a.value, b.value):
                st, node = _combine(a, b, step)
                tail = _search_general(rest + (node,), target, ops, dead)
                if tail is not None:
                    return [(st, node), *tail]
    dead.add(key)
    return None


def _search_linear_start(nodes: tuple[_Node, ...], target) -> list | None:
    dead: set = set()
    for i in range(len(nodes)):
        for j in range(i + 1, len(nodes)):
            rest = nodes[:i] + nodes[i + 1:j] + nodes[j + 1:]
            for step in _int_ops(nodes[i].value, nodes[j].value):
                st, node = _combine(nodes[i], nodes[j], step)
                tail = _search_linear(node, rest, target, dead)
                if tail is not None:
                    return [(st, node), *tail]
    return None


def solve(numbers: list[int], target: int) -> tuple[list[Step], str] | None:
    """A reference solution by exact search: (steps, answer expression), or None if there is none.

    Deterministic, in this order of preference: (1) a linear chain (two numbers first, then the
    running result with one more number per step) with positive integer intermediates; (2) any
    combination order with positive integer intermediates; (3) any exact rational values
    (fractions, negatives; shown as ``(7/2)``, ``(-3)``). Within a pass, numbers are tried in the
    given order and operators as + - * /. Every number is used exactly once, so there are
    ``len(numbers) - 1`` steps.
    """
    if len(numbers) < 2:
        raise ValueError(f"countdown needs at least 2 numbers, got {list(numbers)!r}")
    ints = [int(v) for v in numbers]
    found = None
    if all(v > 0 for v in ints) and int(target) > 0:
        nodes = tuple(_Node(v, str(v), True) for v in ints)
        found = _search_linear_start(nodes, int(target))
        if found is None:
            found = _search_general(nodes, int(target), _int_ops, set())
    if found is None:
        nodes = tuple(_Node(Fraction(v), str(v), True) for v in ints)
        found = _search_general(nodes, Fraction(int(target)), _rational_ops, set())
    if found is None:
        return None
    return [s for s, _ in found], found[-1][1].expr


def solution_text(numbers: list[int], target: int, trace: str = "target") -> str:
    """The compact reference response: one ``a<op>b=c`` line per step, then ``<answer>...</answer>``.

    ``trace="search"`` writes a 2-number problem as a search: every step :func:`solve` tries on the
    two numbers (+ - * / in that order, positive integer results), each with its value computed,
    up to the one that reaches the target (``44+39=83``, ``44-39=5`` for ``cd 44 39=5``). A
    ``target`` trace only ever writes the target, a value the prompt shows; a search trace also
    computes values no prompt shows, which a longer chain's intermediate steps need. Problems with
    more numbers, or one the integer steps miss, get the solution itself. Raises ValueError if the
    problem has no solution.
    """
    found = solve(numbers, target)
    if found is None:
        raise ValueError(f"countdown problem {list(numbers)} -> {target} has no solution")
    steps, expr = found
    lines = [s.text() for s in steps]
    if trace == "search" and len(numbers) == 2 and all(int(v) > 0 for v in numbers):
        tried = []
        for left, op, right, value in _int_ops(int(numbers[0]), int(numbers[1])):
            tried.append(Step(Fraction(left), op, Fraction(right), Fraction(value)).text())
            if value == int(target):
                lines = tried
                break
    elif trace not in TRACES:
        raise ValueError(f"unknown trace {trace!r}: use one of {', '.join(TRACES)}")
    return "".join(line + "\n" for line in lines) + f"<answer>{expr}</answer>\n"


_VALUE = r"(\d+|\(-?\d+(?:/\d+)?\))"
_STEP_LINE = re.compile(rf"^{_VALUE}([-+*/]){_VALUE}={_VALUE}$")


def parse_steps(response: str) -> list[Step]:
    """The ``a<op>b=c`` lines of a compact response, in order (values as written, unchecked);
    other lines are skipped."""
    steps = []
    for line in str(response).splitlines():
        m = _STEP_LINE.match(line.strip())
        if m:
            left, op, right, value = m.groups()
            steps.append(Step(Fraction(left.strip("()")), op, Fraction(right.strip("()")),
                              Fraction(value.strip("()"))))
    return steps


def step_value(step: Step) -> Fraction | None:
    """The true value of a step's operation (None for a division by zero)."""
    a, b = step.left, step.right
    if step.op == "/":
        return a / b if b else None
    return a + b if step.op == "+" else a - b if step.op == "-" else a * b


def trace_stats(samples: Iterable[tuple[str, Iterable[int]]]) -> dict:
    """How compact responses reason, step by step, over (response, the prompt's numbers) pairs:
    ``steps`` (step lines per response), ``multi_step`` (share of responses with two or more),
    ``step_right`` (share of step lines whose value is the operation's true value; NaN without any)
    and ``chained``
    (share of responses with a right step that uses a value an earlier right step computed and the
    prompt does not show: what a chain of three or more numbers needs)."""
    n = lines = right = multi = chained = 0
    for response, numbers in samples:
        shown = {Fraction(int(v)) for v in numbers}
        steps = parse_steps(response)
        n += 1
        lines += len(steps)
        multi += len(steps) >= 2
        computed, uses_computed = set(), False
        for s in steps:
            if step_value(s) == s.value:
                right += 1
                uses_computed |= bool(({s.left, s.right} & computed) - shown)
                computed.add(s.value)
        chained += uses_computed
    return {"steps": lines / max(n, 1), "multi_step": multi / max(n, 1),
            "step_right": right / lines if lines else float("nan"), "chained": chained / max(n, 1)}


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


# ----------------------------------------------------------------------------- reward
class _Invalid(Exception):
    pass


@lru_cache(maxsize=8192)
def _gt_from_text(text: str) -> tuple[int, tuple[int, ...]]:
    try:
        obj = json.loads(text)
    except ValueError as err:
        raise ValueError(f"reward_model.ground_truth is not JSON ({err}); regenerate the data with "
                         "`python -m fgx.tasks.countdown generate`") from None
    return _gt_from_obj(obj)


def _gt_from_obj(obj: Any) -> tuple[int, tuple[int, ...]]:
    if not isinstance(obj, dict) or "numbers" not in obj or ("answer" not in obj and "target" not in obj):
        raise ValueError("reward_model.ground_truth must be JSON {\"answer\": target, \"numbers\": [...]} "
                         "as written by `python -m fgx.tasks.countdown generate`")
    target = obj["answer"] if "answer" in obj else obj["target"]
    return int(target), tuple(sorted(int(v) for v in obj["numbers"]))


def parse_ground_truth(ground_truth: Any) -> tuple[int, tuple[int, ...]]:
    """(target, sorted numbers) from the ground-truth JSON text or dict."""
    if isinstance(ground_truth, bytes):
        ground_truth = ground_truth.decode("utf-8")
    if isinstance(ground_truth, str):
        return _gt_from_text(ground_truth)
    return _gt_from_obj(ground_truth)


def extract_answer(solution_str: Any) -> str | None:
    """Content of the last complete ``<answer>...</answer>`` block, stripped (None if absent)."""
    if not isinstance(solution_str, str):
        return None
    end = solution_str.rfind("</answer>")
    if end < 0:
        return None
    start = solution_str.rfind("<answer>", 0, end)
    if start < 0:
        return None
    return solution_str[start + 8:end].strip()


def evaluate_answer(expr: str) -> tuple[Fraction | None, list[int]]:
    """(exact value or None on division by zero, int literals used); _Invalid if not allowed."""
    if len(expr) > MAX_ANSWER_CHARS or not expr:
        raise _Invalid("empty or too long")
    expr = expr.replace("×", "*").replace("÷", "/").replace("−", "-")
    if "=" in expr:  # tolerate "expr = 24"
        lhs, _, rhs = expr.rpartition("=")
        try:
            float(rhs.strip())
        except ValueError:
            raise _Invalid("'=' in answer") from None
        expr = lhs.rstrip("=").strip()
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        raise _Invalid("not an expression") from None
    ints: list[int] = []
    try:
        value = _walk(tree.body, ints, [MAX_NODES])
    except RecursionError:
        raise _Invalid("nested too deeply") from None
    return value, ints


def _walk(node: ast.AST, ints: list[int], budget: list[int]) -> Fraction | None:
    """Exact value (None after a division by zero); collects the int literals into ``ints``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _Invalid("expression too large")
    t = type(node)
    if t is ast.Constant:
        if type(node.value) is not int:
            raise _Invalid(f"constant {node.value!r}")
        ints.append(node.value)
        return Fraction(node.value)
    if t is ast.BinOp:
        op = type(node.op)
        if op not in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            raise _Invalid(f"operator {op.__name__}")
        a = _walk(node.left, ints, budget)
        b = _walk(node.right, ints, budget)
        if a is None or b is None:
            return None
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        return None if b == 0 else a / b
    if t is ast.UnaryOp and type(node.op) is ast.USub:
        v = _walk(node.operand, ints, budget)
        return None if v is None else -v
    raise _Invalid(f"syntax {t.__name__}")


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None) -> dict:
    """verl custom reward: {"score": 1.0 | 0.0 | -1.0, "acc": bool, "pred": str | None}."""
    target, numbers = parse_ground_truth(ground_truth)
    try:
        answer = extract_answer(solution_str)
        if answer is None:
            return {"score": -1.0, "acc": False, "pred": None}
        try:
            value, used = evaluate_answer(answer)
        except _Invalid:
            return {"score": -1.0, "acc": False, "pred": answer[:MAX_ANSWER_CHARS]}
        acc = value is not None and tuple(sorted(used)) == numbers and value == target
        return {"score": 1.0 if acc else 0.0, "acc": bool(acc), "pred": answer}
    except Exception:  # defensive: the reward must not crash a training step
        return {"score": -1.0, "acc": False, "pred": None}


# ----------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fgx.tasks.countdown", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate countdown problems (verl parquet)")
    g.add_argument("--numbers", type=int, required=True, help="numbers per problem (2 = train, 3-5 = eval)")
    g.add_argument("--num", type=int, required=True, help="number of problems")
    g.add_argument("--seed", type=int, default=42, help="seed (paper style: reasoning-gym's; upstream: 42)")
    g.add_argument("--split", choices=["train", "test"], default=None,
                   help="extra_info.split (default: train for 2 numbers, else test)")
    g.add_argument("--style", choices=STYLES, default="paper",
                   help="paper: reasoning-gym problems, upstream's prompt; compact: fgx's sampler, the "
                        "tiny model's prompt and a step-by-step reference solution")
    g.add_argument("--partition", choices=PARTITIONS, default="none",
                   help="keep only one hash half of the problems (train / test never share a problem)")
    g.add_argument("--max-value", type=int, default=100, help="numbers drawn from 1..N (upstream: 100)")
    g.add_argument("--trace", choices=TRACES, default="target",
                   help="compact style: a 2-number reference trace writes the winning step (target) or every "
                        "step tried up to it (search)")
    g.add_argument("--out", required=True, help="output .parquet path (written atomically)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from fgx.io import write_parquet

    try:
        df = generate(numbers=args.numbers, num=args.num, seed=args.seed, split=args.split, progress=True,
                      style=args.style, partition=args.partition, max_value=args.max_value, trace=args.trace)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    write_parquet(df, args.out)
    print(f"wrote {len(df)} {args.style} countdown problems ({args.numbers} numbers, seed {args.seed}) "
          f"to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
