"""Where along its trace a compact answer leaves the true computation: a step-by-step funnel.

A Level-k answer is right only if it writes every reduction step of the expression, each with the
right call and the right value, and then stops. This analysis walks each response's step lines
against the true steps (``reductions`` of the ground-truth program) and records the first step at
which it departs, and how:

- ``stopped``: it answered (or ended) before writing this step, after every earlier step right.
  A model whose pretraining traces were never longer than three steps stops there on deeper
  problems whatever it learnt about composing;
- ``wrong_call``: the line is not this step's call on the carried value (another call, a miscopied
  name or argument, an invented helper). The funnel also counts the wrong calls that repeat the
  previous step's call on the carried value (``repeated_call``): the Level-1 habit of copying the line
  above, where the next call has to be read off the prompt;
- ``wrong_value``: the right call with a wrong value (the atomic skill failing in context);
- ``extra_steps``: every step right, then more step lines than the expression has;
- ``complete``: every step right and nothing more (the answer line itself is not checked here;
  ``compute_score`` is).

Two tables: per level and step, how many responses reach the step (every earlier one right) and
the shares of those that stop before it, call it wrong, compute it wrong or get it right; and per
level, the shares of responses with fewer, exactly as many or more step lines than the expression
has steps, with the most common length of the short ones.

Compact style only (steps are read with :func:`fgx.tasks.strings.trace.written_steps`). CLI::

    python -m fgx.analysis.step_funnel --eval results/eval/rl_level2/test.parquet [--levels 2 3 4] [--out CSV]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Sequence

import pandas as pd

from fgx.analysis.evals import print_table, read_eval
from fgx.tasks.strings.expr import Call, Expr, Method, parse_chain, parse_code, reductions, render_chain
from fgx.tasks.strings.ground_truth import parse_ground_truth
from fgx.tasks.strings.trace import parse_step, written_steps

OUTCOMES = ("stopped", "wrong_call", "wrong_value", "extra_steps", "complete")


def reference_steps(row) -> list[tuple[Expr, str]]:
    """The true steps of a compact row: each reduced call (the input inlined) and its value."""
    gt = parse_ground_truth(row["reward_model"]["ground_truth"])
    e, x = parse_code(gt["ref_code"]), gt["x"]
    return [(parse_chain(render_chain(redex, x)), value) for redex, value in reductions(e, x)]


def trace_outcome(reference: Sequence[tuple[Expr, str]], written: Sequence[str]) -> tuple[str, int]:
    """The outcome (one of ``OUTCOMES``) and the 1-based step it happens at (for ``extra_steps`` and
    ``complete``: the number of true steps)."""
    for k, (call, value) in enumerate(reference):
        if k >= len(written):
            return "stopped", k + 1
        got = parse_step(written[k])
        if got is None or got[0] != call:
            return "wrong_call", k + 1
        if got[1] != value:
            return "wrong_value", k + 1
    return ("extra_steps" if len(written) > len(reference) else "complete"), len(reference)


def call_signature(call: Expr | None) -> tuple | None:
    """What a step's call applies, whatever its first argument: ``"abc".f8(2)`` -> ``(8, "2")``,
    ``"abc".upper()`` -> ``("upper",)``; None for anything else (a concatenation, an unparsable line)."""
    if isinstance(call, Call):
        return (call.fn, *(render_chain(a, "") for a in call.args[1:]))
    if isinstance(call, Method):
        return (call.name,)
    return None


def repeats_previous_call(reference: Sequence[tuple[Expr, str]], written: Sequence[str], step: int) -> bool:
    """Whether the written line at ``step`` (1-based, > 1) applies the previous true step's call again."""
    if step < 2 or step > len(written) or step > len(reference):
        return False
    got = parse_step(written[step - 1])
    sig = call_signature(got[0] if got else None)
    return sig is not None and sig == call_signature(reference[step - 2][0])


def response_outcomes(samples: pd.DataFrame, levels: Sequence[int] | None = None) -> pd.DataFrame:
    """One row per response: level, steps needed, step lines written, outcome and its step, and
    whether a wrong call repeats the previous step's (``repeated``)."""
    rows = []
    for i, (_, r) in enumerate(samples.iterrows()):
        style = (r.get("extra_info") or {}).get("style", "paper")
        if style != "compact":
            raise ValueError(f"row {i}: style {style!r}; the step funnel reads compact traces (task.style: compact)")
        level = int(r["level"])
        if levels is not None and level not in levels:
            continue
        reference = reference_steps(r)
        for resp in r["responses"]:
            written = written_steps(resp)
            outcome, step = trace_outcome(reference, written)
            repeated = outcome == "wrong_call" and repeats_previous_call(reference, written, step)
            rows.append((level, len(reference), len(written), outcome, step, repeated))
    if not rows:
        raise ValueError(f"no responses at levels {list(levels) if levels is not None else 'any'}; "
                         f"the file holds levels {sorted(set(map(int, samples['level'])))}")
    return pd.DataFrame(rows, columns=["level", "steps_needed", "steps_written", "outcome", "step", "repeated"])


def funnel_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per level and step: responses that reach it, and the shares of those that stop before it,
    call it wrong (``repeated_call``: of those, the ones repeating the previous step's call), compute
    it wrong, or get it right (``right``: the rest)."""
    rows = []
    for level, df in outcomes.groupby("level"):
        for step in range(1, int(df["steps_needed"].max()) + 1):
            # reached: every earlier step right (the departure is at this step or later)
            at = df[(df["step"] >= step) & (df["steps_needed"] >= step)]
            if at.empty:
                continue
            here = at[at["step"] == step]
            counts = Counter(here["outcome"])
            n = len(at)
            rows.append(dict(level=int(level), step=step, reached=n,
                             reached_share=n / len(df[df["steps_needed"] >= step]),
                             stopped=counts["stopped"] / n, wrong_call=counts["wrong_call"] / n,
                             repeated_call=int(here["repeated"].sum()) / n, wrong_value=counts["wrong_value"] / n,
                             right=1 - (counts["stopped"] + counts["wrong_call"] + counts["wrong_value"]) / n))
    return pd.DataFrame(rows)


def length_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per level: responses, the shares with fewer / as many / more step lines than needed, and the
    most common number of step lines among the short ones (``short_mode``; -1 when none is short)."""
    rows = []
    for level, df in outcomes.groupby("level"):
        short = df[df["steps_written"] < df["steps_needed"]]
        rows.append(dict(level=int(level), responses=len(df), steps_needed=float(df["steps_needed"].mean()),
                         short=len(short) / len(df), exact=float((df["steps_written"] == df["steps_needed"]).mean()),
                         long=float((df["steps_written"] > df["steps_needed"]).mean()),
                         short_mode=int(short["steps_written"].mode().min()) if len(short) else -1))
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.step_funnel", description=__doc__.split("\n\n")[0])
    p.add_argument("--eval", required=True, help="evaluation or rollout parquet of the string task (compact style)")
    p.add_argument("--levels", type=int, nargs="*", help="only these levels (default: all)")
    p.add_argument("--out", help="write the funnel table as CSV here as well")
    a = p.parse_args(argv)
    samples = read_eval(a.eval)
    missing = {"reward_model", "responses", "level"} - set(samples.columns)
    if missing:
        raise SystemExit(f"{a.eval}: no column(s) {sorted(missing)}; pass an evaluation parquet "
                         "(results/eval/<model>/<split>.parquet) of the string task")
    try:
        outcomes = response_outcomes(samples, a.levels)
    except ValueError as err:
        raise SystemExit(f"{a.eval}: {err}") from err
    print("per step, of the responses that reach it (every earlier step right):")
    print_table(funnel_table(outcomes), a.out)
    print("\nstep lines written against the expression's steps:")
    print_table(length_table(outcomes), None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
