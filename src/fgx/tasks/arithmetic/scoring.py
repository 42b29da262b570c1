"""Reward of the arithmetic-chain task: verl's custom-reward signature, the string task's -1 / 0 / 1
convention.

The answer is the ``"output"`` of the last complete JSON object in the response, found and scored as the
string task's (:func:`fgx.tasks.json_answer.score_output`: linear in the response's length, never
raising). Score: 1.0 if it is a JSON integer equal to the ground truth's ``ref_output``, 0.0 for any other
value (a number written as a string, a float, a bool), -1.0 if no object with an ``"output"`` parses.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from fgx.tasks.family import GroundTruthError
from fgx.tasks.json_answer import score_output

from .ground_truth import parse


@lru_cache(maxsize=8192)
def _answer_of_text(ground_truth: str) -> int:
    return _answer(ground_truth)


def _answer(ground_truth: Any) -> int:
    try:
        return parse(ground_truth)[2]
    except GroundTruthError as err:
        raise ValueError(f"{err.field}: {err.problem}; regenerate the data with "
                         "`python -m fgx.tasks.arithmetic generate`") from None


def ref_output(ground_truth: Any) -> int:
    """The answer a row's ground truth (JSON text, bytes or a dict) holds; ValueError naming the field."""
    if isinstance(ground_truth, bytes):
        ground_truth = ground_truth.decode("utf-8", "replace")
    return _answer_of_text(ground_truth) if isinstance(ground_truth, str) else _answer(ground_truth)


def compute_score(data_source: str, solution_str: Any, ground_truth: Any, extra_info: Any = None) -> dict:
    """verl custom reward: {"score": 1.0 | 0.0 | -1.0, "acc": bool, "pred": str | None}.

    Never raises on any ``solution_str``; a malformed ``ground_truth`` (a data bug) raises ValueError
    naming the field and the fix."""
    ref = ref_output(ground_truth)
    return score_output(solution_str, lambda value: type(value) is int and value == ref)
