"""The compact answer format of Countdown: step lines ``<a><op><b>=<value>``, then ``<answer>...</answer>``.

::

    prompt:    cd 25 4 7=93\\n
    solution:  25*4=100\\n100-7=93\\n<answer>(25*4)-7</answer>\\n

So a 2-number problem is exactly one step (the atomic skill) and an N-number problem a chain of
N-1 steps (composition). Reference solutions come from :func:`fgx.tasks.countdown.solver.solve`,
never from the sampler. :func:`trace_stats` reads responses back: how they step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction

from .solver import Step, int_steps, solve

TRACES = ("target", "search")  # 2-number reference traces: the winning step, or every step tried up to it


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
        for left, op, right, value in int_steps(int(numbers[0]), int(numbers[1])):
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

