"""The context penalty: is a reduction step computed as well inside a composition as on its own?

The first reduction step of a Level-k problem (its innermost call, on literal arguments) is itself
a Level-1 problem. This analysis compares, problem by problem, two accuracies of that one step:

- ``alone``: the model sampled on the step as a Level-1 prompt (``"djo".f8(1)``), the share of
  samples whose first line is the step with its right value;
- ``in_context``: read off the evaluation's own responses to the whole prompt
  (``"djo".f8(1).f16().f16()``): of the responses whose first line starts with that call, the
  share that give its value right. Conditioning on the call being located keeps "does not
  compose" (``fgx.analysis.first_lines``) out of this number.

``in_context - alone`` per level, with a paired bootstrap CI over the problems that have a located
response, is the penalty the surrounding calls put on the atomic skill. A model whose atomic skill
only works on a bare call cannot reach deeper levels by composing better: every step of a Level-3
trace is computed in a context. Run it on models before and after RL, and on train-function
problems (an evaluation of ``results/data/strings/level2.parquet``) against held-out ones, to see
whether RL removes the penalty and for which functions.

``--every-step`` asks a narrower question with no context at all: every reduction step of each
problem, sampled alone as a Level-1 prompt, by its place in the trace. Step 1 reads the prompt's own
literal; later steps read a *carried* value (what earlier calls made), so the table says how much of
the atomic skill survives on the strings a composition produces, before any context costs. ``--by
function`` splits it by the step's function, ``--by input`` by the string the step reads (literal or
carried; lowercase letters or not; its length): a model that never saw capitals or long strings in
pretraining shows it there.

Compact style only, like ``first_lines``. CLI (any model directory the torch engine loads, the
evaluation parquet of that model)::

    python -m fgx.analysis.context_penalty --model results/models/rl_level2 \\
        --eval results/eval/rl_level2/test.parquet [--levels 2 3] [--n 16] [--out CSV] [--every-step [--by input]]
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

import numpy as np
import pandas as pd

from fgx.analysis.evals import add_sampling_args, print_table, read_eval
from fgx.analysis.first_lines import first_line_category, first_step_right, row_parts
from fgx.metrics import paired_bootstrap_diff_ci
from fgx.tasks.strings.expr import Call, Concat, Str, Var, children, parse_code, reductions
from fgx.tasks.strings.generate import Problem, make_row, parse_ground_truth


def first_step_rows(eval_rows: pd.DataFrame, levels: Sequence[int] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The evaluation rows at Level >= 2 (and in ``levels``), each with ``step_line`` (its first
    step with the right value, ``"djo".f8(1)="jod"`` in the rows' own render), and one Level-1 row
    per such problem (verl schema, the same style / render / stage) for that step alone."""
    missing = {"reward_model", "responses", "level"} - set(eval_rows.columns)
    if missing:
        raise ValueError(f"no column(s) {sorted(missing)}; pass an evaluation parquet "
                         "(results/eval/<model>/<split>.parquet) of the string task")
    keep, steps, parts = [], [], []
    for i, (_, r) in enumerate(eval_rows.iterrows()):
        extra = r.get("extra_info") or {}
        if extra.get("style", "paper") != "compact":
            raise ValueError(f"row {i}: style {extra.get('style', 'paper')!r}; the context penalty reads "
                             "compact traces (task.style: compact)")
        level = int(r["level"])
        if level < 2 or (levels is not None and level not in levels):
            continue
        gt = parse_ground_truth(r["reward_model"]["ground_truth"])
        e, x = parse_code(gt["ref_code"]), gt["x"]
        redex, value = reductions(e, x)[0]
        steps.append(make_row(Problem(redex, x, value, 1), stage=int(extra.get("stage", 2)), split="steps",
                              style="compact", index=len(steps), render=extra.get("render") or "nested"))
        parts.append(row_parts(r))
        keep.append(i)
    if not keep:
        have = sorted(set(map(int, eval_rows["level"])))
        raise ValueError(f"no problem of Level >= 2{f' in levels {list(levels)}' if levels else ''}; "
                         f"the file holds levels {have}")
    problems = eval_rows.iloc[keep].reset_index(drop=True)
    problems["expression"] = [p[0] for p in parts]
    problems["innermost"] = [p[1] for p in parts]
    problems["root"] = [p[2] for p in parts]
    problems["step_line"] = [p[3] for p in parts]
    return problems, pd.DataFrame(steps)


def every_step_rows(eval_rows: pd.DataFrame, levels: Sequence[int] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each reduction step of every Level >= 2 problem (in ``levels``) as a Level-1 row (verl schema),
    and beside it ``level``, ``step`` (1-based place in the trace), ``carried`` (the step reads a
    value an earlier step made, not the prompt's literal), ``function`` (``f8``, ``+``, ``upper``) and
    ``reads`` (the step's first string argument)."""
    problems, _ = first_step_rows(eval_rows, levels)
    rows, meta = [], []
    for _, r in problems.iterrows():
        extra = r.get("extra_info") or {}
        gt = parse_ground_truth(r["reward_model"]["ground_truth"])
        e, x = parse_code(gt["ref_code"]), gt["x"]
        made: set[str] = set()
        for k, (redex, value) in enumerate(reductions(e, x), start=1):
            rows.append(make_row(Problem(redex, x, value, 1), stage=int(extra.get("stage", 2)), split="steps",
                                 style="compact", index=len(rows), render=extra.get("render") or "nested"))
            reads = _literals(redex)
            first = children(redex)[0]
            meta.append(dict(level=int(r["level"]), step=k, carried=bool(reads & made), function=_function(redex),
                             reads=x if type(first) is Var else first.value))
            made.add(value)
    return pd.DataFrame(meta), pd.DataFrame(rows)


def _function(redex) -> str:
    if type(redex) is Call:
        return f"f{redex.fn}"
    return "+" if type(redex) is Concat else redex.name


def _input_kind(value: str) -> str:
    return "lowercase" if value.isalpha() and value.islower() else "other"


def _length_bucket(value: str) -> str:
    n = len(value)
    return "1-2" if n <= 2 else "3-6" if n <= 6 else "7+"


def _literals(redex) -> set[str]:
    """The string literals a reduced node reads (its arguments are literals or ``x`` by then)."""
    return {c.value for c in children(redex) if type(c) is Str}


EVERY_STEP_BY = ("place", "function", "input")


def _check_grouping(by: str) -> None:
    if by not in EVERY_STEP_BY:
        raise ValueError(f"unknown grouping {by!r}: use one of {', '.join(EVERY_STEP_BY)}")


def every_step_table(meta: pd.DataFrame, alone: np.ndarray, by: str = "place") -> pd.DataFrame:
    """Accuracy alone per level and ``by``: ``place`` (each step, then literal vs carried inputs),
    ``function`` (the step's function, literal vs carried) or ``input`` (literal vs carried, the
    string's letters: lowercase or other, and its length: 1-2, 3-6, 7+)."""
    _check_grouping(by)
    df = meta.assign(alone=alone, input=meta["carried"].map({False: "literal", True: "carried"}))
    if by != "place":
        if by == "function":
            keys = ["level", "function", "input"]
        else:
            df = df.assign(letters=df["reads"].map(_input_kind), length=df["reads"].map(_length_bucket))
            keys = ["level", "input", "letters", "length"]
        return df.groupby(keys).alone.agg(steps="size", alone="mean").reset_index()
    by_step = df.groupby(["level", "step"]).alone.agg(steps="size", alone="mean").reset_index()
    by_input = df.groupby(["level", "carried"]).alone.agg(steps="size", alone="mean").reset_index()
    by_input["step"] = by_input.pop("carried").map({False: "literal", True: "carried"})
    return pd.concat([by_step.astype({"step": str}), by_input], ignore_index=True)[["level", "step", "steps", "alone"]]


def measure_every_step(model_dir, eval_rows: pd.DataFrame, *, levels: Sequence[int] | None = None, n: int = 16,
                       temperature: float = 1.0, max_new_tokens: int = 96, seed: int = 0,
                       device: str = "cpu", by: str = "place") -> pd.DataFrame:
    """Sample ``model_dir`` ``n`` times on each reduction step alone; :func:`every_step_table`."""
    from fgx.engines.torch import get_engine

    _check_grouping(by)  # before sampling, not after it
    meta, steps = every_step_rows(eval_rows, levels)
    sampled = get_engine().sample(model_dir, steps, n=n, temperature=temperature, max_new_tokens=max_new_tokens,
                                  seed=seed, device=device)
    return every_step_table(meta, alone_accuracy(sampled), by)


def in_context_counts(problems: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per problem: responses that start with the first step's call, and of those, how many give
    its value right."""
    located, right = [], []
    for _, r in problems.iterrows():
        cats = [first_line_category(r["expression"], r["innermost"], r["root"], s) for s in r["responses"]]
        hits = [first_step_right(r["step_line"], s) for s, c in zip(r["responses"], cats) if c == "innermost"]
        located.append(len(hits))
        right.append(sum(hits))
    return np.asarray(located), np.asarray(right)


def alone_accuracy(step_samples: pd.DataFrame) -> np.ndarray:
    """Per Level-1 step row: the share of its samples whose first line is the step with its value."""
    out = []
    for _, s in step_samples.iterrows():
        line = row_parts(s)[3]
        out.append(float(np.mean([first_step_right(line, resp) for resp in s["responses"]])))
    return np.asarray(out)


def penalty_table(problems: pd.DataFrame, alone: np.ndarray, located: np.ndarray, right: np.ndarray, *,
                  resamples: int = 1000, ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per level: problems, those with a located response (the paired ones), the step's accuracy
    alone and in context on them, the difference with its paired bootstrap CI, and the share of
    responses that locate the step at all."""
    rng = np.random.default_rng(seed)
    rows = []
    levels = problems["level"].astype(int).to_numpy()
    responses = problems["responses"].apply(len).to_numpy()
    for level in sorted(set(levels)):
        at = levels == level
        paired = at & (located > 0)
        ctx = right[paired] / located[paired]
        lo, hi, _ = paired_bootstrap_diff_ci(ctx, alone[paired], resamples=resamples, ci=ci, rng=rng)
        rows.append(dict(level=int(level), problems=int(at.sum()), paired=int(paired.sum()),
                         located=float(located[at].sum() / responses[at].sum()),
                         alone=float(alone[paired].mean()) if paired.any() else np.nan,
                         in_context=float(ctx.mean()) if paired.any() else np.nan,
                         penalty=float((ctx - alone[paired]).mean()) if paired.any() else np.nan,
                         ci_low=lo, ci_high=hi))
    return pd.DataFrame(rows)


def measure(model_dir, eval_rows: pd.DataFrame, *, levels: Sequence[int] | None = None, n: int = 16,
            temperature: float = 1.0, max_new_tokens: int = 96, seed: int = 0, device: str = "cpu",
            resamples: int = 1000, ci: float = 0.95) -> pd.DataFrame:
    """Sample ``model_dir`` ``n`` times on each problem's first step alone and return
    :func:`penalty_table` against ``eval_rows``' own responses (which must come from that model)."""
    from fgx.engines.torch import get_engine

    problems, steps = first_step_rows(eval_rows, levels)
    sampled = get_engine().sample(model_dir, steps, n=n, temperature=temperature, max_new_tokens=max_new_tokens,
                                  seed=seed, device=device)
    located, right = in_context_counts(problems)
    return penalty_table(problems, alone_accuracy(sampled), located, right, resamples=resamples, ci=ci, seed=seed)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.context_penalty", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="model directory (Hugging Face format) that wrote --eval")
    p.add_argument("--eval", required=True, help="evaluation parquet of the string task (compact style)")
    p.add_argument("--levels", type=int, nargs="*", help="only these levels (default: every level >= 2)")
    p.add_argument("--every-step", action="store_true",
                   help="instead: every reduction step alone, by its place in the trace (literal vs carried input)")
    p.add_argument("--by", choices=EVERY_STEP_BY, default="place",
                   help="with --every-step: group by the step's place, its function, or the string it reads")
    add_sampling_args(p)
    a = p.parse_args(argv)
    if a.by != "place" and not a.every_step:
        p.error("--by goes with --every-step")
    try:
        if a.every_step:
            table = measure_every_step(a.model, read_eval(a.eval), levels=a.levels, n=a.n, temperature=a.temperature,
                                       max_new_tokens=a.max_new_tokens, seed=a.seed, device=a.device, by=a.by)
        else:
            table = measure(a.model, read_eval(a.eval), levels=a.levels, n=a.n, temperature=a.temperature,
                            max_new_tokens=a.max_new_tokens, seed=a.seed, device=a.device)
    except ValueError as err:
        raise SystemExit(f"{a.eval}: {err}") from err
    print_table(table, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
