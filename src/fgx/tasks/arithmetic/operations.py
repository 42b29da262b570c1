"""The atomic operations of the arithmetic-chain task: what each does to a non-negative integer, its
parameter's range, and the train / held-out split.

Each operation maps a value (an integer in 0..``max_value``) to the next one, with at most one small
integer parameter. As the string task splits its 25 functions, the twelve operations split in two halves
of like kinds (an additive, a multiplicative, two that reorder the digits, two more of each half's own): RL trains
on compositions of the *train* operations, every test problem composes *held-out* ones, and Stage 1 teaches
all twelve on their own.

The functions below are also the definitions a paper-style Stage-1 prompt prints
(:func:`definition_source`), so what a prompt shows is what the generator computes.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable


def add(x, n):
    return x + n


def sub(x, n):
    return x - n


def mul(x, n):
    return x * n


def div(x, n):
    return x // n


def mod(x, n):
    return x % n


def rev(x):
    return int(str(x)[::-1])


def swap(x):
    s = str(x)
    return int(s[-1] + s[1:-1] + s[0]) if len(s) > 1 else x


def sort(x):
    return int("".join(sorted(str(x))))


def dsum(x):
    return sum(int(d) for d in str(x))


def rot(x):
    s = str(x)
    return int(s[1:] + s[0])


def drop(x):
    return x // 10


def app(x, d):
    return x * 10 + d


@dataclass(frozen=True)
class Operation:
    """One atomic operation: its name as a prompt writes it (``417.sub(3)``), the function, the
    parameter values the generator draws (empty: it takes none) and what it does, in words."""

    name: str
    fn: Callable
    params: tuple[int, ...]
    doc: str

    def __call__(self, x: int, param: int | None = None) -> int:
        return self.fn(x) if param is None else self.fn(x, param)


OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    # train
    Operation("add", add, tuple(range(1, 10)), "add n (n in 1..9)"),
    Operation("mul", mul, (2, 3), "multiply by n (n in 2..3)"),
    Operation("rev", rev, (), "the digits in reverse order (leading zeros dropped)"),
    Operation("sort", sort, (), "the digits in ascending order (leading zeros dropped)"),
    Operation("dsum", dsum, (), "the sum of the digits"),
    Operation("drop", drop, (), "the last digit dropped (x // 10)"),
    # held out
    Operation("sub", sub, tuple(range(1, 10)), "subtract n (n in 1..9)"),
    Operation("div", div, (2, 3), "divide by n, rounded down (n in 2..3)"),
    Operation("swap", swap, (), "the first and last digits swapped (leading zeros dropped)"),
    Operation("rot", rot, (), "the digits rotated left by one (leading zeros dropped)"),
    Operation("mod", mod, (10, 100), "the remainder after division by n (n in 10, 100)"),
    Operation("app", app, tuple(range(10)), "the digit d appended (x * 10 + d, d in 0..9)"),
)}
NAMES: tuple[str, ...] = tuple(OPERATIONS)
TRAIN_OPS: frozenset[str] = frozenset({"add", "mul", "rev", "sort", "dsum", "drop"})
HELD_OUT_OPS: frozenset[str] = frozenset(NAMES) - TRAIN_OPS
ALL_OPS: frozenset[str] = frozenset(NAMES)


def operation(name: str) -> Operation:
    if name not in OPERATIONS:
        raise ValueError(f"unknown operation {name!r}; known: {', '.join(NAMES)}")
    return OPERATIONS[name]


def check_param(name: str, param: int | None) -> None:
    """Raise ValueError unless ``param`` is one the generator draws for ``name`` (None for an operation
    without a parameter)."""
    op = operation(name)
    if op.params and param not in op.params:
        raise ValueError(f"{name} takes a parameter in {', '.join(map(str, op.params))}; got {param!r}")
    if not op.params and param is not None:
        raise ValueError(f"{name} takes no parameter; got {param!r}")


def apply(name: str, x: int, param: int | None = None) -> int:
    """``name`` applied to ``x`` (a non-negative integer) with ``param``, checked."""
    if not isinstance(x, int) or isinstance(x, bool) or x < 0:
        raise ValueError(f"an operation reads a non-negative integer; got {x!r}")
    check_param(name, param)
    return OPERATIONS[name](x, param)


def definition_source(name: str) -> str:
    """The Python definition a paper-style Stage-1 prompt prints for ``name``."""
    return inspect.getsource(operation(name).fn)
