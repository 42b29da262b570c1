"""Paper figures: each module turns artifacts into a tidy table (the CSV) and draws it (the PDF).

A figure module exposes ``table(inputs, settings) -> DataFrame`` and ``draw(table, pdf, settings)``;
``render`` writes both atomically. The CSV holds exactly the plotted numbers plus provenance
columns (``source``: the artifact a row came from, ``config_hash``: hash of the settings that
made that artifact), so a number in the PDF can be traced to the job that computed it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Sequence

import pandas as pd

from fgx.config import settings_hash
from fgx.io import atomic_path, read_settings
from fgx.plan.figures import FIGURES


def read_with_provenance(path: str | Path, columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """Read a parquet artifact that must hold ``columns`` and add its provenance columns."""
    from fgx.io import read_rows

    df = read_rows(path, "figure input", columns)
    settings = read_settings(path)
    df["source"] = str(path)
    df["config_hash"] = settings_hash(settings) if settings is not None else ""
    return df


def render(name: str, inputs: Sequence[str], settings: dict, pdf: str, csv: str,
           png: str | None = None) -> pd.DataFrame:
    if name not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; known figures: {', '.join(FIGURES)}")
    module = importlib.import_module(f"fgx.figures.{name}")
    table = module.table(inputs, settings)
    import matplotlib

    matplotlib.use("Agg")
    for out in (pdf, png) if png else (pdf,):
        with atomic_path(out, suffix=Path(out).suffix) as tmp:
            try:
                module.draw(table, tmp, settings)
            except Exception as err:
                if not table.empty:
                    raise
                # some figures draw an empty panel; the others cannot plot nothing: say why, not a traceback
                from fgx.io import InputError

                raise InputError(f"{', '.join(map(str, inputs))}: no rows for the {name} figure "
                                 f"({type(err).__name__} drawing an empty table); regenerate the inputs (delete "
                                 "them and rerun the rules that write them) or check the figure's settings") from None
    with atomic_path(csv, suffix=".csv") as tmp:
        table.to_csv(tmp, index=False)
    return table
