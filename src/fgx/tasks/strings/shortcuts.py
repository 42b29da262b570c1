"""Wrong computations that still reach a problem's answer: the shortcuts an outcome reward pays for.

The reward reads only the final answer, so on a problem whose answer a wrong trace also reaches, RL
pays for the wrong trace as much as for the right one. With short values this is common: a call is
often a no-op on its input (``f21`` keeps an even-length string, ``f12`` a string without vowels,
sorting a sorted one), so a trace that leaves the call out, or applies another call of the same
expression in its place, still ends on the right string. Two kinds of wrong step are checked, both
among the wrong calls the step funnel (``fgx.analysis.step_funnel``) counts in compositions:

- ``skip``: one call left out (the call replaced by its first argument);
- ``other_call``: one call replaced by another call of the same expression (its function and extra
  arguments) on the same first argument, the wrong call read off the prompt.

``python -m fgx.analysis.contrast --shortcuts without`` compares models on the test prompts that
only a full trace solves (the paper's composition, free of these shortcuts).
"""

from __future__ import annotations

from typing import Iterator

from fgx.tasks.strings.expr import Call, Expr, Method, ValueTooLong, children, evaluate, parse_code, replace_at
from fgx.tasks.strings.ground_truth import parse_ground_truth


def _nodes(e: Expr, path: tuple = ()) -> Iterator[tuple[tuple, Expr]]:
    yield path, e
    for i, c in enumerate(children(e)):
        yield from _nodes(c, path + (i,))


def shortcut_variants(e: Expr) -> Iterator[tuple[str, Expr]]:
    """Every one-step wrong variant of ``e``, as (kind, expression); see the module docstring."""
    calls = [(p, n) for p, n in _nodes(e) if type(n) in (Call, Method)]
    for path, node in calls:
        first = children(node)[0]
        yield "skip", replace_at(e, path, first)
        for _, other in calls:
            if type(other) is Call and type(node) is Call:
                alt = Call(other.fn, (first,) + other.args[1:])
            elif type(other) is Method and type(node) is Method:
                alt = Method(other.name, first)
            else:
                continue
            if alt != node:
                yield "other_call", replace_at(e, path, alt)


def shortcut_kinds(e: Expr, x: str, output: str, max_len: int) -> set[str]:
    """The kinds of one-step wrong variants of ``e`` that still evaluate to ``output`` on ``x``
    (variants whose values outgrow ``max_len`` are not answers the task allows, and are ignored)."""
    found = set()
    for kind, variant in shortcut_variants(e):
        if kind in found:
            continue
        try:
            if evaluate(variant, x, max_len) == output:
                found.add(kind)
        except ValueTooLong:
            continue
    return found


def has_shortcut(ground_truth, max_len: int) -> bool:
    """Whether a row's problem (its ``reward_model.ground_truth``) has a one-step wrong trace that
    reaches its answer: evaluation splits it into the prompts a skipped or wrong call may still
    solve and those only every step solves (``python -m fgx.analysis.contrast --shortcuts``)."""
    gt = parse_ground_truth(ground_truth)
    return bool(shortcut_kinds(parse_code(gt["ref_code"]), gt["x"], gt["ref_output"], max_len))
