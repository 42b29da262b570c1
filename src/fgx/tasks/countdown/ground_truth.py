"""A Countdown row's ``reward_model.ground_truth``: upstream's JSON ``{"answer": target, "numbers": [...]}``,
written and read."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from fgx.tasks.family import GroundTruthError, json_object


def ground_truth(target: int, numbers: list[int]) -> str:
    return json.dumps({"answer": target, "numbers": numbers})


@lru_cache(maxsize=8192)
def _gt_from_text(text: str) -> tuple[int, tuple[int, ...]]:
    try:
        obj = json.loads(text)
    except ValueError as err:
        raise ValueError(f"reward_model.ground_truth is not JSON ({err}); regenerate the data with "
                         "`python -m fgx.tasks.countdown generate`") from None
    return _gt_from_obj(obj)


def _gt_from_obj(obj: Any) -> tuple[int, tuple[int, ...]]:
    if not isinstance(obj, dict) or "numbers" not in obj or ("answer" not in obj and "target" not in obj):
        raise ValueError("reward_model.ground_truth must be JSON {\"answer\": target, \"numbers\": [...]} "
                         "as written by `python -m fgx.tasks.countdown generate`")
    target = obj["answer"] if "answer" in obj else obj["target"]
    return int(target), tuple(sorted(int(v) for v in obj["numbers"]))


def parse_ground_truth(ground_truth: Any) -> tuple[int, tuple[int, ...]]:
    """(target, sorted numbers) from the ground-truth JSON text or dict."""
    if isinstance(ground_truth, bytes):
        ground_truth = ground_truth.decode("utf-8")
    if isinstance(ground_truth, str):
        return _gt_from_text(ground_truth)
    return _gt_from_obj(ground_truth)



def check(ground_truth: Any) -> None:
    """Raise GroundTruthError unless ``ground_truth`` is what Countdown writes: JSON text (or a dict) with
    ``answer`` (or upstream's ``target``) an integer and ``numbers`` a list of at least two integers."""
    ground_truth = json_object(ground_truth, "an object {\"answer\": target, \"numbers\": [...]}")
    lacking = ([] if "answer" in ground_truth or "target" in ground_truth else ["answer"]) + \
        ([] if "numbers" in ground_truth else ["numbers"])
    if lacking:
        raise GroundTruthError("reward_model.ground_truth", f"lacks {', '.join(lacking)}")
    key = "answer" if "answer" in ground_truth else "target"
    if not _is_int(ground_truth[key]):
        raise GroundTruthError(f"reward_model.ground_truth.{key}", f"must be an integer, got {ground_truth[key]!r}")
    numbers = ground_truth["numbers"]
    if not isinstance(numbers, list) or len(numbers) < 2:
        raise GroundTruthError("reward_model.ground_truth.numbers", f"must be a list of two or more integers, got "
                               f"{numbers!r}")
    for i, v in enumerate(numbers):
        if not _is_int(v):
            raise GroundTruthError(f"reward_model.ground_truth.numbers[{i}]", f"must be an integer, got {v!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def leakage_keys(rows) -> list[tuple[str, int]]:
    """(problem key, stage) per row of a frame of Countdown rows whose ground truths are checked: the sorted
    numbers and the target (no row teaches an atom: stage 0)."""
    out = []
    for rm in rows["reward_model"]:
        target, numbers = parse_ground_truth(rm["ground_truth"])
        out.append((f"{list(numbers)}->{target}", 0))
    return out
