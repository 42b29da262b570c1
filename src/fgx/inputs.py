"""The files a job reads besides problem sets, checked in full before it works: model directories, and
the columns fgx writes into its own tables (samples, SFT data, pass@k tables, RL metrics).

Problem sets (prompts, ground truth, levels) are the task's to check (:mod:`fgx.tasks.contract`). Every
other column below is checked wherever :func:`fgx.io.read_rows` reads it: its type for every row (the
file's own schema), no missing value, values in range, and the per-row agreements the jobs rely on (as
many scores and correct flags as responses, ``n_correct`` their count). A bad file stops the job with one
line naming the file, the row, the column and the fix, not a traceback hours in or, worse, a wrong number.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from fgx.errors import InputError

REGENERATE = "regenerate it with this version of fgx (delete it and rerun the rule that writes it)"


@dataclass(frozen=True)
class Column:
    """What a column of fgx's tables holds: ``kind`` (int, number, bool, str, or a list of one of them, one
    list per row), bounds of its values, whether NaN is allowed (a bootstrap interval of no prompts)."""

    kind: str
    words: str
    ge: float | None = None
    le: float | None = None
    nan: bool = False


COLUMNS: Mapping[str, Column] = {
    # samples (rollouts and evaluations): one list entry per sample
    "responses": Column("list[str]", "the responses, a list of strings per row"),
    "scores": Column("list[number]", "the task's scores, a list of numbers per row", ge=-1, le=1),
    "correct": Column("list[bool]", "whether each response is correct, a list of true/false per row"),
    "response_tokens": Column("list[int]", "each response's length in tokens, a list of integers per row", ge=0),
    "level": Column("int", "the level, an integer (-1: not per level)", ge=-1),
    "n_correct": Column("int", "the number of correct responses, an integer", ge=0),
    # SFT data
    "response": Column("str", "the response to fine-tune on, a string"),
    # pass@k tables
    "model": Column("str", "the model's name, a string"),
    "k": Column("int", "k of pass@k, a positive integer", ge=1),
    "pass_at_k": Column("number", "pass@k, a share between 0 and 1", ge=0, le=1),
    "ci_low": Column("number", "the interval's lower end, between 0 and 1", ge=0, le=1, nan=True),
    "ci_high": Column("number", "the interval's upper end, between 0 and 1", ge=0, le=1, nan=True),
    "n_prompts": Column("int", "a count of prompts", ge=0),
    "n_samples": Column("int", "a count of samples", ge=0),
    # RL metrics (long format)
    "step": Column("int", "the RL step, an integer", ge=0),
    "metric": Column("str", "the metric's name, a string"),
    "value": Column("number", "the metric's value, a number", nan=True),
}
# list columns that hold one entry per sample of a row: as many in each
SAMPLE_LISTS = ("responses", "scores", "correct", "response_tokens")


def _kind_of(t) -> str | None:
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "str"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        inner = _kind_of(t.value_type)
        return f"list[{inner}]" if inner else None
    if pa.types.is_null(t):
        return "null"
    return None


def _fits(kind: str | None, want: str) -> bool:
    """A stored kind the job reads as ``want``: integers serve where numbers are asked (a score of 1); a
    null-typed column or list holds no value to be wrong (the null check then names any row)."""
    if kind in (want, "null") or (want == "number" and kind == "int"):
        return True
    return want.startswith("list[") and (kind == "list[null]" or (want == "list[number]" and kind == "list[int]"))


def _first(mask) -> int:
    """The first row where a boolean array is true."""
    import numpy as np

    return int(np.flatnonzero(np.asarray(mask))[0])


def check_table(table, path: str | os.PathLike, what: str) -> None:
    """Check every column of ``table`` (a pyarrow Table read from ``path``, a ``what``) that :data:`COLUMNS`
    declares, row by row (module docstring); raise InputError naming the first problem found."""
    import numpy as np
    import pyarrow.compute as pc

    def bad(row: int | None, column: str, problem: str) -> InputError:
        where = f"row {row}: " if row is not None else ""
        return InputError(f"{path}: {where}column '{column}' {problem} in the {what}, where fgx writes "
                          f"{COLUMNS[column].words}; {REGENERATE}")

    if table.num_rows == 0:
        return  # no value to be wrong (an empty file's columns take whatever type pandas gave them)
    lengths: dict[str, Any] = {}
    for name in table.column_names:
        spec = COLUMNS.get(name)
        if spec is None:
            continue
        col = table.column(name)
        kind = _kind_of(col.type)
        if not _fits(kind, spec.kind):
            if kind == "number" and spec.kind == "int":  # pandas stores a missing integer as NaN, in floats
                arr = col.to_numpy(zero_copy_only=False)
                odd = np.isnan(arr) | (arr != np.round(arr))
                if odd.any():
                    i = _first(odd)
                    raise bad(i, name, "has no value" if np.isnan(arr[i]) else f"holds {arr[i]!r}, not an integer")
            raise bad(None, name, f"holds {col.type}")
        if col.null_count:
            raise bad(_first(pc.is_null(col).to_numpy(zero_copy_only=False)), name, "has no value")
        values, rows = col, None
        if spec.kind.startswith("list["):
            lengths[name] = pc.list_value_length(col).to_numpy(zero_copy_only=False)
            values = pc.list_flatten(col)
            rows = np.repeat(np.arange(len(col)), lengths[name])
            if values.null_count:
                raise bad(int(rows[_first(pc.is_null(values).to_numpy(zero_copy_only=False))]), name,
                          "has a missing entry")
        if spec.kind in ("int", "number", "list[int]", "list[number]"):
            arr = np.asarray(values.to_numpy(zero_copy_only=False) if len(values) else [], dtype=np.float64)
            problem = ~np.isfinite(arr) & ~(np.isnan(arr) if spec.nan else np.zeros(len(arr), bool))
            if spec.ge is not None:
                problem |= arr < spec.ge
            if spec.le is not None:
                problem |= arr > spec.le
            if problem.any():
                i = _first(problem)
                row = int(rows[i]) if rows is not None else i
                bounds = [f">= {spec.ge:g}" if spec.ge is not None else "", f"<= {spec.le:g}" if spec.le is not None
                          else "", "finite" if not spec.nan else ""]
                raise bad(row, name, f"holds {arr[i]!r}, not {' and '.join(b for b in bounds if b)}")
    listed = [c for c in SAMPLE_LISTS if c in lengths]
    for other in listed[1:]:
        uneven = lengths[other] != lengths[listed[0]]
        if uneven.any():
            i = _first(uneven)
            raise bad(i, other, f"has {lengths[other][i]} entries and '{listed[0]}' {lengths[listed[0]][i]}")
    if "n_correct" in table.column_names and "correct" in lengths:
        counts = np.fromiter((int(np.sum(c)) for c in table.column("correct").to_pylist()), int, len(table))
        stated = table.column("n_correct").to_numpy(zero_copy_only=False)
        off = counts != stated
        if off.any():
            i = _first(off)
            raise bad(i, "n_correct", f"says {stated[i]} but 'correct' holds {counts[i]} true")


# ----------------------------------------------------------------------------- model directories
WEIGHTS = ("*.safetensors", "pytorch_model*.bin")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")


def check_model_dir(path: str | os.PathLike, what: str = "model directory", fix: str | None = None) -> Path:
    """Refuse a directory that is not a loadable Hugging Face model directory, naming the file and the fix:
    it exists; ``config.json`` is a JSON object naming its ``model_type``; every JSON file of the tokenizer
    and the weights' index parses; weights are there (every shard an index names); a tokenizer is there."""
    path = Path(path)
    fix = fix or "rerun the rule that writes it (delete it first), or point model.path at a complete download"
    if not path.is_dir():
        raise InputError(f"{path}: {what} not found (no such directory); {fix}")

    def load(name: str) -> Any:
        try:
            return json.loads((path / name).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(f"{path / name}: the {what}'s {name} does not read as JSON "
                             f"({type(err).__name__}: {str(err)[:120]}); {fix}") from None

    if not (path / "config.json").is_file():
        raise InputError(f"{path}: no config.json; this is not a Hugging Face model directory ({what}); {fix}")
    config = load("config.json")
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        raise InputError(f"{path / 'config.json'}: the {what}'s config names no model_type (field 'model_type'); "
                         f"{fix}")
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json", "special_tokens_map.json"):
        if (path / name).is_file():
            load(name)
    indexes = sorted(path.glob("*.index.json"))
    for index in indexes:
        shards = set((load(index.name).get("weight_map") or {}).values())
        missing = sorted(s for s in shards if not (path / s).is_file())
        if missing:
            raise InputError(f"{index}: weight shard(s) {', '.join(missing[:3])} named in the index are missing from "
                             f"the {what}; {fix}")
    if not indexes and not any(next(path.glob(p), None) for p in WEIGHTS):
        raise InputError(f"{path}: no weights (*.safetensors or pytorch_model*.bin) in the {what}; {fix}")
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise InputError(f"{path}: no tokenizer ({' / '.join(TOKENIZER_FILES)}) in the {what}; {fix}")
    return path


def check_model_path(config: Mapping) -> None:
    """The model config.yaml names (``model.source: path``), checked before any job starts."""
    model = config.get("model") or {}
    if model.get("source") == "path" and model.get("path"):
        check_model_dir(model["path"], "model.path directory",
                        "set model.path (config.yaml or an overlay) to a local Hugging Face model directory; "
                        "fgx downloads nothing")
