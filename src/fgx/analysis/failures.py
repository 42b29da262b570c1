"""Why responses fail: each task family's own failure-mode classifier (fgx.tasks.family.TaskFamily.failure_modes),
found from the rows' data source, for the failure-mode figure and the sample browser.

A classifier is a module with ``CATEGORIES`` (the correct category first), ``CORRECT``, ``FAILURES`` and
``classify_eval(rows, level, style, source)``: one row per response (``level``, ``prompt_index``,
``sample_index``, ``category``, ``reason``, ``step``, ``prompt``, ``response``, ``truth``, ...).
"""

from __future__ import annotations

import importlib
from types import ModuleType


def classifier(rows, source=None) -> ModuleType:
    """The failure-mode classifier of the task family whose rows ``rows`` (an evaluation's) are; a
    ValueError names ``source`` when they mix families or theirs has none."""
    from fgx.tasks.registry import family_for

    where = source or "the evaluation"
    if "data_source" not in rows.columns:
        raise ValueError(f"{where}: column data_source missing; pass an evaluation parquet written by "
                         "scripts/sample.py (results/eval/{model}/{split}.parquet)")
    owners = {family_for(ds) for ds in dict.fromkeys(rows["data_source"])}
    if len(owners) != 1:
        names = ", ".join(sorted(f.name for f in owners)) or "none"
        raise ValueError(f"{where}: failure modes are read per task family; its rows belong to {names}")
    family = owners.pop()
    if family.failure_modes is None:
        raise ValueError(f"{where}: the {family.name} task family declares no failure-mode classifier "
                         "(fgx.tasks.family.TaskFamily.failure_modes)")
    return importlib.import_module(family.failure_modes)


def classify_eval(rows, level: int | None = None, source=None):
    """(every response classified, the classifier that did it) for one evaluation's rows."""
    module = classifier(rows, source)
    return module.classify_eval(rows, level=level, source=source), module
