"""How RL changes behaviour over training: reward, held-out accuracy per level, response length and
the share of filtered (all-equal) groups per RL step, one line per RL run.

Inputs: RL metrics parquets ``results/rl/{run}/metrics.parquet`` (long format ``step, metric, level,
value``; level -1 = not per level). A metric a run does not log is simply absent from its panel;
panels exist for the (metric, level) pairs some run logs. Optional settings:
``dynamics_metrics`` (which metrics, in panel order) and ``dynamics_levels`` (levels of per-level
metrics to show; level -1 rows are always kept).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import label, palette, setup
from fgx.plan import paths
from fgx.plan.figures import FigureSpec
from fgx.plan.models import rl_metrics, rl_model_of_dir

METRICS = ("reward", "val_accuracy", "response_length", "filtered_group_share")
TITLES = {
    "reward": "mean reward",
    "val_accuracy": "held-out accuracy",
    "response_length": "response length (tokens)",
    "filtered_group_share": "filtered (all-equal) groups",
}
COLUMNS = ["model", "run", "step", "metric", "level", "value", "source", "config_hash"]


def planned_inputs(config) -> list[str]:
    """The RL metrics of every run (rl.runs)."""
    return [rl_metrics(run) for run in config["rl"]["runs"]]


SPEC = FigureSpec(planned_inputs)


def table(inputs, settings) -> pd.DataFrame:
    metrics = list(settings.get("dynamics_metrics") or METRICS)
    levels = settings.get("dynamics_levels")
    frames = []
    for path in inputs:
        df = read_with_provenance(path)
        missing = {"step", "metric", "level", "value"} - set(df.columns)
        if missing:
            raise ValueError(f"{path}: RL metrics parquet lacks columns {sorted(missing)}; it must be the long "
                             "format step, metric, level, value written during RL")
        df = df[df["metric"].isin(metrics)].copy()
        if levels:
            df = df[(df["level"] < 0) | df["level"].isin(levels)]
        run = paths.parse(paths.RL_METRICS, path)["rl_dir"]
        df["run"] = run
        df["model"] = rl_model_of_dir(run)
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True)[COLUMNS]
    out["level"] = out["level"].astype(int)
    order = {m: i for i, m in enumerate(metrics)}
    runs = {m: i for i, m in enumerate(dict.fromkeys(out["model"]))}
    out = out.assign(_m=out["metric"].map(order), _r=out["model"].map(runs))
    out = out.sort_values(["_m", "level", "_r", "step"], kind="stable").drop(columns=["_m", "_r"])
    return out.reset_index(drop=True)


def panels(df: pd.DataFrame) -> list[tuple[str, int]]:
    """(metric, level) pairs in table order."""
    return list(dict.fromkeys(zip(df["metric"], df["level"].astype(int))))


def _title(metric: str, level: int) -> str:
    base = TITLES.get(metric, metric)
    if level < 0:
        return base + (" (all levels)" if metric == "val_accuracy" else "")
    return f"{base}, Level {level}"


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt

    setup()
    keys = panels(df)
    ncols = min(4, max(1, len(keys)))
    nrows = max(1, math.ceil(len(keys) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.6 * nrows), squeeze=False)
    models = list(dict.fromkeys(df["model"]))
    colours = palette(models)
    for ax, (metric, level) in zip(axes.flat, keys):
        sub = df[(df["metric"] == metric) & (df["level"] == level)]
        for model in models:
            m = sub[sub["model"] == model].sort_values("step")
            if m.empty:
                continue
            ax.plot(m["step"], m["value"], marker="o" if len(m) < 30 else None, ms=2.5, lw=1.2,
                    color=colours[model], label=label(model))
        ax.set_title(_title(metric, level), fontsize=9)
        ax.set_xlabel("RL step")
        if metric in ("val_accuracy", "filtered_group_share"):
            ax.set_ylim(-0.02, 1.02)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    if not keys:
        axes.flat[0].set_visible(True)
        axes.flat[0].text(0.5, 0.5, "no RL metrics logged", ha="center", va="center",
                          transform=axes.flat[0].transAxes)
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if labels:
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False,
                   bbox_to_anchor=(0.5, -0.01))
    fig.suptitle("Training dynamics of the RL runs")
    fig.tight_layout(rect=(0, 0.06 if labels else 0, 1, 1))
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
