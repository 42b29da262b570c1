"""The tree shape of a Countdown answer: where a model that fails on more numbers stops.

An N-number answer combines N numbers with N-1 operations; its expression is a binary tree. A *chain*
combines a running result with one fresh number per operation: *left* (``((a+b)*c)-d``, every operation's
earlier result on its left, the form the compact traces teach), *right* (``a-(b*(c+d))``) or *mixed*; a
*balanced* tree combines two computed results somewhere (``(a+b)*(c-d)``, four numbers or more). An answer
that uses fewer or more numbers than the problem gives, or none that parses, is classed as such: a model
that writes one operation on 3-number problems stops after the atomic skill (arXiv 2512.01775 measures
composition per tree shape the same way).
"""

from __future__ import annotations

import ast
from typing import Iterable

from .scoring import _Invalid, evaluate_answer, extract_answer, parse_answer

SHAPES = ("no_answer", "fewer_numbers", "more_numbers", "one_step", "left_chain", "right_chain", "mixed_chain",
          "balanced")


def _operation(node: ast.expr) -> bool:
    """Whether a subtree computes (an operation, under any unary minus), rather than being a number."""
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.BinOp)


def tree_shape(node: ast.expr) -> str:
    """one_step, left_chain, right_chain, mixed_chain or balanced (see the module docstring)."""
    sides = set()
    for op in (n for n in ast.walk(node) if isinstance(n, ast.BinOp)):
        left, right = _operation(op.left), _operation(op.right)
        if left and right:
            return "balanced"
        if left or right:
            sides.add("left" if left else "right")
    if not sides:
        return "one_step"
    return "mixed_chain" if len(sides) == 2 else f"{sides.pop()}_chain"


def answer_shape(response, numbers: int) -> str:
    """The shape of a response's ``<answer>`` expression on an ``numbers``-number problem (:data:`SHAPES`)."""
    answer = extract_answer(response)
    if answer is None:
        return "no_answer"
    try:
        _, used = evaluate_answer(answer)  # the grammar and size the reward accepts
        node = parse_answer(answer)
    except _Invalid:
        return "no_answer"
    if len(used) != numbers:
        return "fewer_numbers" if len(used) < numbers else "more_numbers"
    return tree_shape(node)


def shape_stats(samples: Iterable[tuple[str, bool]], numbers: int) -> dict:
    """Per shape, over (response, correct) pairs of ``numbers``-number problems: ``<shape>_share`` (of the
    responses) and ``<shape>_accuracy`` (the share of that shape's responses that are correct; NaN without
    any)."""
    counts = dict.fromkeys(SHAPES, 0)
    right = dict.fromkeys(SHAPES, 0)
    for response, correct in samples:
        shape = answer_shape(response, numbers)
        counts[shape] += 1
        right[shape] += bool(correct)
    total = sum(counts.values())
    out = {}
    for shape in SHAPES:
        out[f"{shape}_share"] = counts[shape] / total if total else float("nan")
        out[f"{shape}_accuracy"] = right[shape] / counts[shape] if counts[shape] else float("nan")
    return out
