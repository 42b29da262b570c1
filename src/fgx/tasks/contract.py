"""The task contract every problem file keeps: verl's parquet row schema, checked before any job.

A row has ``data_source`` (``codeio-forward-incomplete-depth<n>`` for the string task,
``reasoning-gym-countdown-depth<n>`` for Countdown: the prefix names its task family), ``prompt`` (a
list of ``{role, content}`` messages), ``ability``, ``reward_model`` (``{style, ground_truth}``; what the
ground truth holds, its family checks: fgx.tasks.family.TaskFamily.check_ground_truth) and ``extra_info``
(with ``depth``). fgx's own files and upstream's released data (PRIME-RL/RL-Compositionality) both keep
it, so ``data.external`` can point a split at either. A row's level is read here only (:func:`row_level`).
"""

from __future__ import annotations

import re
from numbers import Integral
from pathlib import Path

from fgx.io import InputError

REQUIRED_COLUMNS = ("data_source", "prompt", "reward_model", "extra_info")
BATCH_ROWS = 4096  # rows read at a time while every row is checked


class ContractError(InputError):
    """A problem file breaks the task contract; the message names file, field and fix."""


# the fix for a job's input (not a data.external file) that breaks the contract
JOB_INPUT_FIX = ("regenerate it (delete it and rerun the rule that writes it), or point data.external at a "
                 "parquet file in verl's row format")


LEVEL_FIELD = "extra_info.depth"


def row_level(extra_info, where: str = "a row", fix: str = JOB_INPUT_FIX) -> int:
    """A problem row's level (its expression depth): ``extra_info.depth``, the one reading of it.

    A row without one is an error, never a default: fgx writes the depth into every row it makes
    and upstream's released data carries it too, so a missing depth is a bug or a foreign file, and
    a default level (0, -1) would file its rows under a level no figure shows. ``where`` names the
    file and row."""
    depth = extra_info.get("depth") if isinstance(extra_info, dict) else None
    # pandas reads an int column that holds a null as floats (2.0): the other rows keep their level
    if isinstance(depth, float) and depth.is_integer():
        depth = int(depth)
    if isinstance(depth, bool) or not isinstance(depth, Integral):
        raise ContractError(f"{where}: field {LEVEL_FIELD} (the expression's level) is missing; {fix}")
    return int(depth)


def row_levels(rows, source: str | Path | None = None, fix: str = JOB_INPUT_FIX) -> list[int]:
    """The level of every row of a frame of verl rows (``source``: the file it was read from)."""
    where = f"{source}: row" if source is not None else "row"
    if "extra_info" not in rows.columns:
        raise ContractError(f"{source or 'the rows'}: column extra_info (with the level, {LEVEL_FIELD}) is "
                            f"missing; {fix}")
    return [row_level(e, f"{where} {i}", fix) for i, e in enumerate(rows["extra_info"])]


def first_per_level(rows, levels, per_level: int, source=None):
    """The first ``per_level`` rows of each level in ``levels`` (``extra_info.depth``), in file order
    (``source``: the file the rows come from, named by the error a row without a level raises)."""
    import pandas as pd

    depth = pd.Series(row_levels(rows, source), index=rows.index)
    parts = [rows[depth == lv].head(per_level) for lv in levels]
    if any(len(p) < per_level for p in parts):
        have = {lv: int((depth == lv).sum()) for lv in levels}
        raise ValueError(f"the problem set has fewer than {per_level} prompts at some level ({have}); lower "
                         "evaluate.many_samples.prompts_per_level or its levels")
    return pd.concat(parts).reset_index(drop=True)


_SOURCE_DEPTH = re.compile(r"depth(\d+)")


def data_source_level(data_source: str) -> int | None:
    """The level a data source's name carries (``codeio-forward-incomplete-depth3`` -> 3), or None:
    where only the name is at hand (verl's validation metrics are keyed by data source)."""
    m = _SOURCE_DEPTH.search(str(data_source))
    return int(m[1]) if m else None


def check_row(row: dict, where: str, fix: str = JOB_INPUT_FIX) -> None:
    """Check one problem row (a dict of :data:`REQUIRED_COLUMNS`) against the contract: its data source names
    a task family, its prompt is a list of ``{role, content}`` strings, its ground truth is what that family
    writes (every field, its type) and its level is there; a ContractError names ``where`` (file and row),
    the field and ``fix``."""
    from fgx.tasks.family import GroundTruthError
    from fgx.tasks.registry import family_for

    try:
        family = family_for(row["data_source"])
    except ValueError as err:
        raise ContractError(f"{where}: field data_source: {err}") from None
    prompt = row["prompt"]
    if not isinstance(prompt, list) or not prompt or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in prompt):
        raise ContractError(f"{where}: field prompt must be a list of {{role, content}} messages (strings); {fix}")
    rm = row["reward_model"]
    if not isinstance(rm, dict) or not rm.get("ground_truth"):
        raise ContractError(f"{where}: field reward_model.ground_truth is missing; {fix}")
    try:
        family.check_ground_truth(rm["ground_truth"])
    except GroundTruthError as err:
        raise ContractError(f"{where}: field {err.field} {err.problem} ({family.name} task); {fix}") from None
    row_level(row["extra_info"], where, fix)


def check_problem_file(path: str | Path, what: str = "problem set", fix: str | None = None) -> int:
    """Check that ``path`` is a parquet file of verl rows, every row of it (:func:`check_row`); return its
    number of rows, or raise ContractError naming the file, the row, the field and the fix (``fix``, by
    default how to point data.external at a good file)."""
    import pyarrow.parquet as pq

    p = Path(path)
    if not p.is_file():
        raise ContractError(f"{p}: the {what} is not a file; "
                            f"{fix or 'point data.external at an existing file, or remove the key to generate it'}")
    fix = fix or "point data.external at a parquet file in verl's row format (e.g. upstream's released data)"
    try:
        f = pq.ParquetFile(p)
    except Exception as err:  # pyarrow raises several types for foreign or truncated files
        raise ContractError(f"{p}: the {what} is not readable parquet ({type(err).__name__}); {fix}") from None
    names = f.schema_arrow.names
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise ContractError(f"{p}: the {what} lacks column(s) {', '.join(missing)} (found {', '.join(names)}); {fix}")
    if f.metadata.num_rows == 0:
        raise ContractError(f"{p}: the {what} has no rows; {fix}")
    i = 0
    for batch in f.iter_batches(batch_size=BATCH_ROWS, columns=list(REQUIRED_COLUMNS)):
        for row in batch.to_pylist():
            check_row(row, f"{p}: row {i}", fix)
            i += 1
    return f.metadata.num_rows

