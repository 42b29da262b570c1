"""Exact Countdown search: a reference solution of a problem, one arithmetic step a line.

A step combines two available values (original numbers or earlier results) into a new one; every
number is used exactly once, so an N-number problem takes N-1 steps. :func:`solve` prefers linear
chains with positive integer intermediates, then any combination order with positive integers, then
exact rationals; it is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


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


def int_steps(a: int, b: int):
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
        for step in int_steps(run.value, x.value):
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
            for step in int_steps(nodes[i].value, nodes[j].value):
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
            found = _search_general(nodes, int(target), int_steps, set())
    if found is None:
        nodes = tuple(_Node(Fraction(v), str(v), True) for v in ints)
        found = _search_general(nodes, Fraction(int(target)), _rational_ops, set())
    if found is None:
        return None
    return [s for s, _ in found], found[-1][1].expr

