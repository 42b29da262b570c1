"""Reward of Countdown: verl's custom-reward signature, the string task's 1 / 0 / -1 convention.

The last ``<answer>...</answer>`` block is parsed with ``ast`` (int literals, + - * /, parentheses
and unary minus only; at most ``MAX_ANSWER_CHARS`` characters) and evaluated with exact rationals.
It is correct when it uses every given number exactly once (as a multiset; reasoning-gym's rule)
and equals the target. A trailing ``= <number>`` is tolerated and ignored. Scores: 1.0 correct, 0.0
a valid expression that is wrong (numbers, value or division by zero), -1.0 no answer block or an
answer that is not such an expression. Never raises on any response.
"""

from __future__ import annotations

import ast
from fractions import Fraction
from typing import Any

from .ground_truth import parse_ground_truth

MAX_ANSWER_CHARS = 512
MAX_NODES = 64


class _Invalid(Exception):
    pass



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


def parse_answer(expr: str) -> ast.expr:
    """An answer's expression as a syntax tree (a trailing ``= <number>`` dropped, ``×`` ``÷`` ``−`` read as
    ``*`` ``/`` ``-``); _Invalid if it is not one. :func:`evaluate_answer` checks what it may hold."""
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
        return ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        raise _Invalid("not an expression") from None


def evaluate_answer(expr: str) -> tuple[Fraction | None, list[int]]:
    """(exact value or None on division by zero, int literals used); _Invalid if not allowed."""
    ints: list[int] = []
    try:
        value = _walk(parse_answer(expr), ints, [MAX_NODES])
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

