"""What the leakage check compares of an arithmetic-chain row, and what the generator's ``--exclude`` leaves
out.

The leakage key is the chain of operations without its start value (``.sub(3).div(2)``): the program, as
the string task compares ``main_solution``'s expression without its input, so a held-out composition in a
training file is a leak on whatever value it starts. Stage-1 rows teach the operations one at a time and
are marked so: a Level-1 test chain found there is the expected overlap. The generator's exclusions are
whole problems (start value included: ``417.sub(3).div(2)``), the identity of a problem within a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from fgx.tasks.excluded import family_rows

from .chain import render_call, render_chain
from .generate import DATA_SOURCE_PREFIX
from .ground_truth import check, parse


def leakage_keys(rows) -> list[tuple[str, int]]:
    """(chain key, stage) per row of a frame of arithmetic-chain rows whose ground truths are checked
    (fgx.tasks.family.TaskFamily.leakage_keys): a Stage-1 row teaches an atom."""
    extra = rows["extra_info"] if "extra_info" in rows.columns else [None] * len(rows)
    out = []
    for rm, info in zip(rows["reward_model"], extra):
        _, steps, _ = parse(rm["ground_truth"])
        stage = info.get("stage") if isinstance(info, dict) else None
        out.append(("".join(render_call(name, param) for name, param in steps), 1 if stage == 1 else 0))
    return out


def problems_of(paths: Iterable[str | Path]) -> set[str]:
    """The chain texts, start value included, of the arithmetic-chain rows of problem files (``--exclude``)."""
    keys: set[str] = set()
    for path in paths:
        for rm in family_rows(path, DATA_SOURCE_PREFIX, check)["reward_model"]:
            start, steps, _ = parse(rm["ground_truth"])
            keys.add(render_chain(start, steps))
    return keys
