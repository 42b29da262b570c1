"""``python -m fgx.tasks.strings generate ...``: write one problem set as a verl parquet file."""

from __future__ import annotations

import argparse
import sys
import time

from .expr import RENDERS, TRACES
from .generate import GRAMMARS, INPUTS, PARTITIONS, SHORTCUTS, SPLITS, STYLES, generate


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
                   help="paper: upstream's code prompt; compact: f17(f3(\"ab\")) prompt + trace solution")
    g.add_argument("--max-value-len", type=_positive_int, default=None,
                   help="reject programs with a longer input, literal or intermediate value")
    g.add_argument("--exclude", nargs="*", default=[], metavar="PARQUET",
                   help="parquet files whose expressions must not be generated (e.g. the test set)")
    g.add_argument("--grammar", choices=GRAMMARS, default="upstream",
                   help="upstream: the paper's expressions; builtins: str methods and + only "
                        "(the tiny model's pretraining prior for step-by-step evaluation); outer_call: "
                        "builtins under, half the time, one custom function at the root (never a "
                        "custom function inside a context); helper_call: as outer_call, with made-up "
                        "helper functions g0..g5 nested among the builtins; context_call: one custom function anywhere, "
                        "also inside builtin contexts (never inside another custom function); "
                        "helper_context: as context_call, with the helpers g0..g5 among the builtins")
    g.add_argument("--partition", choices=PARTITIONS, default="none",
                   help="keep only expressions of this hash partition: train, test and val sets "
                        "never share an expression, without reading each other's files")
    g.add_argument("--trace", choices=TRACES, default="rewrite",
                   help="format of compact rows' reference traces: rewrite (each line the whole "
                        "expression, its innermost call evaluated in place), redex (each step "
                        "copies the innermost call with its value, then rewrites the expression), "
                        "redex_full (as redex, and the last step is followed by the bare value too), "
                        "redex_arg_first (as redex, each step first argument first: \"dcba\".f3()=\"abcd\") or "
                        "steps (--render chain only: redex's step lines without the rewritten expressions)")
    g.add_argument("--inputs", choices=INPUTS, default="lowercase",
                   help="lowercase: 3..10 lowercase letters (upstream); mixed: every other problem takes "
                        "3..max-value-len upper-case letters, mixed-case letters, or letters and digits "
                        "(the tiny model's pretraining: the kinds of values met inside compositions)")
    g.add_argument("--render", choices=RENDERS, default="nested",
                   help="how compact prompts and traces write an expression: nested (f17(f3(\"dcba\"))) or "
                        "chain (\"dcba\".f3().f17(): evaluation order, every call after its first argument)")
    g.add_argument("--first-step", action="store_true",
                   help="compact style, levels >= 2: each prompt (marked with a leading '>') asks for its "
                        "expression's first reduction step only, answered as that step's Level-1 problem "
                        "(the tiny model's pretraining: a call computed wherever it sits, no composition shown)")
    g.add_argument("--first-step-unmarked", type=float, default=0.0, metavar="SHARE",
                   help="with --first-step: this share of the prompts (0..1) goes without the '>' mark, so an "
                        "ordinary composition is answered after its first step (default 0: every prompt marked)")
    g.add_argument("--shortcuts", choices=SHORTCUTS, default="keep",
                   help="keep (upstream) or reject problems whose answer a one-step wrong trace also reaches: "
                        "a call left out, or another call of the expression in its place (an outcome reward "
                        "pays such traces in full)")
    g.add_argument("--level-shares", type=int, nargs="+", default=None, metavar="N",
                   help="split --num over levels min..max in these proportions, one positive integer per level "
                        "(default: evenly); e.g. --min-level 2 --max-level 3 --level-shares 3 1")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from fgx.io import write_parquet

    if args.min_level > args.max_level:
        print(f"error: --min-level {args.min_level} is above --max-level {args.max_level}; "
              "swap them", file=sys.stderr)
        return 2
    if args.num < 0:
        print(f"error: --num must be >= 0, got {args.num}", file=sys.stderr)
        return 2
    exclude: set[str] = set()
    if args.exclude:
        from fgx.tasks.leakage import expressions_of

        for path in args.exclude:
            exclude |= set(expressions_of(path, strip_prefix=True))
    t0 = time.perf_counter()
    try:
        df = generate(stage=args.stage, split=args.split, min_level=args.min_level, max_level=args.max_level,
                      num=args.num, seed=args.seed, style=args.style, max_value_len=args.max_value_len,
                      exclude=exclude, progress=True, grammar=args.grammar,
                      partition=args.partition, trace=args.trace, inputs=args.inputs,
                      render=args.render, first_step=args.first_step, shortcuts=args.shortcuts,
                      level_shares=args.level_shares, first_step_unmarked=args.first_step_unmarked)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    write_parquet(df, args.out)
    dt = time.perf_counter() - t0
    print(f"wrote {len(df)} problems (stage {args.stage}, split {args.split}, levels "
          f"{args.min_level}-{args.max_level}, style {args.style}) to {args.out} in {dt:.1f}s")
    return 0
