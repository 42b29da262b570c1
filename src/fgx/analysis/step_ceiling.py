"""How far perfect composition could take a model: the *step ceiling* of an evaluation.

A Level-k string problem is solved by a chain of reduction steps (innermost call first, as in the
traces), and every step is itself a Level-1 problem: the call with its true arguments. Sampling a
model on each step alone and multiplying the accuracies of a problem's steps gives the accuracy
it would reach if it always located the right call and carried every value correctly, with the
atomic skill it shows on Level-1 prompts (steps taken as independent). A model whose evaluation
accuracy is at its ceiling is limited by atomic skill on the values met inside compositions, not by
composition; no RL recipe that only improves composing can lift it above the ceiling.

CLI (any model directory the torch engine loads, an evaluation parquet of the string task)::

    python -m fgx.analysis.step_ceiling --model results/models/stage1 \\
        --eval results/eval/stage1/test.parquet [--n 16] [--out ceiling.csv]
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from fgx.analysis.evals import add_sampling_args, print_table
from fgx.tasks.strings.expr import parse_code, reductions
from fgx.tasks.strings.generate import Problem, make_row, parse_ground_truth


def step_rows(eval_rows: pd.DataFrame) -> tuple[pd.DataFrame, list[list[int]]]:
    """Level-1 rows (verl schema, the prompt style of ``eval_rows``) for every distinct reduction
    step, and per evaluation row the indices of its steps into them."""
    rows, index, owners = [], {}, []
    for i, (_, r) in enumerate(eval_rows.iterrows()):
        gt = parse_ground_truth(r["reward_model"]["ground_truth"])
        extra = r.get("extra_info") or {}
        style = extra.get("style", "paper")
        e, x = parse_code(gt["ref_code"]), gt["x"]
        mine = []
        for redex, value in reductions(e, x):
            row = make_row(Problem(redex, x, value, 1), stage=int(extra.get("stage", 2)), split="steps",
                           style=style, index=len(rows), render=extra.get("render") or "nested")
            key = row["prompt"][0]["content"]
            if key not in index:
                index[key] = len(rows)
                rows.append(row)
            mine.append(index[key])
        if not mine:
            raise ValueError(f"evaluation row {i}: its program has no reduction step (ref_code {gt['ref_code']!r})")
        owners.append(mine)
    return pd.DataFrame(rows), owners


def ceiling_table(eval_rows: pd.DataFrame, owners: Sequence[Sequence[int]], step_accuracy: Sequence[float]) -> pd.DataFrame:
    """Per level: problems, mean reduction steps, the evaluation's accuracy (``correct``) and the
    step ceiling (mean over problems of the product of their steps' accuracies)."""
    acc = np.asarray(step_accuracy, dtype=float)
    df = pd.DataFrame({"level": eval_rows["level"].to_numpy(),
                       "actual": eval_rows["correct"].apply(lambda c: float(np.mean(c))).to_numpy(),
                       "steps": [len(o) for o in owners],
                       "ceiling": [float(np.prod(acc[list(o)])) for o in owners]})
    return df.groupby("level").agg(problems=("actual", "size"), steps=("steps", "mean"),
                                   actual=("actual", "mean"), ceiling=("ceiling", "mean")).reset_index()


def measure(model_dir, eval_path, *, n: int = 16, temperature: float = 1.0, max_new_tokens: int = 96,
            seed: int = 0, device: str = "cpu", score_fn: Callable | None = None) -> pd.DataFrame:
    """Sample ``model_dir`` ``n`` times on every reduction step of ``eval_path``'s problems and
    return :func:`ceiling_table` (scored by the string task's ``compute_score``)."""
    from fgx.engines.torch import get_engine

    eval_rows = pd.read_parquet(eval_path)
    missing = {"reward_model", "correct", "level"} - set(eval_rows.columns)
    if missing:
        raise ValueError(f"{eval_path}: no column(s) {sorted(missing)}; pass an evaluation parquet "
                         "(results/eval/<model>/<split>.parquet) of the string task")
    steps, owners = step_rows(eval_rows)
    sampled = get_engine().sample(model_dir, steps, n=n, temperature=temperature, max_new_tokens=max_new_tokens,
                                  seed=seed, device=device, score_fn=score_fn)
    return ceiling_table(eval_rows, owners, [float(np.mean(c)) for c in sampled["correct"]])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.step_ceiling", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="model directory (Hugging Face format)")
    p.add_argument("--eval", required=True, help="evaluation parquet of the string task")
    add_sampling_args(p)
    a = p.parse_args(argv)
    table = measure(a.model, a.eval, n=a.n, temperature=a.temperature, max_new_tokens=a.max_new_tokens,
                    seed=a.seed, device=a.device)
    print_table(table, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
