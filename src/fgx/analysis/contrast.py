"""Does model A beat model B? Per-level pass@k differences with paired bootstrap CIs.

Each model's own interval (figures/*.csv) spreads with the test prompts' difficulty, so two models
on the same prompts can overlap and still differ clearly. Resampling the prompts once for both
models (a paired bootstrap) gives the interval of the *difference*, the statistic for claims such as
"RL on Level 2 beats RL on Level 1 at Level 3".

CLI (two evaluations of the same test set)::

    python -m fgx.analysis.contrast --a results/eval/rl_level2/test.parquet \\
        --b results/eval/rl_level1/test.parquet [--ks 1 16] [--levels 2 3 4] [--out contrast.csv] \\
        [--shortcuts with|without [--max-value-len 8]]

``--shortcuts`` keeps only the string-task prompts that a one-step wrong trace also solves (``with``:
a call left out, or another call of the expression in its place, still reaches the answer) or only
those that need every step (``without``); see ``fgx.tasks.strings.shortcuts``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from fgx.analysis.evals import read_eval
from fgx.metrics import level_contrast


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.contrast", description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="evaluation parquet of model A (results/eval/<model>/<split>.parquet)")
    p.add_argument("--b", required=True, help="evaluation parquet of model B, same test set")
    p.add_argument("--ks", type=int, nargs="+", default=[1], help="pass@k values of k (default: 1)")
    p.add_argument("--levels", type=int, nargs="*", help="only these levels (default: all)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples over prompts")
    p.add_argument("--ci", type=float, default=0.95, help="confidence level")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.add_argument("--out", help="write the long table as CSV here as well")
    p.add_argument("--shortcuts", choices=("all", "with", "without"), default="all",
                   help="string task: all prompts, or only those a one-step wrong trace also solves (with) or "
                        "not (without)")
    p.add_argument("--max-value-len", type=int, default=8,
                   help="--shortcuts: the task's value cap (task.max_value_len; the tiny default's 8)")
    a = p.parse_args(argv)
    tables = [read_eval(a.a), read_eval(a.b)]
    if a.levels:
        tables = [t[t["level"].isin(a.levels)] for t in tables]
    if a.shortcuts != "all":
        tables = [_shortcut_subset(t, name, a.shortcuts == "with", a.max_value_len)
                  for t, name in zip(tables, (a.a, a.b))]
    try:
        table = level_contrast(*tables, a.ks, resamples=a.resamples, ci=a.ci, seed=a.seed, names=(a.a, a.b))
    except ValueError as err:
        raise SystemExit(str(err))
    shown = table.copy()
    for col in ("a", "b", "diff", "ci_low", "ci_high", "p_a_better"):
        shown[col] = (100 * shown[col]).round(1)
    print(f"A = {a.a}\nB = {a.b}\npass@k in %, diff = A - B with its paired {100 * a.ci:g} % bootstrap CI; "
          "p_a_better = % of resamples in which A is ahead")
    print(shown.to_string(index=False))
    if a.out:
        from fgx.io import write_text
        write_text(table.to_csv(index=False), a.out)  # atomically
    return 0


def _shortcut_subset(table, name: str, wanted: bool, max_len: int):
    """The rows whose problem has (``wanted``) or lacks a one-step shortcut."""
    from fgx.tasks.strings.shortcuts import has_shortcut

    if "reward_model" not in table.columns:
        raise SystemExit(f"{name}: no reward_model column; --shortcuts reads the string task's ground truths")
    try:
        keep = [has_shortcut(rm["ground_truth"], max_len) == wanted for rm in table["reward_model"]]
    except (ValueError, KeyError) as err:
        raise SystemExit(f"{name}: --shortcuts reads string-task ground truths (ref_code, x, ref_output): {err}")
    return table[keep]


if __name__ == "__main__":
    sys.exit(main())
