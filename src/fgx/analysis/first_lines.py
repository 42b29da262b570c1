"""How compact-trace answers start: the category of each response's first line.

A trace should begin with the expression's first reduction step, the innermost call with its
literal arguments. The first line tells whether a model even tries to compose:

- ``innermost``: the line starts with that call (``f2("ufkvgj")`` for ``f10(f2("ufkvgj"))``);
- ``invented_builtin``: it starts with a builtin str method (``upper(``, ...) that the expression
  does not contain, a habit of a pretraining prior that nests only builtin methods;
- ``invented_helper``: the same with a helper function (``g0(``, ...) of the ``helper_call`` / ``helper_context`` priors;
- ``root_first``: it starts with the root function, evaluated before its argument
  (``f10("ufkvgj")=...``);
- ``other``: anything else (another call, a miscopied name, an answer without a trace).

Of the ``innermost`` answers, ``stop_after_first_step_table`` counts those that answer right
after that one step (the next line is the answer or a bare string, as after a Level-1 step)
instead of going on with the rewritten expression, and those whose step value is right (a step
copied from a nest but computed wrong is the atomic skill failing under a context).

Compact style only (the tiny model's traces; ``redex_arg_first`` and ``task.render: chain`` step
lines are read in ``redex``'s form, ``call_steps``' call lines skipped). CLI::

    python -m fgx.analysis.first_lines --eval results/eval/stage1/test.parquet [--levels 2 3] [--out CSV]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

import pandas as pd

from fgx.analysis.evals import read_eval
from fgx.tasks.strings.expr import (Call, arg_first_to_compact, chain_to_compact, parse_code, quote, reductions,
                                    render_compact, top_level_eq)
from fgx.tasks.strings.functions import BUILTIN_METHODS, HELPERS
from fgx.tasks.strings.generate import parse_ground_truth

CATEGORIES = ("innermost", "invented_builtin", "invented_helper", "root_first", "other")


def _invents(first: str, expression: str, names: Sequence[str] | dict) -> bool:
    return any(first.startswith(f"{m}(") for m in names) and not any(f"{m}(" in expression for m in names)


def _step_lines(response: str) -> list[str]:
    """The response's lines without the ``call_steps`` trace's call lines (a call alone, the next
    line that call with its value), so every trace's first line is its first step."""
    lines = [ln.strip() for ln in response.split("\n")]
    return [ln for ln, nxt in zip(lines, lines[1:] + [""])
            if not (ln and top_level_eq(ln) < 0 and nxt.startswith(ln + "="))]


def _first_line(response: str) -> str:
    """The response's first step line, a ``redex_arg_first`` or chain step read in ``redex``'s form."""
    return chain_to_compact(arg_first_to_compact(_step_lines(response)[0]))


def first_line_category(expression: str, innermost: str, root: str | None, response: str) -> str:
    """Category of ``response``'s first line for the compact ``expression`` whose first reduction
    step is ``innermost`` and whose root function is ``root`` (``f10``; None if the root is no call)."""
    first = _first_line(response)
    if first.startswith(innermost):
        return "innermost"
    if _invents(first, expression, BUILTIN_METHODS):
        return "invented_builtin"
    if _invents(first, expression, HELPERS):
        return "invented_helper"
    if root is not None and first.startswith(f"{root}("):
        return "root_first"
    return "other"


def stops_after_first_step(response: str) -> bool:
    """The line after the first step is the answer (``{"output": ...}``) or a bare string value (not a
    ``redex_arg_first`` step, which also starts with a string)."""
    lines = _step_lines(response)
    if len(lines) < 2:
        return False
    second = lines[1].strip()
    if second.startswith('{"output"'):
        return True
    try:
        return isinstance(json.loads(second), str)
    except ValueError:
        return False


def row_parts(row) -> tuple[str, str, str | None, str]:
    """The expression, its first reduction step, its root function, and that step's line with its value."""
    gt = parse_ground_truth(row["reward_model"]["ground_truth"])
    e, x = parse_code(gt["ref_code"]), gt["x"]
    redex, value = reductions(e, x)[0]
    innermost = render_compact(redex, x)
    return (render_compact(e, x), innermost, (f"f{e.fn}" if isinstance(e, Call) else None),
            f"{innermost}={quote(value)}")


def first_step_right(step_line: str, response: str) -> bool:
    """The response's first line is ``step_line`` (``f2("ufkvgj")="fkvgj"``), in either step form."""
    return _first_line(response) == step_line


def _categorised(samples: pd.DataFrame, levels: Sequence[int] | None) -> pd.DataFrame:
    """One row per response: level, first-line category, whether it stops after the first step,
    whether that first step's value is right."""
    rows = []
    for i, (_, r) in enumerate(samples.iterrows()):
        style = (r.get("extra_info") or {}).get("style", "paper")
        if style != "compact":
            raise ValueError(f"row {i}: style {style!r}; first-line categories need compact traces "
                             "(task.style: compact)")
        if levels is not None and int(r["level"]) not in levels:
            continue
        expression, innermost, root, step_line = row_parts(r)
        rows += [(int(r["level"]), first_line_category(expression, innermost, root, resp),
                  stops_after_first_step(resp), first_step_right(step_line, resp)) for resp in r["responses"]]
    if not rows:
        raise ValueError(f"no responses at levels {list(levels) if levels is not None else 'any'}; "
                         f"the file holds levels {sorted(set(map(int, samples['level'])))}")
    return pd.DataFrame(rows, columns=["level", "category", "stops", "step_right"])


def stop_after_first_step_table(samples: pd.DataFrame, levels: Sequence[int] | None = None) -> pd.DataFrame:
    """Per level: responses, how many start with the innermost call (``located``), how many of
    those answer right after it (``stopped``, ``stopped_share`` of the located), and how many give
    that step's value right (``step_right``, ``step_right_share`` of the located)."""
    return _stops(_categorised(samples, levels))


def _stops(df: pd.DataFrame) -> pd.DataFrame:
    located = df["category"] == "innermost"
    df = df.assign(located=located, stopped=located & df["stops"], step_right=located & df["step_right"])
    out = df.groupby("level").agg(responses=("located", "size"), located=("located", "sum"),
                                  stopped=("stopped", "sum"), step_right=("step_right", "sum"))
    per_located = out["located"].where(out["located"] > 0)
    out["stopped_share"] = out["stopped"] / per_located
    out["step_right_share"] = out["step_right"] / per_located
    return out.reset_index()


def first_line_table(samples: pd.DataFrame, levels: Sequence[int] | None = None) -> pd.DataFrame:
    """Per level and category: the number of responses and their share (long format)."""
    return _shares(_categorised(samples, levels))


def _shares(df: pd.DataFrame) -> pd.DataFrame:
    counts = df.groupby(["level", "category"]).size().unstack(fill_value=0).reindex(columns=list(CATEGORIES),
                                                                                   fill_value=0)
    out = counts.stack().rename("responses").reset_index()
    out["share"] = out["responses"] / out.groupby("level")["responses"].transform("sum")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.first_lines", description=__doc__.split("\n\n")[0])
    p.add_argument("--eval", required=True, help="evaluation or rollout parquet of the string task (compact style)")
    p.add_argument("--levels", type=int, nargs="*", help="only these levels (default: all)")
    p.add_argument("--out", help="write the long table as CSV here as well")
    a = p.parse_args(argv)
    samples = read_eval(a.eval)
    missing = {"reward_model", "responses", "level"} - set(samples.columns)
    if missing:
        raise SystemExit(f"{a.eval}: no column(s) {sorted(missing)}; pass an evaluation parquet "
                         "(results/eval/<model>/<split>.parquet) of the string task")
    responses = _categorised(samples, a.levels)  # parse every row once for both tables
    table = _shares(responses)
    print((100 * table.pivot(index="level", columns="category", values="share")[list(CATEGORIES)])
          .round(1).to_string())
    stops = _stops(responses)
    print("\nof the innermost-first answers, % that answer right after that step (stopped) and % whose "
          "step value is right (step_right):")
    print((100 * stops.set_index("level")[["stopped_share", "step_right_share"]]).round(1)
          .rename(columns=lambda c: c.removesuffix("_share")).to_string())
    if a.out:
        from fgx.io import write_text
        write_text(table.to_csv(index=False), a.out)  # atomically
    return 0


if __name__ == "__main__":
    sys.exit(main())
