"""The task contract every problem file keeps: verl's parquet row schema, checked before any job.

A row has ``data_source`` (``codeio-forward-incomplete-depth<n>`` for the string task,
``reasoning-gym-countdown-depth<n>`` for Countdown), ``prompt`` (a list of ``{role, content}``
messages), ``ability``, ``reward_model`` (``{style, ground_truth}``; the string task's ground truth
is JSON text with ``ref_input``, ``ref_output``, ``ref_code``) and ``extra_info`` (with ``depth``).
fgx's own files and upstream's released data (PRIME-RL/RL-Compositionality) both keep it, so
``data.external`` can point a split at either.
"""

from __future__ import annotations

import json
from pathlib import Path

REQUIRED_COLUMNS = ("data_source", "prompt", "reward_model", "extra_info")
CHECKED_ROWS = 200  # rows read to check the fields (the schema is read for the whole file)


class ContractError(ValueError):
    """A problem file breaks the task contract; the message names file, field and fix."""


# the fix for a job's input (not a data.external file) that breaks the contract
JOB_INPUT_FIX = ("regenerate it (delete it and rerun the rule that writes it), or point data.external at a "
                 "parquet file in verl's row format")


def check_problem_file(path: str | Path, what: str = "problem set", fix: str | None = None) -> int:
    """Check that ``path`` is a parquet file of verl rows (its schema and its first rows); return
    its number of rows, or raise ContractError naming the file, the field and the fix (``fix``, by
    default how to point data.external at a good file)."""
    import pyarrow.parquet as pq

    from fgx.tasks import task_for

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
    rows = next(f.iter_batches(batch_size=CHECKED_ROWS, columns=list(REQUIRED_COLUMNS))).to_pylist()
    for i, r in enumerate(rows):
        where = f"{p}: row {i}"
        try:
            task = task_for(r["data_source"])
        except ValueError as err:
            raise ContractError(f"{where}: field data_source: {err}") from None
        prompt = r["prompt"]
        if not isinstance(prompt, list) or not prompt or not all(isinstance(m, dict) and {"role", "content"} <= set(m)
                                                                for m in prompt):
            raise ContractError(f"{where}: field prompt must be a list of {{role, content}} messages; {fix}")
        rm = r["reward_model"]
        if not isinstance(rm, dict) or not rm.get("ground_truth"):
            raise ContractError(f"{where}: field reward_model.ground_truth is missing; {fix}")
        if task.__name__.endswith("strings"):
            try:
                gt = json.loads(rm["ground_truth"])
            except (TypeError, ValueError):
                raise ContractError(f"{where}: field reward_model.ground_truth is not JSON text; {fix}") from None
            lacking = [k for k in ("ref_input", "ref_output", "ref_code") if k not in gt]
            if lacking:
                raise ContractError(f"{where}: field reward_model.ground_truth lacks {', '.join(lacking)}; {fix}")
        info = r["extra_info"]
        if not isinstance(info, dict) or not isinstance(info.get("depth"), int):
            raise ContractError(f"{where}: field extra_info.depth (the expression's level) is missing; {fix}")
    return f.metadata.num_rows
