"""Task registry: one reward entry point for every data source fgx writes.

``compute_score`` has verl's custom-reward signature, so verl can load it directly
(``custom_reward_function.path=<this file>``, ``name=compute_score``).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

_PREFIXES = (("codeio", "fgx.tasks.strings"), ("reasoning-gym-countdown", "fgx.tasks.countdown"))


def task_for(data_source: str) -> ModuleType:
    """The task module (strings or countdown) that owns ``data_source``."""
    import importlib

    if isinstance(data_source, bytes):
        data_source = data_source.decode("utf-8")
    if isinstance(data_source, str):
        for prefix, module in _PREFIXES:
            if data_source.startswith(prefix):
                return importlib.import_module(module)
    raise ValueError(
        f"unknown data_source {data_source!r}: fgx scores 'codeio-forward-incomplete-depth<n>' "
        "(string task) and 'reasoning-gym-countdown-depth<n>' (countdown); regenerate the parquet with "
        "`python -m fgx.tasks.strings generate` or `python -m fgx.tasks.countdown generate`")


def compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict[str, Any]:
    """{"score": 1.0 | 0.0 | -1.0, "acc": bool, "pred": str | None} for one response."""
    return task_for(data_source).compute_score(data_source, solution_str, ground_truth, extra_info)


__all__ = ["compute_score", "task_for"]
