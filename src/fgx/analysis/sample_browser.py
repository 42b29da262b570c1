"""A self-contained HTML page for reading responses: model -> level -> failure category -> examples.

``render_html`` takes failure-mode tables (one per model, each from its task family's classifier:
fgx.analysis.failures) and shows, for every model, level and category, a few responses chosen
deterministically from ``seed``, each with its prompt, the response, the reason the classifier gave
and the reference trace. Everything is escaped; the page has no scripts and no external assets.
"""

from __future__ import annotations

import html
import random
from typing import Mapping, Sequence

from fgx.io import writable_text

MAX_CHARS = 6000  # longer prompts / responses are cut in the page (with a note)

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;color:#222;
padding:0 1em;line-height:1.4}
h1{font-size:1.5em}h2{border-bottom:2px solid #ccc;margin-top:2em}h3{margin-top:1.5em}
h4{margin:1.2em 0 .4em}
table.summary{border-collapse:collapse;margin:.5em 0 1.5em}
table.summary th,table.summary td{border:1px solid #ccc;padding:.2em .6em;text-align:right}
table.summary th:first-child,table.summary td:first-child{text-align:left}
.sample{border:1px solid #ddd;border-radius:6px;padding:.6em .8em;margin:.6em 0;background:#fafafa}
.meta{font-size:.85em;color:#555}.reason{font-size:.9em;margin:.3em 0}
pre{white-space:pre-wrap;word-break:break-all;background:#fff;border:1px solid #eee;padding:.4em;margin:.2em 0;
font-size:.85em;max-height:28em;overflow:auto}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:.6em}
.lab{font-size:.8em;font-weight:bold;color:#444}
.c-Correct{color:#1b7837}.c-Ignores{color:#666}.c-Incomplete{color:#b35806}.c-Incorrect{color:#762a83}
.c-Atomic{color:#b2182b}
nav a{margin-right:1em}
"""


def _e(text) -> str:
    return html.escape(writable_text("" if text is None else str(text)), quote=True)


def _cut(text) -> str:
    text = "" if text is None else str(text)
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS] + f"\n… [{len(text) - MAX_CHARS} more characters not shown]"


def _css_class(category: str) -> str:
    return "c-" + category.split()[0]


def _anchor(*parts) -> str:
    return "-".join("".join(ch if ch.isalnum() else "_" for ch in str(p)) for p in parts)


def _pick(n: int, k: int, seed: int, key: str) -> list[int]:
    """k of range(n), chosen by a generator seeded from (seed, key); sorted."""
    if n <= k:
        return list(range(n))
    return sorted(random.Random(f"{seed}|{key}").sample(range(n), k))


def _summary(name: str, df, categories: Sequence[str]) -> list[str]:
    total = len(df)
    out = ["<table class='summary'><tr><th>level</th><th>responses</th>"]
    out += [f"<th class='{_css_class(c)}'>{_e(c)}</th>" for c in categories]
    out.append("</tr>")
    levels = sorted(df["level"].dropna().unique().tolist()) if total else []
    for level in levels:
        sub = df[df["level"] == level]
        counts = sub["category"].value_counts()
        cells = "".join(f"<td>{int(counts.get(c, 0))} ({100 * counts.get(c, 0) / len(sub):.1f}%)</td>"
                        for c in categories)
        out.append(f"<tr><td><a href='#{_anchor(name, level)}'>Level {_e(level)}</a></td>"
                   f"<td>{len(sub)}</td>{cells}</tr>")
    out.append("</table>")
    return out


def _sample(row: Mapping) -> list[str]:
    step = row.get("step")
    step_txt = "" if step is None or step != step or str(step) == "<NA>" else f" · step {_e(step)}"
    return [
        "<div class='sample'>",
        f"<div class='meta'>prompt #{_e(row.get('prompt_index'))} · sample #{_e(row.get('sample_index'))}"
        f" · style {_e(row.get('style', ''))}{step_txt}</div>",
        f"<div class='reason'><b class='{_css_class(str(row.get('category', '')))}'>{_e(row.get('category'))}"
        f"</b>: {_e(row.get('reason'))}</div>",
        "<div class='lab'>Prompt</div>", f"<pre>{_e(_cut(row.get('prompt')))}</pre>",
        "<div class='cols'><div><div class='lab'>Response</div>",
        f"<pre>{_e(_cut(row.get('response')))}</pre></div>",
        "<div><div class='lab'>Reference trace</div>", f"<pre>{_e(_cut(row.get('truth')))}</pre></div></div>",
        "</div>",
    ]


def render_html(classified_df_by_model: Mapping, per_cell: int = 3, seed: int = 0,
                title: str = "fgx: sample responses by failure mode", categories: Sequence[str] = ()) -> str:
    """The page for ``{model: classify_eval(...) table}``; deterministic in (tables, per_cell, seed).
    ``categories``: the classifiers' categories in the order shown (default: those the tables hold, in
    order of appearance)."""
    if per_cell < 1:
        raise ValueError(f"per_cell must be >= 1, got {per_cell}")
    categories = list(dict.fromkeys([*categories, *(c for df in classified_df_by_model.values() if df is not None
                                                    for c in df["category"])]))
    parts = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
             f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>", f"<h1>{_e(title)}</h1>",
             "<p>Every response was classified by its task family's failure-mode classifier (rule-based; "
             "<code>fgx.analysis.failures</code> names it, its docstring defines the categories). For each model, "
             "level and category a few responses "
             f"are shown (at most {int(per_cell)}, drawn with seed {int(seed)}).</p>", "<nav>"]
    parts += [f"<a href='#{_anchor(m)}'>{_e(m)}</a>" for m in classified_df_by_model]
    parts.append("</nav>")
    for model, df in classified_df_by_model.items():
        parts.append(f"<h2 id='{_anchor(model)}'>{_e(model)}</h2>")
        if df is None or len(df) == 0:
            parts.append("<p>No responses.</p>")
            continue
        parts += _summary(model, df, categories)
        for level in sorted(df["level"].dropna().unique().tolist()):
            sub = df[df["level"] == level]
            parts.append(f"<h3 id='{_anchor(model, level)}'>{_e(model)} · Level {_e(level)}</h3>")
            for cat in categories:
                cell = sub[sub["category"] == cat]
                if cell.empty:
                    continue
                parts.append(f"<h4 class='{_css_class(cat)}'>{_e(cat)}: {len(cell)} of {len(sub)} "
                             f"({100 * len(cell) / len(sub):.1f}%)</h4>")
                records = cell.to_dict("records")
                for k in _pick(len(records), per_cell, seed, f"{model}|{level}|{cat}"):
                    parts += _sample(records[k])
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
