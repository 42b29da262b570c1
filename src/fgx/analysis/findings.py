"""The paper's findings, checked against one or more runs' figure tables.

Reads the CSVs the `figure` rule writes (``figures/passk_level_curve.csv``, ``model_contrasts.csv``,
``rft_vs_rl.csv``, ``function_transfer.csv``, ``rl_level_accuracy.csv``, and those a task family's findings
read, such as ``countdown_transfer.csv``; a missing file or model leaves its findings "not run") and prints
Markdown tables: pass@1 per model and level, each of the paper's findings beside the paper's number, with
what each run measured and a verdict computed by a fixed rule (not by eye), and (where a run has
``function_transfer.csv``) each contrast on the held-out functions beside the same contrast on new
compositions of the train functions, with no verdict: a diagnostic of how much of an RL gain is learnt
per function. Verdicts:

- *holds*: the finding as the paper states it; for "RL on Level 2 beats RL on Level 1 at Level 3"
  that is a lead of at least ``HOLDS_LEAD`` (15 points; the paper's is about 25) with the two models' own
  intervals apart, and at Level 4 on the prompts only a full trace solves a resolved lead of at least
  ``HOLDS_FULL_TRACE_LEAD`` (5 points; the paper's RL Level 2 solves about 15 %);
- *partly*: the paper's direction, short of *holds*: at Level 3 a resolved lead (paired interval clear of
  zero) below 15 points or with the intervals overlapping; elsewhere a positive difference that is smaller
  than *holds* asks or not resolved; or holding at some levels and not at others;
- *no*: not in the paper's direction (at Level 3 also a lead that is not resolved).

The curves of Fig. 2 (held-out accuracy during RL, ``rl_level_accuracy.csv``) are read the same way: under RL
on Level 2, Level 2 and Level 3 rise from step 0 to the last step by at least ``FIG2_RISE`` (holds; the paired
interval of the change above zero but the rise smaller: partly), and under RL on Level 1 every point at
Levels ≥ 3 lies inside the band of its level's step-0 point (holds).

Differences are paired (both models on the same test prompts; ``figures/model_contrasts.csv``), in
points of pass@1. Several runs (seeds) side by side::

    python -m fgx.analysis.findings figures/ ../seed1/figures/ --labels "seed 0" "seed 1" [--out findings.md]

One run's verdicts are also a DAG target, ``results/analysis/findings.md`` (rule ``findings``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from fgx.plan import paths
from fgx.plan.figures import (ALL_PROMPTS, FULL_TRACE_PROMPTS, FULL_TRACE_SET_PROMPTS, PASSK_ALL_PROMPTS,
                              findings_tables)
from fgx.plan.models import RFT_ITER
from fgx.tasks.registry import families, family

HOLDS_LEAD = 0.15       # "holds" at Level 3: RL L2 - RL L1 >= 15 points, the paper's lead being ~25
NEAR_BASE = 0.05        # "RL on Level 1 stays near the base": within 5 points at every level >= 3
HOLDS_FULL_TRACE_LEAD = 0.05  # "holds" on the full-trace Level-4 prompts: >= 5 points, ~a third of the
                              # paper's Level-4 lead (paper_lead("rl_level2", 4): RL L2 ~15 % - RL L1 ~1 %)
FIG2_RISE = {2: 0.20, 3: 0.15}  # "holds" in Fig. 2: RL on Level 2 lifts held-out Level 2 (3) by >= 20 (15) points
PASS1_MODELS = {"stage1": "Stage-1 base", "rl_level1": "RL Level 1", "rl_level2": "RL Level 2",
                "rl_level1to2": "RL Level 1+2"}

PAPER_MODEL = "Llama-3.1-8B-Instruct"  # the paper's model, as config.paper.yaml names it

# The paper's pass@1 (%) at Levels 3 and 4 (arXiv 2509.25123, Figs. 2-3; read off the plots, so approximate):
# RL on Level 1 stays at the Stage-1 base, RL on Level 2 (and on Level 1+2) reaches ~30 / ~15, iterative RFT
# stays at or below 2.6 % on Level 3. Every paper number the findings and the README's table quote comes from here.
PAPER_LEVEL34 = {"stage1": (5, 1), "rl_level1": (5, 1), "rl_level2": (30, 15), "rl_level1to2": (30, 15)}
PAPER_RFT_LEVEL3_MAX = 2.6
# Fig. 5: the pass@k gap of RL on Level 1+2 over the base at Level 5, from k = 1 to k = 1024 (points)
PAPER_PASSK_GAP_LEVEL5 = {"k": 1024, "gap_k1": 4, "gap_kmax": 25}
PAPER_RFT = f"RFT ≤ {PAPER_RFT_LEVEL3_MAX} % (RL L2 ≈ {PAPER_LEVEL34['rl_level2'][0]} %)"
PAPER_FULL_TRACE = f"RL L2 ≈ {PAPER_LEVEL34['rl_level2'][1]} % at Level 4"
PAPER_PASSK = (f"Level 5: {PAPER_PASSK_GAP_LEVEL5['gap_k1']} → ~{PAPER_PASSK_GAP_LEVEL5['gap_kmax']} points "
               f"(k 1 → {PAPER_PASSK_GAP_LEVEL5['k']})")


def paper_lead(model: str, level: int, *, short: bool = False) -> str:
    """The paper's lead of ``model`` over RL on Level 1 at ``level`` (3 or 4): "≈ +<lead> (<from> → <to> %)"."""
    i = (3, 4).index(level)
    a, b = PAPER_LEVEL34[model][i], PAPER_LEVEL34["rl_level1"][i]
    return f"≈ +{a - b}" if short else f"≈ +{a - b} ({b} → {a} %)"


def last_rft_iteration(models) -> str | None:
    """The iterative-RFT model of the highest iteration among ``models`` (rft_level2_iter10 after iter2)."""
    iters = [m for m in models if RFT_ITER.match(m)]
    return max(iters, key=lambda m: int(RFT_ITER.match(m)[1])) if iters else None


def load_tables(files: Sequence[str | Path]) -> dict[str, pd.DataFrame]:
    """One run's figure CSVs given as files (the `findings` rule's inputs), keyed by figure name."""
    tables = {}
    for path in map(Path, files):
        name = paths.parse(paths.FIGURE_CSV, path)["figure"] if path.suffix == ".csv" else ""
        if name not in findings_tables():
            raise ValueError(f"{path}: not one of the figure tables the findings read ({', '.join(findings_tables())})")
        tables[name] = pd.read_csv(path)
    return tables


def load_run(figures_dir: str | Path) -> dict[str, pd.DataFrame]:
    """The figure CSVs present in ``figures_dir`` (absent ones are left out)."""
    d = Path(figures_dir)
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: no such directory; pass the figures/ directory of a run")
    tables = load_tables([d / f"{name}.csv" for name in findings_tables() if (d / f"{name}.csv").exists()])
    if not tables:
        raise FileNotFoundError(f"{d}: none of {', '.join(n + '.csv' for n in findings_tables())}; build them with "
                                "`snakemake figures/passk_level_curve.pdf figures/model_contrasts.pdf ...`")
    return tables


def points(x: float) -> str:
    return f"{round(100 * x, 1) + 0.0:+.1f}"  # + 0.0: a difference that rounds to zero reads +0.0, not -0.0


def _ci(lo: float, hi: float) -> str:
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def pass_at_1(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """pass@1 per model and level (rows model, level, accuracy, ci_low, ci_high): the pass@k table's
    k = 1 rows, the contrast table's own intervals for the models the pass@k figure does not draw, and
    the last iterative-RFT iteration from rft_vs_rl."""
    cols = ["model", "level", "accuracy", "ci_low", "ci_high"]
    rows = []
    passk = tables.get("passk_level_curve")
    if passk is not None:
        if "prompts" in passk:  # the whole test set, not the many-samples subset
            passk = passk[passk["prompts"] == PASSK_ALL_PROMPTS]
        at1 = passk[passk["k"] == 1]
        rows.append(at1.rename(columns={"pass_at_k": "accuracy"})[cols])
    contrasts = tables.get("model_contrasts")
    if contrasts is not None and "a_ci_low" in contrasts:
        every = contrasts[contrasts["prompts"] == ALL_PROMPTS] if "prompts" in contrasts else contrasts
        for side in ("a", "b"):
            own = every[[side, "level", f"{side}_accuracy", f"{side}_ci_low", f"{side}_ci_high"]].set_axis(cols, axis=1)
            rows.append(own[own["ci_low"].notna()])
    rft = tables.get("rft_vs_rl")
    if rft is not None:
        last = last_rft_iteration(rft["model"].unique())
        if last:
            rows.append(rft[rft["model"] == last][["model", "level", "accuracy", "ci_low", "ci_high"]])
    if not rows:
        return pd.DataFrame(columns=cols)
    # a model in several tables: the same metrics table's numbers in each; the first one stays
    return pd.concat(rows, ignore_index=True).drop_duplicates(["model", "level"]).reset_index(drop=True)


def contrast_rows(tables, a: str, b: str, prompts: str = ALL_PROMPTS) -> pd.DataFrame:
    """The contrast table's rows of ``a`` - ``b`` on one prompt set, by level."""
    c = tables.get("model_contrasts")
    if c is None:
        return pd.DataFrame()
    if "prompts" in c:
        c = c[c["prompts"] == prompts]
    elif prompts != ALL_PROMPTS:
        return pd.DataFrame()
    return c[(c["a"] == a) & (c["b"] == b)].set_index("level")


def _lead(tables, a: str, level: int, strict: bool) -> tuple[str, str]:
    """a - RL Level 1 at ``level``: (measured text, verdict). ``strict``: a lead >= HOLDS_LEAD with
    own intervals apart is what "holds" means; otherwise a resolved lead is enough."""
    c = contrast_rows(tables, a, "rl_level1")
    if level not in c.index:
        return "not run", "not run"
    r = c.loc[level]
    text = (f"{points(r['diff'])} {_ci(r['ci_low'], r['ci_high'])} "
            f"({100 * r['a_accuracy']:.1f} vs {100 * r['b_accuracy']:.1f} %)")
    resolved = r["ci_low"] > 0
    if not strict:
        return text, "holds" if resolved else ("partly" if r["diff"] > 0 else "no")
    p1 = pass_at_1(tables).set_index(["model", "level"])
    apart = (a, level) in p1.index and ("rl_level1", level) in p1.index and (
        p1.loc[(a, level), "ci_low"] > p1.loc[("rl_level1", level), "ci_high"])
    if r["diff"] >= HOLDS_LEAD and apart:
        return text, "holds"
    if resolved:
        why = "lead below +15 points" if r["diff"] < HOLDS_LEAD else "own intervals overlap"
        return f"{text}; {why}", "partly"
    return text, "no"


RFT_FINDING = "RL on Level 2 − iterative RFT at Level 3"
LEVEL4_FINDING = "RL on Level 2 − RL on Level 1 at Level 4"  # every Level-4 prompt

# The rows of findings 1-3 as the paper states them (Levels 3 and 4 on every prompt), not their refinements
# (the full-trace prompts, Levels >= 5): what "findings 1-3 hold" means wherever a run is summed up.
CORE_FINDINGS = (
    "RL on Level 1 stays near the Stage-1 base on Levels ≥ 3",
    "RL on Level 2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)",
    LEVEL4_FINDING,
    "RL on Level 1+2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)",
    "RL on Level 1+2 − RL on Level 1 at Level 4",
    RFT_FINDING,
)
FULL_TRACE_FINDING = "RL on Level 2 − RL on Level 1 at Level 4, prompts only a full trace solves"
DEEP_LEVELS_FINDING = "RL on Level 2 − RL on Level 1 above zero at Levels ≥ 5"


def core_findings_hold(rows: Sequence[Mapping]) -> bool:
    """Whether every row of findings 1-3 (``CORE_FINDINGS``) in :func:`check`'s output says "holds"."""
    verdicts = {r["finding"]: r["verdict"] for r in rows}
    return all(verdicts.get(name) == "holds" for name in CORE_FINDINGS)


def check(tables: Mapping[str, pd.DataFrame]) -> list[dict]:
    """One row per finding: finding, paper, measured, verdict; finding 4's also ``k_max`` and ``as_paper``
    (per level: the largest k compared, and whether the gap moved as the paper's); a task family's rows also
    the README cell's key number, ``short``."""
    out = []

    def add(finding, paper, measured, verdict, **detail):
        out.append({"finding": finding, "paper": paper, "measured": measured, "verdict": verdict, **detail})

    # 1. RL on Level 1 stays near the base on Levels >= 3
    c = contrast_rows(tables, "rl_level1", "stage1")
    hard = c[c.index >= 3] if len(c) else c
    if len(hard):
        worst = hard["diff"].abs().max()
        text = ", ".join(f"L{lv} {points(r['diff'])}" for lv, r in hard.iterrows())
        add("RL on Level 1 stays near the Stage-1 base on Levels ≥ 3", "near 0 on Levels 3–6", text,
            "holds" if worst <= NEAR_BASE else "no")
    else:
        add("RL on Level 1 stays near the Stage-1 base on Levels ≥ 3", "near 0 on Levels 3–6", "not run", "not run")

    # 2. RL on Level 2 (and on Level 1+2) beats RL on Level 1 at Levels 3 and 4, above zero further out
    for model, name in (("rl_level2", "RL on Level 2"), ("rl_level1to2", "RL on Level 1+2")):
        text, verdict = _lead(tables, model, 3, strict=True)
        add(f"{name} − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)",
            paper_lead(model, 3) if model == "rl_level2" else "clearly ahead", text, verdict)
        text, verdict = _lead(tables, model, 4, strict=False)
        add(f"{name} − RL on Level 1 at Level 4", paper_lead(model, 4) if model == "rl_level2" else "clearly ahead",
            text, verdict)
    # ... at Level 4 on the prompts only a full trace solves (composition, not a shorter trace)
    # (the full-trace test set where the run has one: many more such prompts than the test set holds)
    c = contrast_rows(tables, "rl_level2", "rl_level1", FULL_TRACE_SET_PROMPTS)
    if 4 not in c.index:
        c = contrast_rows(tables, "rl_level2", "rl_level1", FULL_TRACE_PROMPTS)
    name = FULL_TRACE_FINDING
    if 4 in c.index:
        r = c.loc[4]
        n = int(r["n_prompts"])
        where = f"the full-trace test set's {n}" if r["prompts"] == FULL_TRACE_SET_PROMPTS else f"{n} test"
        text = (f"{points(r['diff'])} {_ci(r['ci_low'], r['ci_high'])} (RL L2 {100 * r['a_accuracy']:.1f} %, "
                f"RL L1 {100 * r['b_accuracy']:.1f} % of {where} prompts)")
        if r["ci_low"] > 0 and r["diff"] >= HOLDS_FULL_TRACE_LEAD:
            add(name, PAPER_FULL_TRACE, text, "holds")
        elif r["ci_low"] > 0:
            add(name, PAPER_FULL_TRACE, f"{text}; lead below +5 points", "partly")
        else:
            add(name, PAPER_FULL_TRACE, text, "partly" if r["diff"] > 0 else "no")
    else:
        add(name, PAPER_FULL_TRACE, "not run", "not run")
    c = contrast_rows(tables, "rl_level2", "rl_level1")
    far = c[c.index >= 5] if len(c) else c
    if len(far):
        above = int((far["diff"] > 0).sum())
        add(DEEP_LEVELS_FINDING, "above zero",
            ", ".join(f"L{lv} {points(r['diff'])}" for lv, r in far.iterrows()),
            "holds" if above == len(far) else ("partly" if above else "no"))
    else:
        add(DEEP_LEVELS_FINDING, "above zero", "not run", "not run")

    # 3. iterative RFT stays below RL on Level 2 at Level 3
    contrasts = tables.get("model_contrasts")
    rft = last_rft_iteration(set(contrasts["b"]) if contrasts is not None else ())
    c = contrast_rows(tables, "rl_level2", rft) if rft else pd.DataFrame()
    if 3 in c.index:
        r = c.loc[3]
        verdict = "holds" if r["ci_low"] > 0 else ("partly" if r["diff"] > 0 else "no")
        add(RFT_FINDING, PAPER_RFT,
            f"{points(r['diff'])} {_ci(r['ci_low'], r['ci_high'])} (RFT {100 * r['b_accuracy']:.1f} %)", verdict)
    else:
        add(RFT_FINDING, PAPER_RFT, "not run", "not run")

    # 4. pass@k: the RL Level 1+2 - base gap grows with k at Levels >= 3, shrinks at Levels 1-2; per level
    # the prompts sampled most (the many-samples subset where a run has it, else every test prompt)
    passk = tables.get("passk_level_curve")
    if passk is not None and {"rl_level1to2", "stage1"} <= set(passk["model"]):
        if "prompts" not in passk:
            passk = passk.assign(prompts=PASSK_ALL_PROMPTS)
        parts, matches, levels, kmaxes, k_max, as_paper = [], 0, sorted(passk["level"].unique()), set(), {}, {}
        for lv in levels:
            at = passk[passk["level"] == lv]
            pair = at[at["model"].isin(["rl_level1to2", "stage1"])]
            sets = [ps for ps in pair["prompts"].unique() if set(pair[pair["prompts"] == ps]["model"]) ==
                    {"rl_level1to2", "stage1"}]
            use = max(sets, key=lambda ps: pair[pair["prompts"] == ps]["k"].max())
            p = pair[pair["prompts"] == use].set_index(["model", "k"])["pass_at_k"]
            kmax = int(pair[pair["prompts"] == use]["k"].max())
            kmaxes.add(kmax)
            g1 = p[("rl_level1to2", 1)] - p[("stage1", 1)]
            gk = p[("rl_level1to2", kmax)] - p[("stage1", kmax)]
            ok = gk > g1 if lv >= 3 else gk < g1
            matches += bool(ok)
            k_max[int(lv)], as_paper[int(lv)] = kmax, bool(ok)
            k_note = f" (k {kmax})" if len(kmaxes) > 1 or kmax > 16 else ""
            parts.append(f"L{lv} {points(g1)} → {points(gk)}{k_note}")
        ks = " / ".join(str(k) for k in sorted(kmaxes))
        add(f"pass@k gap (RL L1+2 − base, k 1 → {ks}) grows at Levels ≥ 3, shrinks at 1–2",
            PAPER_PASSK,
            f"{', '.join(parts)} ({matches} of {len(levels)} levels as the paper)",
            "holds" if matches == len(levels) else ("partly" if matches else "no"), k_max=k_max, as_paper=as_paper)
    else:
        add("pass@k gap (RL L1+2 − base) grows at Levels ≥ 3, shrinks at 1–2", PAPER_PASSK,
            "not run", "not run")

    # 5. and on: each task family's own findings (the transfer to Countdown: Multi-Base + RL L1+2 best on
    # 3 numbers); then Fig. 2's curves (README_FINDINGS and the families' README rows index the rows before them)
    for f in families():
        if f.findings:
            out += family_check(f.name)(tables)
    out += curve_rows(tables)
    return out


def family_check(name: str) -> Callable[[Mapping], list[dict]]:
    """Task family ``name``'s findings check (its record's ``findings.check``)."""
    found = family(name).findings
    if found is None:
        raise ValueError(f"task family {name} has no findings; those with findings: "
                         f"{', '.join(f.name for f in families() if f.findings)}")
    module, _, function = found.check.partition(":")
    return getattr(importlib.import_module(module), function)


FIG2_RISE_FINDING = "Fig. 2: RL on Level 2, held-out Level {level} from step 0 to the last step (holds at ≥ +{pts})"
FIG2_FLAT_FINDING = "Fig. 2: RL on Level 1, held-out Levels ≥ 3 inside their step-0 band at every step"


def curve_rows(tables: Mapping[str, pd.DataFrame]) -> list[dict]:
    """Fig. 2's rows of :func:`check`: the RL curves' change from step 0 (``rl_level_accuracy.csv``, with its
    bands: an older table without them is "not run")."""
    curves = tables.get("rl_level_accuracy")
    banded = curves is not None and {"ci_low", "change", "change_ci_low"} <= set(curves.columns)
    rows = []
    for level, rise in FIG2_RISE.items():
        name = FIG2_RISE_FINDING.format(level=level, pts=round(100 * rise))
        paper = paper_lead("rl_level2", 3) if level == 3 else "rises"
        c = curves[(curves["model"] == "rl_level2") & (curves["level"] == level)] if banded else pd.DataFrame()
        if c.empty:
            rows.append({"finding": name, "paper": paper, "measured": "not run", "verdict": "not run"})
            continue
        first, last = c.loc[c["step"].idxmin()], c.loc[c["step"].idxmax()]
        text = (f"{points(last['change'])} {_ci(last['change_ci_low'], last['change_ci_high'])} "
                f"({100 * first['accuracy']:.1f} → {100 * last['accuracy']:.1f} % at step {int(last['step'])}, "
                f"{int(last['n_prompts'])} prompts × {int(last['n_samples'])} samples)")
        resolved = last["change_ci_low"] > 0
        verdict = "holds" if resolved and last["change"] >= rise else ("partly" if resolved else "no")
        rows.append({"finding": name, "paper": paper, "measured": text, "verdict": verdict})
    c = curves[(curves["model"] == "rl_level1") & (curves["level"] >= 3)] if banded else pd.DataFrame()
    if c.empty:
        rows.append({"finding": FIG2_FLAT_FINDING, "paper": "flat", "measured": "not run", "verdict": "not run"})
        return rows
    parts, inside = [], 0
    for level, g in c.groupby("level"):
        start = g.loc[g["step"].idxmin()]
        off = g[(g["accuracy"] < start["ci_low"]) | (g["accuracy"] > start["ci_high"])]
        inside += off.empty
        worst = g.loc[(g["accuracy"] - start["accuracy"]).abs().idxmax()]
        parts.append(f"L{level} {points(worst['accuracy'] - start['accuracy'])} at most"
                     + (f", outside at step {', '.join(map(str, off['step'].astype(int)))}" if len(off) else ""))
    levels = c["level"].nunique()
    rows.append({"finding": FIG2_FLAT_FINDING, "paper": "flat", "measured": "; ".join(parts),
                 "verdict": "holds" if inside == levels else ("partly" if inside else "no")})
    return rows


def _model_name(model: str) -> str:
    return PASS1_MODELS.get(model, model.replace("rft_level2_iter", "iterative RFT, iteration "))


def pass1_markdown(runs: Sequence[tuple[str, Mapping]], levels: Sequence[int] = (1, 2, 3, 4)) -> str:
    """pass@1 (%) at ``levels`` per model, one column per run."""
    head = "| model | " + " | ".join(f"{label}: Levels {' / '.join(map(str, levels))}" for label, _ in runs) + " |"
    lines = [head, "|---" * (len(runs) + 1) + "|"]
    per_run = [pass_at_1(t).set_index(["model", "level"])["accuracy"] for _, t in runs]
    models = list(dict.fromkeys(m for p in per_run for m in p.index.get_level_values(0)))
    order = [m for m in PASS1_MODELS if m in models] + [m for m in models if m not in PASS1_MODELS]
    for m in order:
        name = _model_name(m)
        cells = [" / ".join(f"{100 * p[(m, lv)]:.1f}" if (m, lv) in p.index else "–" for lv in levels)
                 for p in per_run]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def transfer_markdown(runs: Sequence[tuple[str, Mapping]]) -> str:
    """Per contrast pair, its pass@1 differences on the held-out and on the train functions (levels of the
    function_transfer table), one column per run; "" when no run has the table."""
    tables = [t.get("function_transfer") for _, t in runs]
    if all(t is None for t in tables):
        return ""
    present = [t for t in tables if t is not None]
    pairs = list(dict.fromkeys((a, b) for t in present for a, b in zip(t["a"], t["b"])))
    levels = sorted({int(lv) for t in present for lv in t["level"]})
    head = "| pair | functions | " + " | ".join(f"{label}: Levels {' / '.join(map(str, levels))}"
                                              for label, _ in runs) + " |"
    lines = [head, "|---" * (len(runs) + 2) + "|"]
    def name(m: str) -> str:  # "Stage-1", not "Stage-1 base": the cell reads as a difference
        return "Stage-1" if m == "stage1" else _model_name(m)

    for a, b in pairs:
        for functions in ("held-out functions", "train functions"):
            cells = []
            for t in tables:
                rows = None if t is None else t[(t["a"] == a) & (t["b"] == b) & (t["functions"] == functions)]
                if rows is None or rows.empty:
                    cells.append("not run")
                    continue
                rows = rows.set_index("level")
                cells.append(" / ".join(points(rows.loc[lv, "diff"]) if lv in rows.index else "–" for lv in levels))
            lines.append(f"| {name(a)} − {name(b)} | {functions} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def findings_markdown(runs: Sequence[tuple[str, Mapping]], checker: Callable[[Mapping], list[dict]] = check) -> str:
    checked = [checker(t) for _, t in runs]
    head = f"| finding | paper ({PAPER_MODEL}) | " + " | ".join(label for label, _ in runs) + " |"
    lines = [head, "|---" * (len(runs) + 2) + "|"]
    for i, row in enumerate(checked[0]):
        cells = [f"**{c[i]['verdict']}**: {c[i]['measured']}" for c in checked]
        lines.append(f"| {row['finding']} | {row['paper']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# The README's results table: the short name of each finding (check()'s rows, in order) and the paper's number
# (the task families' rows follow: readme_findings)
README_FINDINGS = (
    ("1. RL Level 1 − Stage-1 base stays near 0 (Levels 3–6)", "near 0"),
    ("2. RL Level 2 − RL Level 1, Level 3", paper_lead("rl_level2", 3, short=True)),
    ("2. RL Level 2 − RL Level 1, Level 4", paper_lead("rl_level2", 4, short=True)),
    ("2. RL Level 1+2 − RL Level 1, Level 3", "clearly ahead"),
    ("2. RL Level 1+2 − RL Level 1, Level 4", "clearly ahead"),
    ("2. RL Level 2 − RL Level 1, Level 4, full-trace test set (prompts only a full trace solves)",
     paper_lead("rl_level2", 4, short=True) + " on all prompts"),
    ("2. RL Level 2 − RL Level 1 above 0 at Levels ≥ 5", "above 0"),
    ("3. RL Level 2 − iterative RFT, Level 3", f"RFT ≤ {PAPER_RFT_LEVEL3_MAX} %"),
    ("4. pass@k gap grows with k at Levels ≥ 3, shrinks at 1–2", "yes"),
)


def readme_findings() -> tuple[tuple[str, str, str | None], ...]:
    """The README row name, paper column and task family (None: the study's own row) of every row check()
    returns: the study's, then the families'."""
    return tuple((name, paper, None) for name, paper in README_FINDINGS) + tuple(
        (name, paper, family.name) for family in families() if family.findings
        for name, paper in family.findings.readme)


PAPER_PASS1 = {**{m: "– / – / " + " / ".join(f"~{v}" for v in lv) for m, lv in PAPER_LEVEL34.items()},
               "rft": f"– / – / ≤ {PAPER_RFT_LEVEL3_MAX} / –"}


def _level_span(levels: Sequence[int]) -> str:
    """[1, 2, 3, 4, 6] -> "L1–4, L6"."""
    spans: list[list[int]] = []
    for lv in sorted(levels):
        if spans and lv == spans[-1][-1] + 1:
            spans[-1].append(lv)
        else:
            spans.append([lv])
    return ", ".join(f"L{s[0]}–{s[-1]}" if len(s) > 1 else f"L{s[0]}" for s in spans)


def _short(row: dict) -> str:
    """A finding's verdict and its key number, for one table cell."""
    m = row["measured"]
    if row["verdict"] == "not run":
        return "not run"
    if "short" in row:  # a task family's row says its own key number
        return f"**{row['verdict']}** {row['short']}"
    key = m.split(" (")[0] if m.startswith(("+", "-", "−")) else m
    if key.startswith("L") and "," in key:  # per-level lists: keep them short
        key = key.split(" (")[0]
    if "of" in m and "levels as the paper" in m:
        key = m[m.rindex("(") + 1:-1].replace(" as the paper", "")
        if row.get("k_max"):  # which levels differ from the paper, and up to which k each level is compared
            off = [lv for lv, ok in row["as_paper"].items() if not ok]
            by_k = {}
            for lv, k in row["k_max"].items():
                by_k.setdefault(k, []).append(lv)
            key += (f" ({f'not {_level_span(off)}; ' if off else ''}k up to "
                    + ", ".join(f"{k} at {_level_span(lvs)}" for k, lvs in by_k.items()) + ")")
    return f"**{row['verdict']}** {key}"


def readme_markdown(runs: Sequence[tuple[str, Mapping]], infos: Sequence[Mapping], levels=(1, 2, 3, 4),
                    run_rows: bool = True) -> str:
    """The README's results table: pass@1 per model at ``levels``, each finding's verdict with its key number,
    and (``run_rows``) each run's machine and commit (``infos``: one dict per run, from its run.json; the main
    job's wall time is the README's timing block, measured alone on the machine). A task family's rows appear
    where a run holds one of its findings' tables: a family whose study runs apart (an overlay of its own,
    ``docs/results/<family>/``) has none before its runs are published; the study's own rows always appear."""
    labels = [label for label, _ in runs]
    lines = ["| | " + " | ".join(labels) + f" | paper ({PAPER_MODEL}) |", "|---" * (len(runs) + 2) + "|"]
    per_run = [pass_at_1(t).set_index(["model", "level"])["accuracy"] for _, t in runs]
    lv = " / ".join(map(str, levels))
    rft_names = [last_rft_iteration(p.index.get_level_values(0)) for p in per_run]
    for m in (*PASS1_MODELS, "rft"):
        cells = []
        for p, rft in zip(per_run, rft_names):
            key = rft if m == "rft" else m
            cells.append(" / ".join(f"{100 * p[(key, x)]:.1f}" if key and (key, x) in p.index else "–"
                                    for x in levels))
        name = "iterative RFT" if m == "rft" else PASS1_MODELS[m]
        lines.append(f"| pass@1 (%), {name}, Levels {lv} | " + " | ".join(cells) + f" | {PAPER_PASS1[m]} |")
    checked = [check(t) for _, t in runs]
    measured = {f.name for f in families() if f.findings and any(t in tables for _, tables in runs
                                                                   for t in f.findings.tables)}
    for i, (name, paper, owner) in enumerate(readme_findings()):
        if owner is None or owner in measured:
            lines.append(f"| {name} | " + " | ".join(_short(c[i]) for c in checked) + f" | {paper} |")
    if run_rows:
        lines.append("| machine | " + " | ".join(str(info.get("machine", "–")) for info in infos) + " | |")
        lines.append("| commit | " + " | ".join(str(info.get("commit", "–")) for info in infos) + " | |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.findings", description=__doc__.split("\n\n")[0])
    p.add_argument("figures", nargs="*", help="a run's figures/ directory (several: one column each)")
    p.add_argument("--tables", nargs="+", metavar="CSV",
                   help="instead of directories: one run's figure CSVs (what the `findings` rule passes)")
    p.add_argument("--labels", nargs="+", help="column labels, one per directory (default: the directories)")
    p.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3, 4], help="levels of the pass@1 table")
    p.add_argument("--family", help="only this task family's findings (results/analysis/findings_<family>.md)")
    p.add_argument("--out", help="write the Markdown here as well")
    p.add_argument("--readme", action="store_true",
                   help="print only the README's results table (each directory also holds run.json: machine, "
                        "wall time, commit)")
    a = p.parse_args(argv)
    if bool(a.figures) == bool(a.tables):
        p.error("give either figures/ directories or --tables CSV files (one run), not both or neither")
    if a.tables:
        labels = a.labels or ["this run"]
        if len(labels) != 1:
            p.error(f"--labels: {len(labels)} labels for one run (--tables); give one")
    else:
        labels = a.labels or a.figures
        if len(labels) != len(a.figures):
            p.error(f"--labels: {len(labels)} labels for {len(a.figures)} directories; give one per directory")
    try:
        runs = ([(labels[0], load_tables(a.tables))] if a.tables
                else [(label, load_run(d)) for label, d in zip(labels, a.figures)])
    except (FileNotFoundError, ValueError) as err:
        raise SystemExit(str(err))
    if a.readme:
        if a.tables:
            p.error("--readme reads figures/ directories with their run.json")
        import json

        infos = []
        for d in a.figures:
            info = Path(d) / "run.json"
            infos.append(json.loads(info.read_text()) if info.exists() else {})
        print(readme_markdown(runs, infos, a.levels))
        return 0
    if a.family:
        try:
            checker = family_check(a.family)
        except ValueError as err:
            raise SystemExit(str(err))
        text = (f"The findings of task family {a.family} (differences in points of pass@1, paired 95 % CIs)\n\n"
                f"{findings_markdown(runs, checker)}\n")
        print(text)
        if a.out:
            from fgx.io import write_text
            write_text(text, a.out)
        return 0
    text = (f"pass@1 (%), held-out test set\n\n{pass1_markdown(runs, a.levels)}\n\n"
            f"The paper's findings (differences in points of pass@1, paired 95 % CIs)\n\n{findings_markdown(runs)}\n")
    transfer = transfer_markdown(runs)
    if transfer:
        text += ("\nLearnt per function, or carried over? The same differences (points of pass@1) on new compositions "
                 "of the train functions (figures/function_transfer.csv; its CIs are there)\n\n" + transfer + "\n")
    print(text)
    if a.out:
        from fgx.io import write_text
        write_text(text, a.out)  # atomically
    return 0


if __name__ == "__main__":
    sys.exit(main())
