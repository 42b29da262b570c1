"""A task family's ``generate`` command, shared by every family's ``cli.py``: build a problem set, write it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the family's make() builds the frame; this module only passes it on
    import pandas as pd


def write_problem_set(make: Callable[[], pd.DataFrame], out: str, what: str) -> int:
    """``make()`` builds the problem set (a DataFrame in verl's schema); it is written atomically to ``out`` and
    one line says how many problems, ``what`` they are and the seconds. A value the generator refuses or an
    unreadable ``--exclude`` file (a ValueError; fgx.io.InputError is one) ends it with one line naming it,
    exit status 1 and nothing written, as every fgx job ends on bad input (fgx.cli.run)."""
    from fgx.io import write_parquet

    start = time.perf_counter()
    try:
        df = make()
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    write_parquet(df, out)
    print(f"wrote {len(df)} {what} to {out} in {time.perf_counter() - start:.1f}s")
    return 0
