"""The reward entry point for every data source fgx writes: each row's task family
(:mod:`fgx.tasks.registry`) scores it.

``compute_score`` has verl's custom-reward signature (verl loads it through
:mod:`fgx.engines.verl.reward`). ``score_rows`` scores sampled responses for both engines' samplers,
and ``reward`` turns one result into the RL reward that ``rl.reward`` names, so filtering, RL and
evaluation all read the one task function.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Mapping, Sequence

from fgx.settings import REWARDS


def task_for(data_source: str) -> ModuleType:
    """The package of the task family that owns ``data_source`` (its ``compute_score``)."""
    from fgx.tasks.registry import family_for, package

    return package(family_for(data_source))


def compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict[str, Any]:
    """{"score": 1.0 | 0.0 | -1.0, "acc": bool, "pred": str | None} for one response."""
    return task_for(data_source).compute_score(data_source, solution_str, ground_truth, extra_info)


def reward(result: Mapping[str, Any], kind: str) -> float:
    """The RL reward of one ``compute_score`` result: ``acc`` (1 correct, 0 otherwise) or ``score``
    (the task's score: 1 correct, 0 wrong, -1 unparsable for the string task, as the paper)."""
    if kind == "acc":
        return 1.0 if result["acc"] else 0.0
    if kind == "score":
        return float(result["score"])
    raise ValueError(f"rl.reward {kind!r} unknown; choose one of {', '.join(REWARDS)}")


def score_responses(row: Mapping[str, Any], responses: Sequence[str], source: str = "rows",
                    score_fn=compute_score) -> tuple[list[float], list[bool]]:
    """(scores, correct) of the responses to one verl-schema row."""
    rm = row.get("reward_model")
    if rm is None or "ground_truth" not in rm:
        raise ValueError(f"{source}: a row has no reward_model.ground_truth; regenerate the problem set")
    extra = row.get("extra_info")
    extra = dict(extra) if extra is not None else {}
    results = [score_fn(row["data_source"], r, rm["ground_truth"], extra) for r in responses]
    return [float(r["score"]) for r in results], [bool(r["acc"]) for r in results]


def score_rows(rows, responses: Sequence[Sequence[str]], source: str = "rows",
               score_fn=compute_score) -> tuple[list[list[float]], list[list[bool]]]:
    """(scores, correct) per row of a verl-schema frame, aligned with ``responses``."""
    scores, correct = [], []
    for row, resp in zip(rows.to_dict("records"), responses):
        sc, co = score_responses(row, resp, source, score_fn)
        scores.append(sc)
        correct.append(co)
    return scores, correct


__all__ = ["REWARDS", "compute_score", "reward", "score_responses", "score_rows", "task_for"]
