"""``python -m fgx.tasks.arithmetic generate ...``: write one arithmetic-chain problem set as a verl parquet file."""

from __future__ import annotations

import argparse

from fgx.tasks.generate_cli import write_problem_set

from .chain import DEFAULT_MAX_VALUE
from .generate import PARTITIONS, SPLITS, STYLES, generate
from .keys import problems_of


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fgx.tasks.arithmetic", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate a problem set (verl parquet)")
    g.add_argument("--stage", type=int, choices=[1, 2], required=True,
                   help="1: every operation (paper style: their definitions shown); 2: the train or held-out ones")
    g.add_argument("--split", choices=SPLITS, required=True,
                   help="stage 2: train -> train operations, test -> held-out operations")
    g.add_argument("--min-level", type=int, required=True)
    g.add_argument("--max-level", type=int, required=True)
    g.add_argument("--num", type=int, required=True, help="problems in all, split evenly across levels")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--out", required=True, help="output .parquet path (written atomically)")
    g.add_argument("--style", choices=STYLES, default="compact",
                   help="compact: 417.sub(3).div(2) prompt + step-trace solution; paper: a program and an "
                        "instruction, for an LLM")
    g.add_argument("--max-value", type=int, default=DEFAULT_MAX_VALUE,
                   help="every value of a chain stays in 0..MAX_VALUE")
    g.add_argument("--partition", choices=PARTITIONS, default="none",
                   help="keep only chains of this hash partition: the test and validation sets never share one")
    g.add_argument("--exclude", nargs="*", default=[], metavar="PARQUET",
                   help="parquet files whose problems must not be generated")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return write_problem_set(
        lambda: generate(stage=args.stage, split=args.split, min_level=args.min_level, max_level=args.max_level,
                         num=args.num, seed=args.seed, style=args.style, max_value=args.max_value,
                         exclude=problems_of(args.exclude), partition=args.partition),
        args.out, f"problems (stage {args.stage}, split {args.split}, levels {args.min_level}-{args.max_level}, "
                  f"style {args.style})")
