"""The figures' names and modules, and the form of what each figure module declares (``SPEC``, a
FigureSpec): the artifacts it reads and the settings it receives. The study's figures are modules of
fgx.figures; a task family adds its own (fgx.tasks.family.TaskFamily.figures). The figure modules import
this module; :mod:`fgx.dag.targets`, above them, reads their declarations, so no module imports one that
imports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from fgx.seeds import derive_seed
from fgx.tasks.registry import families

# the study's figure targets, one fgx.figures module each
STUDY_FIGURES = ("passk_level_curve", "rl_level_accuracy", "rft_vs_rl", "model_contrasts", "failure_modes",
                 "training_dynamics", "function_transfer")
# the figure tables fgx.analysis.findings checks the paper's findings 1-4 against
STUDY_FINDINGS_TABLES = ("passk_level_curve", "model_contrasts", "rft_vs_rl", "function_transfer", "rl_level_accuracy")


def figure_modules() -> dict[str, str]:
    """Every figure's module by figure name: the study's, then each task family's, in registry order."""
    found = {name: f"fgx.figures.{name}" for name in STUDY_FIGURES}
    for family in families():
        for name, module in family.figures.items():
            if name in found:
                raise ValueError(f"figure {name!r} of task family {family.name} exists already; rename it")
            found[name] = module
    return found


def figure_names() -> tuple[str, ...]:
    return tuple(figure_modules())


def figure_module(name: str) -> str:
    """The module that declares and draws figure ``name``."""
    modules = figure_modules()
    if name not in modules:
        raise ValueError(f"unknown figure {name!r}; known figures: {', '.join(modules)}")
    return modules[name]


def figure_wildcard() -> str:
    """The figure names rule figure makes (its wildcard constraint)."""
    return "|".join(figure_modules())


def findings_tables() -> tuple[str, ...]:
    """The figure tables fgx.analysis.findings reads: the study's and those the families' findings read."""
    return STUDY_FINDINGS_TABLES + tuple(t for family in families() if family.findings
                                         for t in family.findings.tables)

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
