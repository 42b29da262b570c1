"""Reward of the string task: verl's custom-reward signature, upstream's -1 / 0 / 1 convention.

The answer is the ``"output"`` of the last complete JSON object in the response
(:mod:`fgx.tasks.json_answer`). Score: 1.0 if it is the string equal to ``ref_output`` exactly, 0.0 for any
other value, -1.0 if no candidate parses; nothing raises on any response.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from fgx.tasks.json_answer import score_output

_loads = json.loads


@lru_cache(maxsize=8192)
def _ref_output_from_text(ground_truth: str) -> str:
    try:
        gt = _loads(ground_truth)
    except (TypeError, ValueError) as err:
        raise ValueError(f"reward_model.ground_truth is not JSON ({err}); regenerate the data with "
                         "`python -m fgx.tasks.strings generate`") from None
    return _ref_output_from_dict(gt)


def _ref_output_from_dict(gt: Any) -> str:
    if not isinstance(gt, dict) or "ref_output" not in gt:
        raise ValueError("reward_model.ground_truth lacks 'ref_output'; it must be the JSON text "
                         "{\"ref_input\": ..., \"ref_output\": ..., \"ref_code\": ..., \"funcname\": ...} "
                         "written by `python -m fgx.tasks.strings generate`")
    return gt["ref_output"]


def ref_output(ground_truth: Any) -> str:
    if isinstance(ground_truth, str):
        return _ref_output_from_text(ground_truth)
    if isinstance(ground_truth, bytes):
        return _ref_output_from_text(ground_truth.decode("utf-8"))
    return _ref_output_from_dict(ground_truth)


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None) -> dict:
    """verl custom reward: {"score": 1.0 | 0.0 | -1.0, "acc": bool, "pred": str | None}.

    Never raises on any ``solution_str``; a malformed ``ground_truth`` (a data bug) raises
    ValueError naming the field and the fix.
    """
    ref = ref_output(ground_truth)
    return score_output(solution_str, lambda value: isinstance(value, str) and value == ref)
