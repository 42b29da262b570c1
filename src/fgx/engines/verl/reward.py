"""fgx's task reward as verl's custom reward function (``reward.custom_reward_function``).

verl loads this file by path inside its reward workers, so it imports nothing from verl and
imports fgx lazily (the engine puts fgx's ``src`` on PYTHONPATH for every Ray worker).

Returns ``{"score": float, "acc": float}``. ``score`` becomes verl's reward: the RL reward that
config ``rl.reward`` names (:func:`fgx.tasks.reward`, the torch engine's too), which verl passes
here as the keyword ``reward`` (``reward.custom_reward_function.reward_kwargs.reward``). ``acc``
(1.0 / 0.0) is what verl's validation reports as ``val-core/<data_source>/acc/mean@N``, the
held-out accuracy per level. Only numbers go back to verl (its metric code averages every field).
"""

from __future__ import annotations


def compute_score(data_source, solution_str, ground_truth, extra_info=None, reward: str = "score", **kwargs):
    from fgx.tasks import compute_score as task_score
    from fgx.tasks import reward as rl_reward

    result = task_score(data_source, solution_str, ground_truth, extra_info)
    return {"score": rl_reward(result, reward), "acc": 1.0 if result["acc"] else 0.0}
