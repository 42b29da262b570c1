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

    from fgx.tasks.generate_cli import write_problem_set

    from . import rows

    return write_problem_set(lambda: pd.DataFrame(rows(a.split, a.num, a.levels, a.seed)), a.out,
                             f"sums problems ({a.split}, levels {a.levels[0]}-{a.levels[1]})")


if __name__ == "__main__":
    sys.exit(main())
