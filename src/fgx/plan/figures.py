"""The figures' names and the form of what each figure module in fgx.figures declares (``SPEC``, a
FigureSpec): the artifacts it reads and the settings it receives. The figure modules import this
module; :mod:`fgx.plan.targets` reads their declarations, so no module imports one that imports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from fgx.seeds import derive_seed

# the figure targets, one fgx.figures module each
FIGURES = ("passk_level_curve", "rl_level_accuracy", "rft_vs_rl", "model_contrasts", "failure_modes",
           "training_dynamics", "countdown_transfer", "function_transfer")
FIGURE_WILDCARD = "|".join(FIGURES)
# the figure tables fgx.analysis.findings checks the paper's findings against
FINDINGS_TABLES = ("passk_level_curve", "model_contrasts", "rft_vs_rl", "countdown_transfer", "function_transfer",
                   "rl_level_accuracy")

# the pass@k table's two prompt sets (its "prompts" column): the whole test set, and the few prompts
# per level sampled many times (evaluate.many_samples)
PASSK_ALL_PROMPTS, PASSK_SUBSET_PROMPTS = "all", "subset, many samples"
# the contrast table's prompt sets (its "prompts" column): every test prompt, those of the test set only a
# full trace solves (no one-step wrong trace reaches the answer), and the full-trace test set (a set of
# its own, every prompt such a one: data.test_full_trace_per_level)
ALL_PROMPTS, FULL_TRACE_PROMPTS, FULL_TRACE_SET_PROMPTS = "all", "full trace only", "full-trace test set"


def _always(config: Mapping) -> bool:
    return True


def _none(config: Mapping, figure: str) -> dict:
    return {}


@dataclass(frozen=True)
class FigureSpec:
    """What a figure module declares: the artifacts it reads (``inputs(config)``), the ``figures:``
    keys it reads, its other settings (``settings(config, name)``) and whether the config asks for it."""

    inputs: Callable[[Mapping], list[str]]
    keys: tuple[str, ...] = ()
    settings: Callable[[Mapping, str], dict] = _none
    planned: Callable[[Mapping], bool] = _always


def bootstrap_settings(config: Mapping, figure: str) -> dict:
    """The settings of a figure with bootstrap CIs over prompts: resamples, level, its own seed."""
    e = config["evaluate"]
    return {"bootstrap": e["bootstrap"], "ci": e["ci"],
            "bootstrap_seed": derive_seed(config["seed"], "figure", figure) % (2 ** 31)}
