"""Paper Table 1 / Fig. 4: cross-task transfer to Countdown, Avg@k per number count and model.

Inputs: eval parquets ``results/eval/{model}/countdown{n}.parquet`` (one row per prompt with
``correct: list[bool]``, ``responses``, ``reward_model`` and ``level`` = the number count;
fgx.plan.paths.EVAL), and the Multi-Base's held-out 2-number check (its atomic skill).
Avg@k (the paper's Avg@32) is the mean over prompts of each prompt's mean correctness over its k
samples; the CI is a percentile bootstrap over prompts (``fgx.metrics.bootstrap_mean_ci``). The
table also says how the responses reason (``fgx.tasks.countdown.trace_stats``): step lines per
response, the share with two or more, the share of step lines computed right, and the share that
carry a computed value into a later step, which every chain of three or more numbers needs; and the tree
shape of the answers (``fgx.tasks.countdown.shapes``: one step, left / right / mixed chain, balanced, fewer
or more numbers than given, none): the share of the responses of each shape and the accuracy of each, so a
model that fails says where it stops.

Settings (all optional): ``bootstrap`` (resamples, default 1000), ``ci`` (default 0.95),
``bootstrap_seed`` (default 0), ``countdown_numbers`` (number counts to keep, default all).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import setup
from fgx.metrics import bootstrap_mean_ci
from fgx.plan import paths
from fgx.plan.figures import FigureSpec, bootstrap_settings
from fgx.plan.models import rl_model
from fgx.tasks.countdown import parse_ground_truth, trace_stats
from fgx.tasks.countdown.models import MULTI, MULTI_BASE
from fgx.tasks.countdown.shapes import SHAPES, shape_stats
from fgx.tasks.countdown.splits import ATOMIC_CHECK, test_split, test_splits

SHAPE_COLUMNS = [f"{shape}_{what}" for shape in SHAPES for what in ("share", "accuracy")]
COLUMNS = ["model", "numbers", "avg_at_k", "ci_low", "ci_high", "n_prompts", "n_samples", "steps",
           "multi_step", "step_right", "chained", *SHAPE_COLUMNS, "source", "config_hash"]
READS = ("correct", "level", "responses", "reward_model")

# The paper's four models, in its order (Table 1).
MODEL_LABELS = {
    "stage1_multi": "Multi-Base",  # the DAG's name (results/models/stage1_multi)
    "multi_base": "Multi-Base",
    "rl_multi_level1": "Multi-Base + RL L1",
    "rl_multi_level1to2": "Multi-Base + RL L1+2",
    "rl_level1to2": "String-Base + RL L1+2",
}


STRING_BASE_RUN = "level1to2"                # "String-Base + RL L1+2": the Section 4.1 model


def countdown_models(config) -> list[str]:
    """Paper Table 1's models, in its order: Multi-Base, Multi-Base + string RL (countdown.rl_runs),
    String-Base + RL L1+2. None of them ever gets Countdown RL."""
    return [MULTI_BASE, *(rl_model(run, MULTI.name) for run in MULTI.runs(config)), rl_model(STRING_BASE_RUN)]


def planned_inputs(config) -> list[str]:
    """Every Table-1 model on every Countdown test, and the Multi-Base on held-out 2-number problems
    (its atomic skill)."""
    return ([paths.fill(paths.EVAL, model=m, split=split) for m in countdown_models(config)
             for split in test_splits(config)]
            + [paths.fill(paths.EVAL, model=MULTI_BASE, split=test_split(ATOMIC_CHECK))])


def enabled(config) -> bool:
    """Whether the config asks for the transfer to Countdown (countdown.enabled)."""
    return config["countdown"]["enabled"]


SPEC = FigureSpec(planned_inputs, settings=bootstrap_settings, planned=enabled)


def label(model: str) -> str:
    return MODEL_LABELS.get(model, model)


def model_name(path) -> str:
    """The model an eval parquet belongs to."""
    return paths.parse(paths.EVAL, path)["model"]


def _model_order(models) -> list[str]:
    known = [m for m in MODEL_LABELS if m in set(models)]
    return known + [m for m in dict.fromkeys(models) if m not in MODEL_LABELS]


def table(inputs, settings) -> pd.DataFrame:
    settings = settings or {}
    resamples = int(settings.get("bootstrap", 1000))
    ci = float(settings.get("ci", 0.95))
    keep = settings.get("countdown_numbers")
    rng = np.random.default_rng(int(settings.get("bootstrap_seed", 0)))
    rows = []
    for path in inputs:
        df = read_with_provenance(path, READS)
        for col in READS:
            if col not in df.columns:
                raise ValueError(f"{path}: column {col!r} missing; this figure reads eval parquets "
                                 "(results/eval/{model}/countdown{n}.parquet) written by the evaluate rule")
        if df.empty:
            raise ValueError(f"{path}: no rows; re-run the Countdown evaluation that writes it")
        model = model_name(path)
        for numbers, sub in df.groupby("level", sort=True):
            if keep and int(numbers) not in keep:
                continue
            counts = sub["correct"].map(len).to_numpy()
            if counts.min() == 0:
                raise ValueError(f"{path}: a prompt with no samples in 'correct' (numbers={numbers})")
            per_prompt = sub["correct"].map(lambda xs: float(np.mean(np.asarray(xs, dtype=bool)))).to_numpy()
            lo, hi = bootstrap_mean_ci(per_prompt, resamples=resamples, ci=ci, rng=rng)
            stats = trace_stats((response, parse_ground_truth(rm["ground_truth"])[1])
                                for rm, responses in zip(sub["reward_model"], sub["responses"])
                                for response in responses)
            shapes = shape_stats(((response, bool(c)) for responses, correct in zip(sub["responses"], sub["correct"])
                                  for response, c in zip(responses, correct)), int(numbers))
            rows.append({"model": model, "numbers": int(numbers), "avg_at_k": float(per_prompt.mean()),
                         "ci_low": lo, "ci_high": hi, "n_prompts": int(len(sub)), "n_samples": int(counts.min()),
                         **stats, **shapes, "source": str(path), "config_hash": sub["config_hash"].iloc[0]})
    out = pd.DataFrame(rows, columns=COLUMNS)
    if out.duplicated(["model", "numbers"]).any():
        dup = out[out.duplicated(["model", "numbers"], keep=False)][["model", "numbers", "source"]]
        raise ValueError(f"more than one input for the same model and number count:\n{dup.to_string(index=False)}")
    order = {m: i for i, m in enumerate(_model_order(out["model"]))}
    out = out.assign(_o=out["model"].map(order)).sort_values(["_o", "numbers"]).drop(columns="_o")
    return out.reset_index(drop=True)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt
    import seaborn as sns

    setup()
    models = _model_order(df["model"])
    numbers = sorted(df["numbers"].unique())
    colours = dict(zip(models, sns.color_palette("colorblind", n_colors=max(len(models), 4))))
    width = 0.8 / max(1, len(models))
    fig, (ax, shape_ax) = plt.subplots(2, 1, sharex=True, figsize=(max(5.5, 1.6 * len(numbers) + 2.5), 6.4))
    x = np.arange(len(numbers))
    for i, model in enumerate(models):
        m = df[df["model"] == model].set_index("numbers").reindex(numbers)
        acc = 100 * m["avg_at_k"].to_numpy(dtype=float)
        err = 100 * np.vstack([m["avg_at_k"] - m["ci_low"], m["ci_high"] - m["avg_at_k"]]).astype(float)
        pos = x + (i - (len(models) - 1) / 2) * width
        ax.bar(pos, acc, width, yerr=np.clip(err, 0, None), capsize=2, color=colours[model], label=label(model))
        tops = 100 * m["ci_high"].to_numpy(dtype=float)
        for p, a, top in zip(pos, acc, tops):
            if np.isfinite(a):
                ax.text(p, max(a, top if np.isfinite(top) else a) + 0.5, f"{a:.1f}", ha="center",
                        va="bottom", fontsize=5.5)
    k = int(df["n_samples"].min()) if len(df) else 0
    ax.set_xticks(x, [f"{n} numbers" + ("\n(atomic skill)" if n == 2 else "") for n in numbers])
    ax.set_ylabel(f"Avg@{k} (%)")
    top = 100 * float(np.nanmax(df["ci_high"].to_numpy(dtype=float))) if len(df) else 0.0
    ax.set_ylim(0, min(100, max(10, 1.25 * top + 5)))
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Transfer to Countdown (no Countdown RL; error bars: bootstrap CI over prompts)", fontsize=8)
    draw_shapes(shape_ax, df, models, numbers, x, width)
    fig.tight_layout()
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)


def draw_shapes(ax, df: pd.DataFrame, models, numbers, x, width) -> None:
    """Each model's answers per number count as a stacked bar of tree shapes (in the models' order, as above),
    each shape's accuracy written in its segment where the segment is large enough to hold it."""
    import seaborn as sns

    colours = dict(zip(SHAPES, sns.color_palette("Set2", n_colors=len(SHAPES))))
    for i, model in enumerate(models):
        m = df[df["model"] == model].set_index("numbers").reindex(numbers)
        pos = x + (i - (len(models) - 1) / 2) * width
        bottom = np.zeros(len(numbers))
        for shape in SHAPES:
            share = 100 * m[f"{shape}_share"].fillna(0).to_numpy(dtype=float)
            ax.bar(pos, share, width * 0.95, bottom=bottom, color=colours[shape],
                   label=shape.replace("_", " ") if i == 0 else None)
            for p, b, h, acc in zip(pos, bottom, share, m[f"{shape}_accuracy"].to_numpy(dtype=float)):
                if h >= 8 and np.isfinite(acc):
                    ax.text(p, b + h / 2, f"{100 * acc:.0f}", ha="center", va="center", fontsize=5)
            bottom += share
    ax.set_ylabel("answers (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
    ax.set_title("Tree shape of the answers, bars in the models' order above (in a segment: its accuracy, %)",
                 fontsize=8)
