"""Paper figures: each module turns artifacts into a tidy table (the CSV) and draws it (the PDF).

A figure module (one of fgx.figures, or one a task family adds: fgx.plan.figures.figure_module) exposes
``table(inputs, settings) -> DataFrame`` and ``draw(table, pdf, settings)``;
:func:`fgx.figures.render.render` writes both atomically. The CSV holds exactly the plotted numbers plus
provenance columns (``source``: the artifact a row came from, ``config_hash``: hash of the settings
that made that artifact, :func:`read_with_provenance`), so a number in the PDF can be traced to the job
that computed it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fgx.config import settings_hash
from fgx.io import read_settings


def read_with_provenance(path: str | Path, columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """Read a parquet artifact that must hold ``columns`` and add its provenance columns."""
    from fgx.io import read_rows

    df = read_rows(path, "figure input", columns)
    settings = read_settings(path)
    df["source"] = str(path)
    df["config_hash"] = settings_hash(settings) if settings is not None else ""
    return df
