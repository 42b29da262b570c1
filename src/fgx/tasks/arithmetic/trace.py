"""The compact answer format of the arithmetic-chain task, as the string task's: one *step line* per
operation (the call on the last value, then its value), then the answer line::

    prompt:    417.sub(3).div(2)
    solution:  417.sub(3)=414
               414.div(2)=207
               {"output": 207}

The next step's call is the one after the last step's in the prompt and its input the last value, so
nothing but the steps needs writing. This module writes the format and reads it back
(:func:`written_steps`, :func:`parse_step`, :func:`trace_stats`: how responses step).
"""

from __future__ import annotations

import json
import sys
from typing import Iterable, Sequence

from .chain import DEFAULT_MAX_VALUE, Step, parse_chain, render_chain, values
from .operations import apply


def step_line(x: int, step: Step, value: int) -> str:
    """``417.sub(3)=414``."""
    return f"{render_chain(x, [step])}={value}"


def output_line(value: int) -> str:
    return json.dumps({"output": value})


def trace_lines(start: int, steps: Sequence[Step], max_value: int = DEFAULT_MAX_VALUE) -> list[str]:
    """The reference answer of a chain: every step line, then the answer line."""
    vals = values(start, steps, max_value)
    inputs = [start, *vals[:-1]]
    return [step_line(x, s, v) for x, s, v in zip(inputs, steps, vals)] + [output_line(vals[-1] if vals else start)]


def solution_text(start: int, steps: Sequence[Step], max_value: int = DEFAULT_MAX_VALUE) -> str:
    """The reference response: every trace line followed by ``\\n``."""
    return "".join(line + "\n" for line in trace_lines(start, steps, max_value))


def written_steps(response) -> list[str]:
    """The lines a response writes before its answer line that hold an ``=`` (its attempted steps)."""
    out = []
    for line in str(response).split("\n"):
        line = line.strip()
        if line.startswith("{"):
            break
        if line.find("=") > 0:
            out.append(line)
    return out


def parse_step(line: str) -> tuple[int, Step, int] | None:
    """``417.sub(3)=414`` -> (417, ("sub", 3), 414); None for a line that is not one step of a known
    operation with a written value."""
    lhs, eq, rhs = str(line).strip().partition("=")
    rhs = rhs.strip()
    if not eq or not rhs.isascii() or not rhs.isdigit() or len(rhs) > 12:
        return None
    try:
        x, steps = parse_chain(lhs)
    except ValueError:
        return None
    return (x, steps[0], int(rhs)) if len(steps) == 1 else None


def trace_stats(samples: Iterable[tuple[str, int, Sequence[Step]]]) -> dict:
    """How responses step, over (response, start value, the chain's steps) triples: ``steps_written`` (step
    lines per response), ``step_right`` (share of step lines whose value is their operation applied to their
    input; NaN without any) and ``full_trace`` (share of responses whose step lines are the reference's,
    every step of the chain written right, whatever the answer line says)."""
    n = lines = right = full = 0
    for response, start, steps in samples:
        written = written_steps(response)
        n += 1
        lines += len(written)
        for line in written:
            step = parse_step(line)
            right += step is not None and _value(step[0], step[1]) == step[2]
        full += written == trace_lines(start, steps, sys.maxsize)[:-1]  # the chain as written, whatever its cap
    return {"steps_written": lines / max(n, 1), "step_right": right / lines if lines else float("nan"),
            "full_trace": full / max(n, 1)}


def _value(x: int, step: Step) -> int | None:
    try:
        return apply(step[0], x, step[1])
    except ValueError:
        return None
