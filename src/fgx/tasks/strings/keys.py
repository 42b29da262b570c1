"""A string-task row's expression, normalised: what the leakage check compares and the generator's
``--exclude`` leaves out.

The key is ``main_solution``'s expression of ``ref_code``, parsed and re-rendered (``func_17(func_3(x))``),
so spacing and quoting do not matter and the input does not count (the same program on another input is
still a leak); a program outside the 25 functions' vocabulary is compared as its whitespace-free return
expression.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from fgx.tasks.excluded import family_rows

from .expr import parse_code, render_code
from .generate import DATA_SOURCE_PREFIX
from .ground_truth import check


def expression_key(ref_code: str) -> str:
    try:
        return render_code(parse_code(ref_code))
    except ValueError:
        # Not our vocabulary: compare the whitespace-free return expression text.
        return "".join(ref_code.rsplit("return", 1)[-1].split())


def _ref_code(reward_model) -> str:
    return str(json.loads(reward_model["ground_truth"]).get("ref_code", ""))


def _file_stage(rows) -> int:
    """Stage of a file's rows that do not say (upstream's rows carry only index, split and depth):
    Stage 1 when any row's program prints function definitions (only Stage-1 prompts do; a Level-1
    row without a custom call prints none, so the file decides, not the row), else Stage 2."""
    return 1 if any("\ndef func_" in "\n" + _ref_code(rm) for rm in rows["reward_model"]) else 2


def leakage_keys(rows) -> list[tuple[str, int]]:
    """(expression key, stage) per row of a frame of string-task rows whose ground truths are checked
    (fgx.tasks.family.TaskFamily.leakage_keys): a Stage-1 row (definitions shown) teaches an atom."""
    file_stage = _file_stage(rows)
    extra = rows["extra_info"] if "extra_info" in rows.columns else [None] * len(rows)
    out = []
    for rm, info in zip(rows["reward_model"], extra):
        stage = info.get("stage") if isinstance(info, dict) else None
        out.append((expression_key(_ref_code(rm)), 1 if int(file_stage if stage is None else stage) == 1 else 0))
    return out


def expressions_of(paths: Iterable[str | Path]) -> set[str]:
    """The expression keys of the string-task rows of problem files (the generator's ``--exclude``)."""
    keys: set[str] = set()
    for path in paths:
        keys |= {key for key, _ in leakage_keys(family_rows(path, DATA_SOURCE_PREFIX, check))}
    return keys
