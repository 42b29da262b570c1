"""Paper Fig. 5: pass@k versus k on every test level, Stage-1 base against the RL runs.

Two prompt sets: every test prompt, sampled ``evaluate.n`` times (k up to that, for every model;
``figures.passk_ks`` picks the k shown), and the first prompts of each level sampled
``evaluate.many_samples.n`` times (k up to that, for the pair the paper follows: the base and RL on
Level 1+2), drawn dashed."""

from __future__ import annotations

import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import finish_grid, label, level_grid, palette
from fgx.plan import paths
from fgx.plan.comparisons import passk_models
from fgx.plan.figures import PASSK_ALL_PROMPTS as ALL, PASSK_SUBSET_PROMPTS as SUBSET, FigureSpec
from fgx.plan.splits import TEST_MANY, many_samples_enabled

COLUMNS = ["model", "prompts", "level", "k", "pass_at_k", "ci_low", "ci_high", "n_prompts", "n_samples",
           "source", "config_hash"]
METRICS_INPUT = ("model", "level", "k", "pass_at_k", "ci_low", "ci_high")  # a metrics parquet


def planned_inputs(config) -> list[str]:
    """The metrics of every test prompt for each model, and of the many-samples subset for those of its
    models the figure draws."""
    models = passk_models(config)
    many = ([m for m in config["evaluate"]["many_samples"]["models"] if m in models]
            if many_samples_enabled(config) else [])
    return ([paths.fill(paths.METRICS, model=m, split="test") for m in models]
            + [paths.fill(paths.METRICS, model=m, split=TEST_MANY) for m in many])


SPEC = FigureSpec(planned_inputs, keys=("passk_ks", "passk_levels"))


def table(inputs, settings) -> pd.DataFrame:
    parts = []
    for p in inputs:
        df = read_with_provenance(p, METRICS_INPUT)
        df["prompts"] = SUBSET if paths.parse(paths.METRICS, p)["split"] == TEST_MANY else ALL
        parts.append(df)
    df = pd.concat(parts, ignore_index=True)
    levels = settings.get("passk_levels")
    ks = settings.get("passk_ks")
    if levels:
        df = df[df["level"].isin(levels)]
    if ks:  # the k shown for every test prompt; the subset shows every k it has
        df = df[(df["prompts"] == SUBSET) | df["k"].isin(ks)]
    return df[COLUMNS].sort_values(["prompts", "model", "level", "k"]).reset_index(drop=True)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    levels = sorted(df["level"].unique())
    fig, panels = level_grid(levels)
    models = list(dict.fromkeys(df["model"]))
    colours = palette(models)
    for level, ax in panels.items():
        sub = df[df["level"] == level]
        for prompts, style in ((ALL, "-"), (SUBSET, "--")):
            for model in models:
                m = sub[(sub["model"] == model) & (sub["prompts"] == prompts)].sort_values("k")
                if m.empty:
                    continue
                name = label(model) if prompts == ALL else f"{label(model)} ({m['n_prompts'].iloc[0]} prompts)"
                ax.plot(m["k"], 100 * m["pass_at_k"], style, marker="o", ms=2.5, color=colours[model], label=name)
                ax.fill_between(m["k"], 100 * m["ci_low"], 100 * m["ci_high"], color=colours[model], alpha=0.15,
                                lw=0)
        ax.set_xscale("log", base=2)
        ax.set(title=f"Level {level}", ylim=(-2, 102), xlabel="k", ylabel="pass@k (%)")
    finish_grid(fig, panels, "pass@k on held-out functions (dashed: a few prompts, many samples; bands: "
                             "bootstrap CI over prompts)", pdf)
