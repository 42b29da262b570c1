"""Paper Fig. 2: held-out accuracy per level over RL steps, one line per RL run."""

from __future__ import annotations

import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import finish_grid, label, level_grid, palette
from fgx.plan import paths
from fgx.plan.figures import FigureSpec
from fgx.plan.models import rl_metrics, rl_model_of_dir

COLUMNS = ["model", "step", "level", "accuracy", "source", "config_hash"]


def planned_inputs(config) -> list[str]:
    """The RL metrics of every run (rl.runs)."""
    return [rl_metrics(run) for run in config["rl"]["runs"]]


SPEC = FigureSpec(planned_inputs)


def table(inputs, settings) -> pd.DataFrame:
    frames = []
    for path in inputs:
        df = read_with_provenance(path, ("metric", "level", "step", "value"))
        df = df[(df["metric"] == "val_accuracy") & (df["level"] >= 1)].copy()
        df["model"] = rl_model_of_dir(paths.parse(paths.RL_METRICS, path)["rl_dir"])
        frames.append(df.rename(columns={"value": "accuracy"}))
    out = pd.concat(frames, ignore_index=True)
    return out[COLUMNS].sort_values(["model", "level", "step"]).reset_index(drop=True)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    levels = sorted(df["level"].unique())
    fig, panels = level_grid(levels)
    models = list(dict.fromkeys(df["model"]))
    colours = palette(models)
    for level, ax in panels.items():
        sub = df[df["level"] == level]
        for model in models:
            m = sub[sub["model"] == model]
            ax.plot(m["step"], 100 * m["accuracy"], marker="o", ms=2.5, color=colours[model], label=label(model))
        ax.set(title=f"Level {level}", ylim=(-2, 102), xlabel="RL step", ylabel="accuracy (%)")
    finish_grid(fig, panels, "Held-out accuracy during RL", pdf)
