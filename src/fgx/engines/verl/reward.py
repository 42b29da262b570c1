"""fgx's task reward as verl's custom reward function (``reward.custom_reward_function``).

verl loads this file by path inside its reward workers, so it imports nothing from verl and
imports fgx lazily (the engine puts fgx's ``src`` on PYTHONPATH for every Ray worker).

Returns ``{"score": float, "acc": float}``: ``score`` is fgx.tasks.compute_score's score (1 correct,
0 wrong, -1 unparsable for the string task) and becomes the reward; ``acc`` (1.0 / 0.0) is what
verl's validation reports as ``val-core/<data_source>/acc/mean@N``, the held-out accuracy per
level. Only numbers go back to verl (its metric code averages every returned field).
"""

from __future__ import annotations


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    from fgx.tasks import compute_score as task_score

    result = task_score(data_source, solution_str, ground_truth, extra_info)
    score = float(result["score"] if isinstance(result, dict) else result)
    acc = result.get("acc") if isinstance(result, dict) else None
    return {"score": score, "acc": float(bool(acc) if acc is not None else is_correct(score))}


def is_correct(score: float) -> bool:
    """A response counts as correct when the task gives it full marks."""
    return float(score) >= 1.0
