"""The figures: their names, and what each reads and which settings it receives, as its own module
in fgx.figures declares (``SPEC``, a FigureSpec). A figure receives only the settings it reads, so
a plot knob reruns only its own figure."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Mapping

from fgx.plan import paths
from fgx.plan.seeds import derive_seed, dumps

# the figure targets, one fgx.figures module each
FIGURES = ("passk_level_curve", "rl_level_accuracy", "rft_vs_rl", "model_contrasts", "failure_modes",
           "training_dynamics", "countdown_transfer", "function_transfer")
FIGURE_WILDCARD = "|".join(FIGURES)
# the figure tables fgx.analysis.findings checks the paper's findings against
FINDINGS_TABLES = ("passk_level_curve", "model_contrasts", "rft_vs_rl", "countdown_transfer", "function_transfer")

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


def spec(figure: str) -> FigureSpec:
    """The declaration of figure ``figure`` (its module's ``SPEC``)."""
    if figure not in FIGURES:
        raise ValueError(f"unknown figure {figure!r}; known: {', '.join(FIGURES)}")
    return importlib.import_module(f"fgx.figures.{figure}").SPEC


def figure_inputs(config: Mapping, figure: str) -> list[str]:
    """The artifacts each figure reads."""
    return spec(figure).inputs(config)


def figure_settings(config: Mapping, figure: str) -> str:
    s = spec(figure)
    return dumps({"figure": figure, **{k: config["figures"][k] for k in s.keys if k in config["figures"]},
                  **s.settings(config, figure)})


def planned_figures(config: Mapping) -> list[str]:
    """The names of every figure the config asks for."""
    return [name for name in FIGURES if spec(name).planned(config)]


def figure_targets(config: Mapping) -> list[str]:
    return [paths.fill(paths.FIGURE_PDF, figure=name) for name in planned_figures(config)]


def findings_inputs(config: Mapping) -> list[str]:
    """The CSVs of the figures the findings read, among those the config asks for."""
    return [paths.fill(paths.FIGURE_CSV, figure=name) for name in planned_figures(config) if name in FINDINGS_TABLES]
