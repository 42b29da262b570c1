"""``python -m fgx.tasks.strings generate ...``: write one problem set as a verl parquet file."""

from __future__ import annotations

import argparse
import sys

from fgx.tasks.generate_cli import write_problem_set

from .generate import GRAMMARS, INPUTS, PARTITIONS, SPLITS, STYLES, generate
from .keys import expressions_of


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {v}")
    return v


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fgx.tasks.strings", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate a problem set (verl parquet)")
    g.add_argument("--stage", type=int, choices=[1, 2], required=True,
                   help="1: prompts show the functions' definitions (all 25 functions); "
                        "2: main_solution only (train or held-out eval functions)")
    g.add_argument("--split", choices=SPLITS, required=True,
                   help="stage 2: train -> train functions, test -> held-out eval functions")
    g.add_argument("--min-level", type=_positive_int, required=True)
    g.add_argument("--max-level", type=_positive_int, required=True)
    g.add_argument("--num", type=int, required=True, help="problems in all, split evenly across levels")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--out", required=True, help="output .parquet path (written atomically)")
    g.add_argument("--style", choices=STYLES, default="paper",
                   help="paper: upstream's code prompt; compact: \"ab\".f3().f17() prompt + step-trace solution")
    g.add_argument("--max-value-len", type=_positive_int, default=None,
                   help="reject programs with a longer input, literal or intermediate value")
    g.add_argument("--exclude", nargs="*", default=[], metavar="PARQUET",
                   help="parquet files whose expressions must not be generated (e.g. the test set)")
    g.add_argument("--grammar", choices=GRAMMARS, default="upstream",
                   help="upstream: the paper's expressions; prior: one custom function inside builtin str "
                        "methods, helper functions g0..g5 and '+' (the tiny model's pretraining prior; never a "
                        "custom function inside another)")
    g.add_argument("--partition", choices=PARTITIONS, default="none",
                   help="keep only expressions of this hash partition: train, test and val sets "
                        "never share an expression, without reading each other's files")
    g.add_argument("--inputs", choices=INPUTS, default="lowercase",
                   help="lowercase: 3..10 lowercase letters (upstream); carried: every other problem reads a "
                        "value one or two of the 25 functions make (the tiny model's pretraining)")
    g.add_argument("--first-step", action="store_true",
                   help="compact style, levels >= 2: each prompt (marked with a leading '>') asks for its "
                        "expression's first reduction step only, answered as that step's Level-1 problem "
                        "(the tiny model's pretraining: a call computed wherever it sits, no composition shown)")
    g.add_argument("--first-step-unmarked", type=float, default=0.0, metavar="SHARE",
                   help="with --first-step: this share of the prompts (0..1) goes without the '>' mark, so an "
                        "ordinary composition is answered after its first step (default 0: every prompt marked)")
    g.add_argument("--level-shares", type=int, nargs="+", default=None, metavar="N",
                   help="one positive integer per level, min..max: problems per level in these proportions "
                        "(default: evenly)")
    g.add_argument("--full-trace-only", action="store_true",
                   help="only problems whose answer no one-step wrong trace reaches (a skipped call, or "
                        "another call of the expression in its place): a right answer needs every step")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.min_level > args.max_level:
        print(f"error: --min-level {args.min_level} is above --max-level {args.max_level}; "
              "swap them", file=sys.stderr)
        return 2
    if args.num < 0:
        print(f"error: --num must be >= 0, got {args.num}", file=sys.stderr)
        return 2
    return write_problem_set(
        lambda: generate(stage=args.stage, split=args.split, min_level=args.min_level, max_level=args.max_level,
                         num=args.num, seed=args.seed, style=args.style, max_value_len=args.max_value_len,
                         exclude=expressions_of(args.exclude), progress=True, grammar=args.grammar,
                         partition=args.partition, inputs=args.inputs, first_step=args.first_step,
                         first_step_unmarked=args.first_step_unmarked, level_shares=args.level_shares,
                         full_trace_only=args.full_trace_only),
        args.out, f"problems (stage {args.stage}, split {args.split}, levels {args.min_level}-{args.max_level}, "
                  f"style {args.style})")
