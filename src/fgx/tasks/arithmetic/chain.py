"""An arithmetic chain: a start value and the operations applied to it in turn, each step's value the
next one's input. Written as a method chain in evaluation order (``417.sub(3).div(2)``), evaluated with
every value checked against the cap, and read back.
"""

from __future__ import annotations

import re
from typing import Sequence

from .operations import OPERATIONS, apply, check_param

Step = tuple[str, "int | None"]  # (operation name, parameter or None)
# the default cap on every value of a chain: three digits, so a step line stays short for the tiny model
DEFAULT_MAX_VALUE = 999
# values are written in decimal without a sign; longer ones are not read back (no problem has one)
_MAX_DIGITS = 12
_CALL = re.compile(r"\.([a-z]+)\(([0-9]{1,3})?\)")
_NUMBER = re.compile(rf"[0-9]{{1,{_MAX_DIGITS}}}")  # ASCII digits only


class ValueOutOfRange(ValueError):
    """A value of the chain leaves 0..max_value."""


def render_call(name: str, param: int | None) -> str:
    return f".{name}()" if param is None else f".{name}({param})"


def render_chain(start: int, steps: Sequence[Step]) -> str:
    """``417.sub(3).div(2)``: the start value, then each call in the order it applies."""
    return str(start) + "".join(render_call(name, param) for name, param in steps)


def values(start: int, steps: Sequence[Step], max_value: int = DEFAULT_MAX_VALUE) -> list[int]:
    """The value after each step; ValueOutOfRange when the start or a value leaves 0..max_value."""
    if not 0 <= start <= max_value:
        raise ValueOutOfRange(f"start value {start} outside 0..{max_value}")
    out, x = [], start
    for name, param in steps:
        x = apply(name, x, param)
        if not 0 <= x <= max_value:
            raise ValueOutOfRange(f"{name} gives {x}, outside 0..{max_value}")
        out.append(x)
    return out


def evaluate(start: int, steps: Sequence[Step], max_value: int = DEFAULT_MAX_VALUE) -> int:
    """The chain's value: its last step's, or the start value of an empty chain."""
    vals = values(start, steps, max_value)
    return vals[-1] if vals else start


def parse_chain(text: str) -> tuple[int, list[Step]]:
    """``417.sub(3).div(2)`` -> (417, [("sub", 3), ("div", 2)]); ValueError naming what is wrong for text
    that is not a chain of known operations with their parameters."""
    if not isinstance(text, str):
        raise ValueError(f"a chain is text; got {type(text).__name__}")
    text = text.strip()
    m = _NUMBER.match(text)
    if not m:
        raise ValueError(f"a chain starts with a non-negative integer: {text[:40]!r}")
    start, pos, steps = int(m.group()), m.end(), []
    while pos < len(text):
        call = _CALL.match(text, pos)
        if not call:
            raise ValueError(f"not a call at character {pos}: {text[pos:pos + 20]!r}")
        name, param = call.group(1), call.group(2)
        if name not in OPERATIONS:
            raise ValueError(f"unknown operation {name!r}")
        param = None if param is None else int(param)
        check_param(name, param)
        steps.append((name, param))
        pos = call.end()
    return start, steps


def main_solution_code(steps: Sequence[Step]) -> str:
    """The chain as the program a paper-style prompt shows: one assignment per step."""
    lines = ["def main_solution(x):"]
    lines += [f"    x = {name}(x)" if param is None else f"    x = {name}(x, {param})" for name, param in steps]
    return "\n".join(lines + ["    return x"])
