"""One task family's rows of the problem files a generator's ``--exclude`` names, each ground truth checked.

A family's ``keys`` module reads them here (the string task's expressions, arithmetic chains' problems): below
the registry and every family, so a family package shares it without importing the contract, which looks
families up.
"""

from __future__ import annotations

from pathlib import Path

from fgx.io import read_rows
from fgx.tasks.family import GroundTruthError


def family_rows(path: str | Path, prefix: str, check):
    """The rows of problem file ``path`` whose ``data_source`` starts with ``prefix`` (one task family's: the
    generators' ``--exclude`` files), each ground truth checked by ``check`` (the family's
    ``check_ground_truth``); a ValueError names the file, the row and the field of one it refuses."""
    rows = read_rows(path, "problem set", ("data_source", "reward_model"))
    mine = rows[rows["data_source"].astype(str).str.startswith(prefix)]
    for i, rm in zip(mine.index, mine["reward_model"]):
        try:
            check(rm.get("ground_truth") if isinstance(rm, dict) else None)
        except GroundTruthError as err:
            raise ValueError(f"{path}: row {i}: field {err.field}: {err.problem}; regenerate the file (delete it and "
                             "rerun the rule that writes it)") from None
    return mine
