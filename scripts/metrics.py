#!/usr/bin/env python
"""Per-level accuracy and unbiased pass@k with bootstrap CIs from an evaluation parquet."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout

from fgx.cli import parser, setup_logging  # noqa: E402


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--samples", required=True, help="evaluation parquet from scripts/sample.py")
    p.add_argument("--model", required=True, help="model name written into the table")
    p.add_argument("--out", required=True, help="output metrics parquet")
    args = p.parse_args(argv)
    setup_logging()
    import pandas as pd

    from fgx.io import read_settings, write_parquet
    from fgx.metrics import level_pass_at_k

    s = args.settings
    table = level_pass_at_k(pd.read_parquet(args.samples, columns=["level", "correct"]), s["ks"],
                            resamples=s.get("bootstrap", 1000), ci=s.get("ci", 0.95), seed=s.get("seed", 0))
    table.insert(0, "model", args.model)
    provenance = {"metrics": s, "samples": read_settings(args.samples)}
    write_parquet(table, args.out, settings=provenance)
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
