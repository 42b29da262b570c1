"""``python -m sums_task generate --split S --num N --levels LO HI --seed SEED --out FILE``."""

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m sums_task")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--split", required=True)
    g.add_argument("--num", type=int, required=True)
    g.add_argument("--levels", type=int, nargs=2, required=True)
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--out", required=True)
    a = p.parse_args(argv)
    import pandas as pd

    from fgx.io import write_parquet

    from . import rows

    write_parquet(pd.DataFrame(rows(a.split, a.num, a.levels, a.seed)), a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
