"""The findings on arithmetic chains, checked against the arithmetic figure tables by the string findings'
rules (fgx.analysis.findings): findings 1-3 (``arithmetic_composition``) and the transfer of string
composition (``arithmetic_transfer``, the paper's Table 1 design). The paper has no arithmetic numbers: its
column says what the string task's finding says.

- 1. RL on Level 1 stays within ``NEAR_BASE`` of the Stage-1 model at every level >= 3: *holds*, else *no*.
- 2. RL on Level 2 − RL on Level 1 at Level 3: *holds* at a lead of at least ``HOLDS_LEAD`` with the two
  models' own intervals apart, *partly* when resolved (paired interval clear of zero) but smaller, *no*
  otherwise; at Level 4: *holds* when resolved.
- 3. RL on Level 2 − the last iterative-RFT iteration at Level 3: *holds* when resolved.
- Transfer: the Multi-Base + RL on string Levels 1+2 against the Multi-Base + RL on Level 1 and against the
  Multi-Base itself, pooled over the transfer levels: *holds* when it leads both, resolved; *partly* when it
  leads both, not both resolved; *no* otherwise.
A lead in the paper's direction that is not resolved is *partly* at Level 4, for finding 3 and for the
transfer, and *no* at Level 3 (as on strings).
"""

from __future__ import annotations

from typing import Mapping

from .models import ARITHMETIC, MULTI, STAGE1_MODEL

# the string findings' thresholds (fgx.analysis.findings.HOLDS_LEAD, NEAR_BASE; a test keeps them equal)
HOLDS_LEAD = 0.15
NEAR_BASE = 0.05
TABLES = ("arithmetic_composition", "arithmetic_transfer")
RL1, RL2 = (f"rl_{ARITHMETIC.prefix}{run}" for run in ("level1", "level2"))
BEST, OTHER = (f"rl_{MULTI.prefix}{run}" for run in ("level1to2", "level1"))
# (finding, README row name, paper column) in the order check() returns them
ROWS = (
    ("Arithmetic: RL on Level 1 stays near the Stage-1 model on Levels ≥ 3",
     "1. Arithmetic: RL Level 1 stays at Stage 1 (Levels 3–6)", "–"),
    ("Arithmetic: RL on Level 2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)",
     "2. Arithmetic: RL Level 2 − RL Level 1, Level 3", "–"),
    ("Arithmetic: RL on Level 2 − RL on Level 1 at Level 4", "2. Arithmetic: RL Level 2 − RL Level 1, Level 4", "–"),
    ("Arithmetic: RL on Level 2 − iterative RFT at Level 3", "3. Arithmetic: RL Level 2 − iterative RFT, Level 3",
     "–"),
    ("Transfer to arithmetic: Multi-Base + string RL L1+2 the best model on the transfer levels",
     "5. Arithmetic transfer: Multi-Base + RL L1+2 best on Levels 2–4", "–"),
)
PAPERS = ("near 0 on strings", "≈ +25 on strings", "≈ +14 on strings", "RFT ≤ 2.6 % on strings",
          "Countdown: 35 % vs 17–20 %")


def _pts(x: float) -> str:
    return f"{round(100 * x, 1) + 0.0:+.1f}"


def _ci(row) -> str:
    return f"[{100 * row['ci_low']:.1f}, {100 * row['ci_high']:.1f}]"


def _rows(tables: Mapping, figure: str, kind: str, a: str, b: str = ""):
    df = tables.get(figure)
    if df is None:
        return {}
    df = df.assign(levels=df["levels"].astype(str), b=df["b"].fillna("").astype(str))
    sub = df[(df["kind"] == kind) & (df["a"] == a) & (df["b"] == b)]
    return {lv: r for lv, r in zip(sub["levels"], sub.to_dict("records"))}


def _resolved(r) -> str:
    return "holds" if r["ci_low"] > 0 else ("partly" if r["value"] > 0 else "no")


def _difference(r) -> str:
    return f"{_pts(r['value'])} {_ci(r)} ({100 * r['a_value']:.1f} vs {100 * r['b_value']:.1f} %)"


def _full_traces(tables: Mapping, fig: str, a: str, b: str, level: str) -> str:
    """"full traces 12.5 vs 0.0 %": the share of each model's answers at ``level`` that write every step of
    the chain right (the table's ``full_trace``), so a lead that no composing answer makes shows as one; ""
    where the table has no such column."""
    shares = [_rows(tables, fig, "pass@1", m).get(level, {}).get("full_trace") for m in (a, b)]
    if any(v is None or v != v for v in shares):
        return ""
    return f"full traces {100 * shares[0]:.1f} vs {100 * shares[1]:.1f} %"


def _add_traces(text: str, traces: str, sep: str) -> str:
    return f"{text}{sep}{traces}" if traces else text


def check(tables: Mapping) -> list[dict]:
    """One row per finding (fgx.tasks.family.Findings): finding, paper, measured, verdict, short."""
    out = []

    def add(i, measured, verdict, short=None):
        out.append({"finding": ROWS[i][0], "paper": PAPERS[i], "measured": measured, "verdict": verdict,
                    "short": short if short is not None else measured.split(" (")[0]})

    fig = "arithmetic_composition"
    c = _rows(tables, fig, "difference", RL1, STAGE1_MODEL)
    far = {lv: r for lv, r in c.items() if int(lv) >= 3}
    if far:
        text = ", ".join(f"L{lv} {_pts(r['value'])}" for lv, r in far.items())
        add(0, text, "holds" if max(abs(r["value"]) for r in far.values()) <= NEAR_BASE else "no")
    else:
        add(0, "not run", "not run")
    c = _rows(tables, fig, "difference", RL2, RL1)
    if "3" in c:
        r, own2, own1 = c["3"], _rows(tables, fig, "pass@1", RL2).get("3"), _rows(tables, fig, "pass@1", RL1).get("3")
        apart = own2 is not None and own1 is not None and own2["ci_low"] > own1["ci_high"]
        traces = _full_traces(tables, fig, RL2, RL1, "3")
        add(1, _add_traces(_difference(r), traces, "; "),
            "holds" if r["value"] >= HOLDS_LEAD and apart else "partly" if r["ci_low"] > 0 else "no",
            _add_traces(f"{_pts(r['value'])} {_ci(r)}", traces, ", "))
    else:
        add(1, "not run", "not run")
    if "4" in c:
        traces = _full_traces(tables, fig, RL2, RL1, "4")
        add(2, _add_traces(_difference(c["4"]), traces, "; "), _resolved(c["4"]),
            _add_traces(f"{_pts(c['4']['value'])} {_ci(c['4'])}", traces, ", "))
    else:
        add(2, "not run", "not run")
    df = tables.get(fig)
    rft = sorted({b for b in (df["b"].dropna() if df is not None else []) if str(b).startswith("rft_arithmetic_iter")},
                 key=lambda m: int(m.rsplit("iter", 1)[1]))
    c = _rows(tables, fig, "difference", RL2, rft[-1]) if rft else {}
    if "3" in c:
        traces, lead = _full_traces(tables, fig, RL2, rft[-1], "3"), f"{_pts(c['3']['value'])} {_ci(c['3'])}"
        add(3, _add_traces(f"{lead} (RFT {100 * c['3']['b_value']:.1f} %)", traces, "; "), _resolved(c["3"]),
            _add_traces(lead, traces, ", "))
    else:
        add(3, "not run", "not run")
    out.append(_transfer(tables))
    return out


def _transfer(tables: Mapping) -> dict:
    fig = "arithmetic_transfer"
    df = tables.get(fig)
    pooled = sorted({str(lv) for lv in df["levels"] if "-" in str(lv)}) if df is not None else []
    versus = {b: _rows(tables, fig, "difference", BEST, b).get(pooled[0]) if pooled else None
              for b in (OTHER, STAGE1_MODEL)}
    if not pooled or any(r is None for r in versus.values()):
        return {"finding": ROWS[4][0], "paper": PAPERS[4], "measured": "not run", "verdict": "not run",
                "short": "not run"}
    acc = {m: _rows(tables, fig, "pass@1", m).get(pooled[0]) for m in (STAGE1_MODEL, OTHER, BEST)}
    shares = ", ".join(f"{name} {100 * acc[m]['value']:.1f} %" for m, name in
                       ((STAGE1_MODEL, "Multi-Base"), (OTHER, "+RL L1"), (BEST, "+RL L1+2")) if acc[m])
    atomic = _rows(tables, fig, "pass@1", STAGE1_MODEL).get("1")
    text = (f"Levels {pooled[0]}: {shares}; +RL L1+2 − +RL L1 {_pts(versus[OTHER]['value'])} {_ci(versus[OTHER])}"
            f", − Multi-Base {_pts(versus[STAGE1_MODEL]['value'])} {_ci(versus[STAGE1_MODEL])}")
    if atomic:
        text += f" (Multi-Base at Level 1 {100 * atomic['value']:.1f} %)"
    ahead = all(r["value"] > 0 for r in versus.values())
    verdict = "holds" if all(r["ci_low"] > 0 for r in versus.values()) else ("partly" if ahead else "no")
    return {"finding": ROWS[4][0], "paper": PAPERS[4], "measured": text, "verdict": verdict,
            "short": f"{shares} ({'+' if versus[OTHER]['value'] >= 0 else ''}"
                     f"{100 * versus[OTHER]['value']:.1f} over +RL L1)"}


README = tuple((row[1], row[2]) for row in ROWS)
