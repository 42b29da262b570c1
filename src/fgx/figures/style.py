"""Shared look of fgx figures: one colour per model, stable across figures."""

from __future__ import annotations

import seaborn as sns

MODEL_LABELS = {
    "stage1": "Stage-1 (RFT) base",
    "rl_level1": "RL Level 1",
    "rl_level2": "RL Level 2",
    "rl_level1to2": "RL Level 1+2",
}


def label(model: str) -> str:
    if model.startswith("rft_level2_iter"):
        return f"Iterative RFT L2, iter {model.removeprefix('rft_level2_iter')}"
    return MODEL_LABELS.get(model, model)


def palette(models) -> dict:
    fixed = list(MODEL_LABELS)
    colours = sns.color_palette("colorblind", n_colors=max(len(fixed), 4))
    out = {m: colours[i] for i, m in enumerate(fixed)}
    extra = [m for m in models if m not in out]
    greys = sns.color_palette("Greys", n_colors=len(extra) + 2)[2:] if extra else []
    out.update(dict(zip(extra, greys)))
    return out


def setup():
    sns.set_theme(style="whitegrid", context="paper")
