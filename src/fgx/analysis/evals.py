"""Shared pieces of the analysis CLIs: reading evaluation parquets (with an error that says what to
pass) and printing / writing their tables."""

from __future__ import annotations

import pandas as pd


def read_eval(path: str) -> pd.DataFrame:
    """An evaluation parquet (``results/eval/<model>/<split>.parquet``), or SystemExit naming the file."""
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as err:  # missing file, or not parquet
        raise SystemExit(f"{path}: cannot read it as parquet ({type(err).__name__}); pass an evaluation parquet, "
                         "e.g. results/eval/stage1/test.parquet (`snakemake results/eval/stage1/test.parquet`)")


def print_table(table: pd.DataFrame, out: str | None) -> None:
    """Print ``table`` with three decimals; write it as CSV to ``out`` (atomically) if given."""
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if out:
        from fgx.io import write_text
        write_text(table.to_csv(index=False), out)
