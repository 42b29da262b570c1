#!/usr/bin/env python
"""Per-level accuracy and unbiased pass@k with bootstrap CIs from an evaluation parquet."""

import sys

from fgx.cli import parser, run


def main(argv=None) -> int:
    p = parser(__doc__)
    p.add_argument("--samples", required=True, help="evaluation parquet from scripts/sample.py")
    p.add_argument("--model", required=True, help="model name written into the table")
    p.add_argument("--out", required=True, help="output metrics parquet")
    args = p.parse_args(argv)

    def go():
        from fgx.io import read_rows, read_settings, write_parquet
        from fgx.metrics import level_pass_at_k
        from fgx.settings import Metrics

        s = args.settings
        Metrics.from_settings(s)
        samples = read_rows(args.samples, "evaluation samples", ("level", "correct"))
        table = level_pass_at_k(samples[["level", "correct"]], s["ks"], resamples=s["bootstrap"], ci=s["ci"],
                                seed=s["seed"])
        table.insert(0, "model", args.model)
        write_parquet(table, args.out, settings={"metrics": s, "samples": read_settings(args.samples)})
        print(table.to_string(index=False))

    return run(go)


if __name__ == "__main__":
    sys.exit(main())
