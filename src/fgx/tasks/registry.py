"""The task families fgx knows: one line each in :data:`FAMILIES`, looked up here and nowhere else.

A line names a package that exposes ``FAMILY`` (a :class:`fgx.tasks.family.TaskFamily`); a package
outside fgx works as well as one inside, as long as it is importable (the rules put src/ on every job's
PYTHONPATH). Lookups: by name (:func:`family`), by a row's data source (:func:`family_for`, what the
reward dispatches on), by split (:func:`split_owner`, what the plan resolves a problem set with).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Mapping

from fgx.tasks.family import Split, TaskFamily

# the task families, in the order the DAG lists their jobs and figures
FAMILIES = (
    "fgx.tasks.strings",
    "fgx.tasks.countdown",
    "fgx.tasks.arithmetic",
)


@lru_cache(maxsize=None)
def families() -> tuple[TaskFamily, ...]:
    """Every registered family's record, in registry order; two families sharing a name or one's data
    source prefix starting another's is an error naming both."""
    found = []
    for module in FAMILIES:
        record = getattr(importlib.import_module(module), "FAMILY", None)
        if not isinstance(record, TaskFamily):
            raise TypeError(f"{module}: a task family package exposes FAMILY, a fgx.tasks.family.TaskFamily "
                            f"(fgx.tasks.registry.FAMILIES names it)")
        for other in found:
            if record.name == other.name or record.data_source_prefix.startswith(other.data_source_prefix) \
                    or other.data_source_prefix.startswith(record.data_source_prefix):
                raise ValueError(f"task families {other.package} and {module} share the name or data source prefix "
                                 f"({other.name!r}/{other.data_source_prefix!r}, {record.name!r}/"
                                 f"{record.data_source_prefix!r}); give each its own")
        found.append(record)
    return tuple(found)


def family(name: str) -> TaskFamily:
    """The family called ``name``."""
    for f in families():
        if f.name == name:
            return f
    raise ValueError(f"unknown task family {name!r}; known: {', '.join(f.name for f in families())}")


def family_for(data_source) -> TaskFamily:
    """The family whose rows carry ``data_source`` (str or bytes)."""
    if isinstance(data_source, bytes):
        data_source = data_source.decode("utf-8", "replace")
    if isinstance(data_source, str):
        for f in families():
            if data_source.startswith(f.data_source_prefix):
                return f
    known = ", ".join(f"'{f.data_source_prefix}...' ({f.name}: `python -m {f.package} generate`)" for f in families())
    raise ValueError(f"unknown data_source {data_source!r}: fgx scores {known}; regenerate the parquet")


def package(record: TaskFamily):
    """The family's package (its ``compute_score``)."""
    return importlib.import_module(record.package)


def all_splits(config: Mapping) -> dict[str, tuple[TaskFamily, Split]]:
    """``{split: (family, Split)}`` of every problem set the config asks for, in registry order; a split
    name two families declare is an error."""
    out: dict[str, tuple[TaskFamily, Split]] = {}
    for f in families():
        for name, split in f.splits(config).items():
            if name in out:
                raise ValueError(f"split {name!r} is declared by task families {out[name][0].name} and {f.name}; "
                                 "rename one")
            out[name] = (f, split)
    return out


def split_owner(config: Mapping, split: str) -> TaskFamily:
    """The family that generates problem set ``split``."""
    found = all_splits(config).get(split)
    if found is None:
        raise ValueError(f"unknown split {split!r}; the config asks for: {', '.join(all_splits(config))}")
    return found[0]
