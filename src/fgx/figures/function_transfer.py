"""Do the RL gains carry over to held-out functions? The paired differences of ``model_contrasts``
(pass@1 of A minus B, paired bootstrap CI over prompts) on two test sets side by side:

- ``held-out functions``: the main test set (``results/eval/{model}/test.parquet``), compositions of
  the eval functions no Stage-2 model trains on (what the paper's claims are about);
- ``train functions``: ``results/eval/{model}/test_train_funcs.parquet``, new compositions of the
  functions Stage-2 RL and RFT train on (no expression of a training file; levels
  ``data.test_train_funcs_levels``).

A gain that is larger on the train functions is partly learnt per function (an atomic step that RL
made more reliable inside compositions), and only the rest transfers; the two bars at one level
separate the two. Levels: those of the train-functions set (the held-out side is cut to them).

Inputs: the eval parquets of both sets for every model of ``pairs`` (fgx.plan.paths.EVAL).
Settings: ``pairs`` ([[A, B], ...]; required),
``bootstrap`` (default 1000), ``ci`` (default 0.95), ``bootstrap_seed`` (default 0).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.model_contrasts import pair_contrast
from fgx.figures.style import label, setup
from fgx.plan import paths
from fgx.plan.comparisons import contrast_models, contrast_pairs
from fgx.plan.figures import FigureSpec, bootstrap_settings
from fgx.plan.splits import asks_for
from fgx.tasks.strings.splits import TEST_TRAIN_FUNCS

# the two test sets: split -> the label the table and the plot use
SETS = {"test": "held-out functions", TEST_TRAIN_FUNCS: "train functions"}
COLUMNS = ["a", "b", "functions", "level", "a_accuracy", "b_accuracy", "diff", "ci_low", "ci_high",
           "p_a_better", "n_prompts", "source", "config_hash", "source_b", "config_hash_b"]


def planned_inputs(config) -> list[str]:
    return [paths.fill(paths.EVAL, model=m, split=split) for split in SETS for m in contrast_models(config)]


def spec_settings(config, figure: str) -> dict:
    return {**bootstrap_settings(config, figure), "pairs": contrast_pairs(config)}


SPEC = FigureSpec(planned_inputs, settings=spec_settings,
                  planned=lambda config: bool(contrast_pairs(config)) and asks_for(config, TEST_TRAIN_FUNCS))


def table(inputs, settings) -> pd.DataFrame:
    settings = settings or {}
    evals: dict[tuple[str, str], pd.DataFrame] = {}
    for p in inputs:
        names = paths.parse(paths.EVAL, p)
        stem = names["split"]
        if stem not in SETS:
            raise ValueError(f"function_transfer: {p} is neither a test.parquet nor a test_train_funcs.parquet "
                             "evaluation (results/eval/<model>/<set>.parquet)")
        evals[(names["model"], stem)] = read_with_provenance(p, ("level", "correct"))
    train_levels = sorted({lv for (_, stem), df in evals.items() if stem == TEST_TRAIN_FUNCS
                           for lv in df["level"].unique()})
    rows = []
    for i, (a, b) in enumerate(settings["pairs"]):
        for j, stem in enumerate(SETS):
            missing = [m for m in (a, b) if (m, stem) not in evals]
            if missing:
                raise ValueError(f"function_transfer: pair {a} - {b} needs results/eval/{missing[0]}/{stem}.parquet "
                                 f"among the inputs (got {', '.join(map(str, inputs))})")
            ea, eb = evals[(a, stem)], evals[(b, stem)]
            if train_levels:
                ea, eb = ea[ea["level"].isin(train_levels)], eb[eb["level"].isin(train_levels)]
            rows.append(pair_contrast(ea, eb, a, b, settings, 2 * i + j).assign(functions=SETS[stem]))
    return pd.concat(rows, ignore_index=True)[COLUMNS]


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt

    setup()
    pairs = list(dict.fromkeys(zip(df["a"], df["b"])))
    levels = sorted(df["level"].unique())
    colours = {"held-out functions": "tab:blue", "train functions": "tab:orange"}
    fig, axes = plt.subplots(1, len(pairs), figsize=(2.9 * len(pairs) + 0.6, 3.4), squeeze=False, sharey=True)
    x = np.arange(len(levels))
    width = 0.38
    for ax, (a, b) in zip(axes[0], pairs):
        for i, functions in enumerate(SETS.values()):
            m = df[(df["a"] == a) & (df["b"] == b) & (df["functions"] == functions)].set_index("level").reindex(levels)
            err = np.vstack([m["diff"] - m["ci_low"], m["ci_high"] - m["diff"]]) * 100
            ax.bar(x + (i - 0.5) * width, 100 * m["diff"], width, yerr=err, capsize=1.5, color=colours[functions],
                   label=functions)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x, [f"L{lv}" for lv in levels])
        ax.set_title(f"{label(a)} − {label(b)}", fontsize=8)
    axes[0][0].set_ylabel("pass@1 difference (points)")
    axes[0][0].legend(fontsize=7, frameon=False)
    fig.suptitle("RL gains on new compositions of the train functions vs the held-out functions "
                 "(95 % paired bootstrap CI)", fontsize=9)
    fig.tight_layout()
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
