"""Transfer to arithmetic chains (the paper's Table 1 design, arithmetic as the target): held-out pass@1 on
arithmetic Levels 2-4 of the Multi-Base (the arithmetic Stage-1 model: string and arithmetic Level-1 data,
no arithmetic composition) and of the string-task RL runs from it (RL on string Level 1, Level 1+2), none
of them ever trained on an arithmetic composition.

Rows as :mod:`fgx.figures.arithmetic_composition`'s (pass@1 with how the responses step, and paired
differences), per level of ``arithmetic.transfer_levels``, pooled over them (``levels`` ``2-4``: the
finding's number), and at Level 1, the Multi-Base's atomic skill. Inputs: the models' evaluations on the
arithmetic test set (``results/eval/{model}/arithmetic_test.parquet``, the same files the composition figure
reads for the Multi-Base). Settings: ``models``, ``pairs``, ``levels`` ([min, max]), ``bootstrap``, ``ci``,
``bootstrap_seed``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from fgx.figures.arithmetic_composition import DIFFERENCE, PASS1, build_table, eval_inputs
from fgx.figures.style import setup
from fgx.plan.figures import FigureSpec, bootstrap_settings
from fgx.plan.models import rl_model
from fgx.tasks.arithmetic.models import MULTI, STAGE1_MODEL

LABELS = {STAGE1_MODEL: "Multi-Base", "rl_arithmetic_multi_level1": "Multi-Base + RL L1 (strings)",
          "rl_arithmetic_multi_level2": "Multi-Base + RL L2 (strings)",
          "rl_arithmetic_multi_level1to2": "Multi-Base + RL L1+2 (strings)"}


def label(model: str) -> str:
    return LABELS.get(model, model)


def pooled(levels) -> str:
    """The name of the pooled transfer levels: ``2-4``."""
    return f"{levels[0]}-{levels[1]}"


def models(config: Mapping) -> list[str]:
    return [STAGE1_MODEL, *(rl_model(run, MULTI.name) for run in MULTI.runs(config))]


def pairs(config: Mapping) -> list[list[str]]:
    """Each string RL run from the Multi-Base against it, and Level 1+2 against Level 1 (the paper's 35 % vs
    20 %), among those the config trains."""
    runs = [m for m in models(config) if m != STAGE1_MODEL]
    out = [[m, STAGE1_MODEL] for m in runs]
    best, other = "rl_arithmetic_multi_level1to2", "rl_arithmetic_multi_level1"
    return out + ([[best, other]] if {best, other} <= set(runs) else [])


def spec_settings(config: Mapping, figure: str) -> dict:
    return {**bootstrap_settings(config, figure), "models": models(config), "pairs": pairs(config),
            "levels": list(config["arithmetic"]["transfer_levels"])}


SPEC = FigureSpec(lambda config: eval_inputs(config, models(config)), settings=spec_settings,
                  planned=lambda config: config["arithmetic"]["enabled"] and bool(MULTI.runs(config)))


def table(inputs, settings) -> pd.DataFrame:
    lo, hi = settings["levels"]

    def groups(levels):
        inside = [lv for lv in levels if lo <= lv <= hi]
        return [(str(lv), [lv]) for lv in sorted({1, *inside}) if lv in levels] + [(pooled((lo, hi)), inside)]

    return build_table(inputs, settings, groups, "arithmetic_transfer")


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt

    setup()
    acc = df[df["kind"] == PASS1]
    groups = list(dict.fromkeys(acc["levels"]))
    models = list(dict.fromkeys(acc["a"]))
    colours = plt.get_cmap("tab10").colors
    width = 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(max(6.5, 1.4 * len(groups) + 2.5), 4.2))
    x = np.arange(len(groups))
    for i, model in enumerate(models):
        m = acc[acc["a"] == model].set_index("levels").reindex(groups)
        err = 100 * np.vstack([m["value"] - m["ci_low"], m["ci_high"] - m["value"]]).astype(float).clip(0)
        pos = x + (i - (len(models) - 1) / 2) * width
        ax.bar(pos, 100 * m["value"], width, yerr=err, capsize=2, color=colours[i % len(colours)], label=label(model))
        for p, v, top in zip(pos, 100 * m["value"], 100 * m["ci_high"]):
            if np.isfinite(v):
                ax.text(p, (top if np.isfinite(top) else v) + 0.5, f"{v:.1f}", ha="center", va="bottom", fontsize=5.5)
    names = {g: f"Level {g}" + ("\n(atomic)" if g == "1" else "") if "-" not in g else f"Levels {g}\n(pooled)"
             for g in groups}
    ax.set_xticks(x, [names[g] for g in groups])
    ax.set_ylabel("pass@1 (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7)
    best = df[(df["kind"] == DIFFERENCE) & (df["levels"].str.contains("-"))]
    lines = [f"{label(r.a)} − {label(r.b)}: {100 * r.value:+.1f} [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]"
             for r in best.itertuples()]
    ax.set_title("\n".join(["Transfer to arithmetic chains (no arithmetic composition trained); pooled levels, paired "
                            "differences in points (95 % CI):", *lines]), fontsize=7)
    fig.tight_layout()
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
