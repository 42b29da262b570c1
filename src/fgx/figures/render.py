"""Draw one figure: its module (found by name, fgx.plan.figures.figure_module) makes the table, and the
table is written as the CSV and drawn as the PDF and PNG, atomically. Kept apart from fgx.figures'
shared helpers, which every figure module imports, so that no figure module imports the module that
imports it."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Sequence

import pandas as pd

from fgx.io import atomic_path
from fgx.plan.figures import figure_module


def render(name: str, inputs: Sequence[str], settings: dict, pdf: str, csv: str,
           png: str | None = None) -> pd.DataFrame:
    module = importlib.import_module(figure_module(name))
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
