"""``python -m fgx.tasks.countdown generate ...``: write one Countdown problem set as a verl parquet file."""

from __future__ import annotations

import argparse

from fgx.tasks.generate_cli import write_problem_set

from .generate import PARTITIONS, SPLITS, STYLES, generate
from .trace import TRACES


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m fgx.tasks.countdown", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate countdown problems (verl parquet)")
    g.add_argument("--numbers", type=int, required=True, help="numbers per problem (2 = train, 3-5 = eval)")
    g.add_argument("--num", type=int, required=True, help="number of problems")
    g.add_argument("--seed", type=int, default=42, help="seed (paper style: reasoning-gym's; upstream: 42)")
    g.add_argument("--split", choices=SPLITS, default=None,
                   help="extra_info.split (default: train for 2 numbers, else test)")
    g.add_argument("--style", choices=STYLES, default="paper",
                   help="paper: reasoning-gym problems, upstream's prompt; compact: fgx's sampler, the "
                        "tiny model's prompt and a step-by-step reference solution")
    g.add_argument("--partition", choices=PARTITIONS, default="none",
                   help="keep only one hash half of the problems (train / test never share a problem)")
    g.add_argument("--max-value", type=int, default=100, help="numbers drawn from 1..N (upstream: 100)")
    g.add_argument("--trace", choices=TRACES, default="target",
                   help="compact style: a 2-number reference trace writes the winning step (target) or every "
                        "step tried up to it (search)")
    g.add_argument("--out", required=True, help="output .parquet path (written atomically)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return write_problem_set(
        lambda: generate(numbers=args.numbers, num=args.num, seed=args.seed, split=args.split, progress=True,
                         style=args.style, partition=args.partition, max_value=args.max_value, trace=args.trace),
        args.out, f"{args.style} countdown problems ({args.numbers} numbers, seed {args.seed})")
