"""The figures the config asks for, their inputs and settings, read from each figure module's
declaration (``SPEC``): a figure receives only the settings it reads, so a plot knob reruns only
its own figure."""

from __future__ import annotations

import importlib
from typing import Mapping

from fgx.plan import paths
from fgx.plan.figures import FigureSpec, figure_module, figure_names, findings_tables
from fgx.seeds import dumps


def spec(figure: str) -> FigureSpec:
    """The declaration of figure ``figure`` (its module's ``SPEC``)."""
    return importlib.import_module(figure_module(figure)).SPEC


def figure_inputs(config: Mapping, figure: str) -> list[str]:
    """The artifacts each figure reads."""
    return spec(figure).inputs(config)


def figure_settings(config: Mapping, figure: str) -> str:
    s = spec(figure)
    return dumps({"figure": figure, **{k: config["figures"][k] for k in s.keys if k in config["figures"]},
                  **s.settings(config, figure)})


def planned_figures(config: Mapping) -> list[str]:
    """The names of every figure the config asks for."""
    return [name for name in figure_names() if spec(name).planned(config)]


def figure_targets(config: Mapping) -> list[str]:
    return [paths.fill(paths.FIGURE_PDF, figure=name) for name in planned_figures(config)]


def findings_inputs(config: Mapping) -> list[str]:
    """The CSVs of the figures the findings read, among those the config asks for."""
    tables = findings_tables()
    return [paths.fill(paths.FIGURE_CSV, figure=name) for name in planned_figures(config) if name in tables]


def family_findings_inputs(config: Mapping, family: str) -> list[str]:
    """The CSVs of the figures task family ``family``'s findings read (its results/analysis/findings_<family>.md:
    the family's study without the rest of the DAG)."""
    from fgx.tasks.registry import family as record

    found = record(family).findings
    if found is None:
        raise ValueError(f"task family {family} has no findings; families with findings: {families_with_findings()}")
    planned = planned_figures(config)
    missing = [t for t in found.tables if t not in planned]
    if missing:
        raise ValueError(f"findings of task family {family}: the config asks for no figure {', '.join(missing)} "
                         f"(is the family's section enabled? e.g. --configfile experiments/{family}.yaml)")
    return [paths.fill(paths.FIGURE_CSV, figure=name) for name in found.tables]


def families_with_findings() -> str:
    """The task families whose findings are a target of their own (rule findings_family's wildcard)."""
    from fgx.tasks.registry import families

    return "|".join(f.name for f in families() if f.findings)
