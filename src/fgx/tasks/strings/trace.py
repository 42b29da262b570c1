"""The compact answer format of the string task: one line per reduction step, then the answer.

A compact prompt writes its expression as a method chain in evaluation order
(``"dcba".f3().f17()``, :func:`fgx.tasks.strings.expr.render_chain`). Its reference answer, the
format the tiny model is pretrained on and writes, is one *step line* per reduction
(leftmost-innermost first), each the reduced call with its arguments' values and its own value,
then the answer line::

    "dcba".f3()="abcd"
    "abcd".f17()="dcba"
    {"output": "dcba"}

The next step's call is the one after the last step's in the prompt, and its argument the last
value, so nothing but the steps needs writing. This module writes that format and reads it back;
every analysis that looks inside a response (failure modes, the step funnel) reads steps through
:func:`written_steps` and :func:`parse_step`.
"""

from __future__ import annotations

import json

from .expr import (DEFAULT_MAX_LEN, Expr, Str, UnsupportedCode, ValueTooLong, evaluate, parse_chain, quote,
                   reductions, render_chain, render_compact)


def step_line(redex: Expr, value: str, x: str) -> str:
    """``"dcba".f3()="abcd"``: a reduced node (arguments literal) and its value."""
    return render_chain(redex, x) + "=" + quote(value)


def output_line(value: str) -> str:
    return json.dumps({"output": value}, ensure_ascii=False)


def trace_lines(e: Expr, x: str, max_len: int | None = DEFAULT_MAX_LEN) -> list[str]:
    """The reference answer of ``e`` on input ``x``: every step line, then the answer line."""
    cap = DEFAULT_MAX_LEN if max_len is None else max_len
    if len(x) > cap:
        raise ValueTooLong(f"the input has {len(x)} characters (cap {cap})")
    steps = reductions(e, x, cap)
    value = steps[-1][1] if steps else evaluate(e, x, cap)
    return [step_line(redex, v, x) for redex, v in steps] + [output_line(value)]


def solution_text(e: Expr, x: str, max_len: int | None = DEFAULT_MAX_LEN) -> str:
    """The reference response: every trace line followed by ``\\n``."""
    return "".join(line + "\n" for line in trace_lines(e, x, max_len))


def top_level_eq(line: str) -> int:
    """Index of the first ``=`` outside string literals, or -1."""
    in_str = esc = False
    for i, ch in enumerate(line):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "=":
            return i
    return -1


def written_steps(response: str) -> list[str]:
    """The step lines a response writes (lines with a top-level ``=``) before its answer line."""
    out = []
    for line in str(response).split("\n"):
        line = line.strip()
        if line.startswith("{"):
            break
        if top_level_eq(line) > 0:
            out.append(line)
    return out


def parse_step(line: str) -> tuple[Expr, str] | None:
    """``"dcba".f3()="abcd"`` -> (the call as an expression, ``"abcd"``); None for a line that is not
    a step (no top-level ``=``, an unparsable side, or a value that is not one string)."""
    i = top_level_eq(line)
    if i <= 0:
        return None
    try:
        lhs, rhs = parse_chain(line[:i]), parse_chain(line[i + 1:])
    except (UnsupportedCode, ValueError, SyntaxError, RecursionError):
        return None
    return (lhs, rhs.value) if type(rhs) is Str else None


def chain_to_compact(line: str) -> str:
    """A chain line in the nested form (``"ab".f3().f10()`` -> ``f10(f3("ab"))``, ``"dcba".f3()="abcd"``
    -> ``f3("dcba")="abcd"``); a line that is no chain expression (the answer line) is returned as it is."""
    i = top_level_eq(line)
    lhs, tail = (line[:i], line[i:]) if i >= 0 else (line, "")
    try:
        e = parse_chain(lhs)
    except (ValueError, SyntaxError, RecursionError):
        return line
    return render_compact(e, "") + tail
