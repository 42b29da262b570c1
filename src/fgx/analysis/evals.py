"""Reading evaluation parquets for the analysis CLIs, with an error that says what to pass."""

from __future__ import annotations

import pandas as pd


def read_eval(path: str) -> pd.DataFrame:
    """An evaluation parquet (``results/eval/<model>/<split>.parquet``), or SystemExit naming the file."""
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as err:  # missing file, or not parquet
        raise SystemExit(f"{path}: cannot read it as parquet ({type(err).__name__}); pass an evaluation "
                         "parquet, e.g. results/eval/stage1/test.parquet (`snakemake results/eval/stage1/test.parquet`)")
